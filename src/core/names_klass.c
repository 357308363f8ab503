/* names_klass.c - js_names_klass (names.h): a class named from HotSpot's Klass, for features=vtable frames. */
#include "core/names.h"

#include <stdint.h>

#include "sample/safe_read.h"
#include "sample/vmlayout.h"

int js_names_klass(const void *klass, char *buf, size_t len)
{
    uintptr_t sym = 0;
    uint16_t n = 0;
    if (!klass || len < 2 || js_vm.klass_name < 0 || js_vm.sym_length < 0 || js_vm.sym_body < 0 ||
        js_safe_read((uintptr_t)klass + (uintptr_t)js_vm.klass_name, &sym, sizeof sym) != 0 || !sym ||
        js_safe_read(sym + (uintptr_t)js_vm.sym_length, &n, sizeof n) != 0 || n == 0 || n >= len ||
        js_safe_read(sym + (uintptr_t)js_vm.sym_body, buf, n) != 0)
        return -1;
    buf[n] = 0;
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)buf[i] < 0x20) return -1; /* not a class name: read from freed memory */
        if (buf[i] == '/') buf[i] = '.';
    }
    return 0;
}

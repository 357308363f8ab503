/* names_klass.c - js_names_klass, js_names_klass_internal (names.h): a class named from HotSpot's Klass, for
 * features=vtable frames and tlab allocation samples. */
#include "core/names.h"

#include <stdint.h>
#include <string.h>

#include "sample/safe_read.h"
#include "sample/vmlayout.h"

int js_names_klass_internal(const void *klass, char *buf, size_t len)
{
    uintptr_t sym = 0;
    uint16_t n = 0;
    if (!klass || len < 2 || js_vm.klass_name < 0 || js_vm.sym_length < 0 || js_vm.sym_body < 0 ||
        js_safe_read((uintptr_t)klass + (uintptr_t)js_vm.klass_name, &sym, sizeof sym) != 0 || !sym ||
        js_safe_read(sym + (uintptr_t)js_vm.sym_length, &n, sizeof n) != 0 || n == 0 || n >= len ||
        js_safe_read(sym + (uintptr_t)js_vm.sym_body, buf, n) != 0)
        return -1;
    buf[n] = 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)buf[i] < 0x20) return -1; /* not a class name: read from freed memory */
    return 0;
}

/* The Java name of an array's descriptor ("[B" -> "byte[]", "[[Ljava/lang/String;" -> "java.lang.String[][]")
 * into out; 0, or -1 if d is not one. */
static int array_name(const char *d, char *out, size_t len)
{
    static const char codes[] = "BCDFIJSZ";
    static const char *const names[] = {"byte", "char", "double", "float", "int", "long", "short", "boolean"};
    size_t dims = 0;
    while (d[dims] == '[') dims++;
    const char *e = d + dims, *base = NULL;
    size_t blen = 0;
    if (e[0] == 'L' && e[strlen(e) - 1] == ';') {
        base = e + 1;
        blen = strlen(e) - 2;
    } else if (e[0] && !e[1] && strchr(codes, e[0])) {
        base = names[strchr(codes, e[0]) - codes];
        blen = strlen(base);
    }
    if (!base || blen + 2 * dims + 1 > len) return -1;
    memcpy(out, base, blen);
    for (size_t i = 0; i < dims; i++) memcpy(out + blen + 2 * i, "[]", 2);
    out[blen + 2 * dims] = 0;
    return 0;
}

int js_names_klass(const void *klass, char *buf, size_t len)
{
    char raw[1024];
    if (js_names_klass_internal(klass, raw, sizeof raw) != 0) return -1;
    if (raw[0] == '[') {
        if (array_name(raw, buf, len) != 0) return -1;
    } else if (strlen(raw) < len) {
        memcpy(buf, raw, strlen(raw) + 1);
    } else {
        return -1;
    }
    for (char *p = buf; *p; p++)
        if (*p == '/') *p = '.';
    return 0;
}

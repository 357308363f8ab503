/* vmflags.c - see vmflags.h. */
#include "core/vmflags.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sample/vmlayout.h"

#define ORIGIN_MASK 0xf /* JVMFlag::_flags: the low bits say where the value came from, 0 = the default */

/* The JVMFlag entry named name, or 0. */
static uintptr_t find(const char *name)
{
    char why[256];
    if (!js_vm.ok && js_vmlayout_init(why, sizeof why) != 0) return 0;
    if (!js_vm.flags_addr || !js_vm.nflags_addr || js_vm.flag_name < 0 || js_vm.flag_addr < 0 || js_vm.flag_size <= 0)
        return 0;
    uintptr_t table = *(const uintptr_t *)js_vm.flags_addr;
    size_t n = *(const size_t *)js_vm.nflags_addr;
    for (size_t i = 0; table && i < n && i < 100000; i++) {
        uintptr_t f = table + i * (size_t)js_vm.flag_size;
        const char *fname = *(const char *const *)(f + (size_t)js_vm.flag_name);
        if (fname && strcmp(fname, name) == 0) return f;
    }
    return 0;
}

int js_vmflag_bool(const char *name, int *value)
{
    uintptr_t f = find(name);
    const uint8_t *addr = f ? *(const uint8_t *const *)(f + (size_t)js_vm.flag_addr) : NULL;
    if (!addr) return -1;
    *value = *addr != 0;
    return 0;
}

int js_vmflag_set_default(const char *name, int value)
{
    uintptr_t f = find(name);
    uint8_t *addr = f ? *(uint8_t *const *)(f + (size_t)js_vm.flag_addr) : NULL;
    if (!addr) return -1;
    if ((*addr != 0) == (value != 0)) return 0;
    if (js_vm.flag_flags >= 0 && (*(const int *)(f + (size_t)js_vm.flag_flags) & ORIGIN_MASK) != 0) return 0;
    *addr = (uint8_t)(value != 0);
    return 1;
}

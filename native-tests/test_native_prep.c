/* test_native_prep.c - cstack=dwarf's copies of the loaded objects' unwind data (src/core/native_prep.c) when a
 * library's program headers are crafted: the .eh_frame_hdr a PT_GNU_EH_FRAME header points at is read only when
 * it lies inside one of the library's loaded segments, so a header pointing elsewhere leaves the library without
 * unwind data instead of faulting in the JVM. The library is a copy of the system's zlib under another soname
 * with that one header changed, loaded with dlopen.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/native_prep.h"
#include "sample/native_objects.h"
#include "sample/native_walk.h"

/* The bytes of the system's zlib (loaded to find it), or NULL with *n 0. */
static uint8_t *zlib_bytes(size_t *n)
{
    *n = 0;
    void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL), *fn = h ? dlsym(h, "zlibVersion") : NULL;
    Dl_info di;
    if (!fn || !dladdr(fn, &di) || !di.dli_fname) return NULL;
    FILE *f = fopen(di.dli_fname, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    uint8_t *b = malloc(*n);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

/* A library whose PT_GNU_EH_FRAME points a gigabyte past its own address is loaded and prepared: no fault, and
 * its code has no unwind data; the libraries around it keep theirs. */
static void test_eh_frame_hdr_outside_segments(void **state)
{
    size_t n;
    uint8_t *b = zlib_bytes(&n);
    if (!b) skip();
    for (size_t i = 0; i + 9 <= n; i++) /* another soname: the loader maps it as a library of its own */
        if (memcmp(b + i, "libz.so.1", 9) == 0) b[i + 3] = 'P';
    Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
    Elf64_Phdr *ph = (Elf64_Phdr *)(b + eh->e_phoff);
    int found = 0;
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_GNU_EH_FRAME) ph[i].p_vaddr += 1ull << 30, ph[i].p_offset += 1ull << 30, found = 1;
    assert_true(found);
    char dir[] = "/tmp/jsampler-prep-XXXXXX", lib[600];
    assert_non_null(mkdtemp(dir));
    snprintf(lib, sizeof lib, "%s/libjsprep.so", dir);
    FILE *f = fopen(lib, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    free(b);
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    uintptr_t fn = (uintptr_t)dlsym(h, "zlibVersion");
    assert_true(fn != 0);
    char err[256] = "";
    assert_int_equal(js_native_prepare(&js_native_dwarf, err, sizeof err), 0);
    const js_nobj_table *t = js_nobj_enter();
    assert_non_null(t);
    const js_nobj *o = js_nobj_find(t, fn);
    assert_non_null(o);
    assert_true(o->eh_hdr == 0);
    const js_nobj *self = js_nobj_find(t, (uintptr_t)&test_eh_frame_hdr_outside_segments);
    assert_non_null(self);
    assert_true(self->eh_hdr != 0);
    js_nobj_leave(t);
    dlclose(h);
    unlink(lib);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eh_frame_hdr_outside_segments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_symbols.c - the ELF symbol reader (src/core/symbols.c) on crafted library files.
 *
 * A library's symbols are read from its file on disk the first time one of its addresses is named, so a file
 * replaced after loading (or crafted to begin with) must not take the reader outside the file: every offset
 * and size in the headers is checked without a sum that can wrap. The end-to-end case loads a copy of a real
 * library (the system's zlib), replaces the file under it with crafted bytes and names one of its
 * functions; the reader's entry point (symbols_int.h) is also fed crafted images directly.
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
#include <gnu/libc-version.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/core/symbols_int.h"
#include "core/symbols.h"
#include "core/codenames.h"

typedef struct {
    uint8_t *p;
    size_t n;
} image;

/* The bytes of the file at path. */
static image slurp(const char *path)
{
    image im = {0};
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    im.n = (size_t)ftell(f);
    rewind(f);
    im.p = malloc(im.n);
    assert_non_null(im.p);
    assert_int_equal(fread(im.p, 1, im.n, f), im.n);
    fclose(f);
    return im;
}

/* Writes im to path (replacing it by rename, as a package upgrade does: the loaded mapping stays). */
static void put_file(const char *path, const image *im)
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    FILE *f = fopen(tmp, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(im->p, 1, im->n, f), im->n);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rename(tmp, path), 0);
}

/* Path of the system's zlib (loaded for the purpose), or NULL. */
static const char *zlib_path(void)
{
    void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL), *fn = h ? dlsym(h, "zlibVersion") : NULL;
    Dl_info di;
    return fn && dladdr(fn, &di) && di.dli_fname ? di.dli_fname : NULL;
}

/* The section headers of an ELF64 image. */
static Elf64_Shdr *sections(image *im, int *n)
{
    Elf64_Ehdr *eh = (Elf64_Ehdr *)im->p;
    *n = eh->e_shnum;
    return (Elf64_Shdr *)(im->p + eh->e_shoff);
}

/* The ways a crafted image breaks the headers, each one a sum that wraps past 2^64 back inside the file. */
enum { WRAP_SYMTAB, WRAP_STRTAB, WRAP_SHOFF, MISALIGNED_SHOFF, NCRAFT };

/* A copy of good with one header field crafted. */
static image craft(const image *good, int how)
{
    image im = {malloc(good->n), good->n};
    assert_non_null(im.p);
    memcpy(im.p, good->p, good->n);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)im.p;
    int n;
    Elf64_Shdr *sh = sections(&im, &n);
    for (int i = 0; i < n; i++) {
        if (sh[i].sh_type != SHT_SYMTAB && sh[i].sh_type != SHT_DYNSYM) continue;
        Elf64_Shdr *t = how == WRAP_STRTAB ? &sh[sh[i].sh_link] : &sh[i];
        if (how == WRAP_SYMTAB || how == WRAP_STRTAB) {
            t->sh_offset = 0x8000000000000000ull; /* a non-canonical address if ever used */
            t->sh_size = 0x8000000000000000ull + 24;
        }
    }
    if (how == WRAP_SHOFF) eh->e_shoff = 0 - (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) + 64;
    if (how == MISALIGNED_SHOFF) { /* the headers moved one byte on: a misaligned read if used in place */
        memmove(im.p + eh->e_shoff + 1, im.p + eh->e_shoff, (size_t)eh->e_shnum * sizeof(Elf64_Shdr) - 1);
        eh->e_shoff += 1;
    }
    return im;
}

/* The entry point: a real library reads, every crafted variant of it is refused without reading outside it. */
/* Generated code outside every object is named as the VM named it: the narrowest region holding the pc (a stub
 * inside a larger blob), keyed by its start; outside every region, "[unknown_native]". */
static void test_generated_code_names(void **state)
{
    (void)state;
    uintptr_t heap = (uintptr_t)malloc(1 << 20); /* heap memory: in no loaded object */
    assert_true(heap != 0);
    js_codenames_clear();
    assert_int_equal(js_codenames_add(heap + 0x2000, 0x100, "itable stub"), 0);
    assert_int_equal(js_codenames_add(heap, 0x10000, "vtable chunks"), 0); /* added later, starts lower */
    assert_int_equal(js_codenames_add(heap + 0x1000, 0x40, "vtable stub"), 0);
    assert_int_equal(js_codenames_add(heap + 0x3000, 0, "empty"), -1);
    char buf[64];
    uintptr_t start = 0;
    assert_int_equal(js_codenames_find(heap + 0x1010, buf, sizeof buf, &start), 0);
    assert_string_equal(buf, "vtable stub");
    assert_true(start == heap + 0x1000);
    assert_int_equal(js_codenames_find(heap + 0x20ff, buf, sizeof buf, &start), 0);
    assert_string_equal(buf, "itable stub");
    assert_int_equal(js_codenames_find(heap + 0x2100, buf, sizeof buf, &start), 0); /* just past it */
    assert_string_equal(buf, "vtable chunks");
    assert_int_equal(js_codenames_find(heap + 0x10000, buf, sizeof buf, &start), -1);
    /* added after a lookup (sorted again), past the container: a wide region, and a stub after its end */
    assert_int_equal(js_codenames_add(heap + 0x30000, 0x20, "jint_arraycopy"), 0);
    assert_int_equal(js_codenames_add(heap + 0x20000, 0x8000, "Interpreter"), 0);
    assert_int_equal(js_codenames_find(heap + 0x30010, buf, sizeof buf, &start), 0);
    assert_string_equal(buf, "jint_arraycopy");
    assert_int_equal(js_codenames_find(heap + 0x27fff, buf, sizeof buf, &start), 0);
    assert_string_equal(buf, "Interpreter");
    assert_int_equal(js_codenames_find(heap + 0x28000, buf, sizeof buf, &start), -1);
    assert_int_equal(js_codenames_find(heap + 0x1010, buf, sizeof buf, &start), 0); /* the earlier ones still */
    assert_string_equal(buf, "vtable stub");
    assert_int_equal(js_codenames_find(heap - 1, buf, sizeof buf, &start), -1);

    js_symbol_info info;
    js_symbols_name(heap + 0x1020, buf, sizeof buf, &info); /* through the symbol namer */
    assert_string_equal(buf, "vtable stub");
    assert_true(info.start == heap + 0x1000 && !info.in_jvm && !info.kernel && !info.no_symbol);
    js_symbols_name(heap + 0x10008, buf, sizeof buf, &info);
    assert_string_equal(buf, "[unknown_native]");
    js_codenames_clear();
    assert_int_equal(js_codenames_find(heap + 0x1010, buf, sizeof buf, &start), -1);
    free((void *)heap);
}

static void test_crafted_images(void **state)
{
    const char *path = zlib_path();
    if (!path) skip();
    image good = slurp(path);
    js_symtab t;
    assert_int_equal(js_symtab_from_elf(good.p, good.n, 0x1000, &t), 0);
    int found = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (strcmp(t.names + t.syms[i].name, "zlibVersion") == 0) found = 1;
        if (i) assert_true(t.syms[i - 1].addr <= t.syms[i].addr);
    }
    assert_true(found);
    js_symtab_free(&t);
    for (int how = 0; how < NCRAFT; how++) {
        image bad = craft(&good, how);
        uint8_t *exact = malloc(bad.n); /* an exact-size copy: ASan sees any read past it */
        memcpy(exact, bad.p, bad.n);
        assert_int_equal(js_symtab_from_elf(exact, bad.n, 0x1000, &t), -1);
        free(exact);
        free(bad.p);
    }
    assert_int_equal(js_symtab_from_elf(good.p, 10, 0, &t), -1); /* shorter than a header */
    free(good.p);
}

/* End to end: a loaded library whose file is replaced by crafted bytes is named by its file name, never read
 * outside the file; with its real bytes back, its function is named again. */
static void test_replaced_library(void **state)
{
    const char *path = zlib_path();
    if (!path) skip();
    image good = slurp(path);
    /* a copy under another soname, so the loader maps it as a library of its own */
    for (size_t i = 0; i + 9 <= good.n; i++)
        if (memcmp(good.p + i, "libz.so.1", 9) == 0) good.p[i + 3] = 'Q';
    char dir[] = "/tmp/jsampler-symbols-XXXXXX", lib[600];
    assert_non_null(mkdtemp(dir));
    snprintf(lib, sizeof lib, "%s/libjsfz.so", dir);
    put_file(lib, &good);
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    uintptr_t fn = (uintptr_t)dlsym(h, "zlibVersion");
    assert_true(fn != 0);
    char name[256];
    for (int how = 0; how < NCRAFT; how++) {
        image bad = craft(&good, how);
        put_file(lib, &bad);
        js_symbols_clear();
        js_symbols_name(fn, name, sizeof name, NULL);
        assert_string_equal(name, "[libjsfz.so]");
        free(bad.p);
    }
    put_file(lib, &good);
    js_symbols_clear();
    js_symbols_name(fn, name, sizeof name, NULL);
    assert_string_equal(name, "zlibVersion");
    js_symbols_clear();
    dlclose(h);
    unlink(lib);
    rmdir(dir);
    free(good.p);
}

/* /proc/kallsyms lines: text symbols kept and sorted, the rest and malformed lines skipped. */
/* C++ names lose their parameter list (the last balanced group, and what follows it), as async-profiler writes
 * them; other names stay; and a function of this process is found by its symbol name. */
static void test_cut_arguments_and_lookup(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)",
         "JavaCalls::call_helper"},
        {"Foo::bar(int) const", "Foo::bar"},
        {"Foo::operator()(int)", "Foo::operator()"},
        {"f(g(x), h(y))", "f"},
        {"plain_c", "plain_c"},
        {"a)", "a)"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", cases[i][0]);
        js_symbols_cut_arguments(buf);
        assert_string_equal(buf, cases[i][1]);
    }
    const char *zp = zlib_path();
    if (!zp) return;
    void *h = dlopen(zp, RTLD_NOW | RTLD_LOCAL), *fn = dlsym(h, "zlibVersion"), *other = dlsym(h, "deflate");
    assert_non_null(fn);
    assert_int_equal(js_symbols_lookup((uintptr_t)other, "zlibVersion"), (uintptr_t)fn);
    assert_int_equal(js_symbols_lookup((uintptr_t)other, "no_such_function_here"), 0);
}

/* js_symbols_find: a C function by its ELF name, a C++ one by its demangled name without parameters (libstdc++'s
 * std::terminate(), mangled _ZSt9terminatev), each at the address the dynamic linker gives; unknown names: 0. */
static void test_find_by_name(void **state)
{
    (void)state;
    const char *zp = zlib_path();
    if (zp) {
        void *h = dlopen(zp, RTLD_NOW | RTLD_LOCAL);
        assert_non_null(h);
        assert_int_equal(js_symbols_find("deflateEnd"), (uintptr_t)dlsym(h, "deflateEnd"));
    }
    void *cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
    if (cxx) {
        assert_int_equal(js_symbols_find("std::terminate"), (uintptr_t)dlsym(cxx, "_ZSt9terminatev"));
        assert_int_equal(js_symbols_find("_ZSt9terminatev"), (uintptr_t)dlsym(cxx, "_ZSt9terminatev"));
    }
    assert_int_equal(js_symbols_find("no_such_function_here"), 0);
    assert_int_equal(js_symbols_find("std::no_such_function_here"), 0);
}

/* A library without .symtab names its separate debug file by build id (libc's, as readelf -n gives it); where that
 * file is installed (Debian's libc6-dbg), libc's internal functions are named from it: start_thread, which its
 * .dynsym lacks, is found, and aliases at one address are named by the plainest (not "__GI___clone3"). */
static void test_debug_file_names(void **state)
{
    (void)state;
    Dl_info info; /* libc itself: a function of it that no sanitizer runtime intercepts */
    if (!dladdr((void *)gnu_get_libc_version, &info) || !info.dli_fname) skip();
    FILE *f = fopen(info.dli_fname, "rb");
    assert_non_null(f);
    static uint8_t img[16 << 20];
    size_t n = fread(img, 1, sizeof img, f);
    fclose(f);
    char id[130], link[256];
    assert_int_equal(js_elf_debug_ref(img, n, id, sizeof id, link, sizeof link), 0);
    assert_int_equal(strlen(id), 40);
    char path[256];
    snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
    if (access(path, R_OK) != 0) {
        print_message("no %s (libc6-dbg): internal names not checked\n", path);
        return;
    }
    uintptr_t at = js_symbols_find("start_thread");
    assert_true(at != 0);
    char name[256];
    js_symbols_name(at, name, sizeof name, NULL);
    assert_string_equal(name, "start_thread");
    uintptr_t clone = js_symbols_find("__GI___clone3");
    if (clone) {
        js_symbols_name(clone, name, sizeof name, NULL);
        assert_null(strstr(name, "__GI_"));
    }
}

static void test_kallsyms(void **state)
{
    static const char text[] = "ffffffff81000000 T _stext\n"
                               "ffffffff81000100 t helper [mod]\n"
                               "0000000000000000 T zero_address\n"
                               "ffffffff82000000 D some_data\n"
                               "not a line\n"
                               "ffffffff80000000 T first\n";
    FILE *f = fmemopen((void *)text, sizeof text - 1, "r");
    assert_non_null(f);
    js_symtab t;
    assert_int_equal(js_symtab_from_kallsyms(f, &t), 0);
    fclose(f);
    assert_int_equal(t.n, 3);
    assert_string_equal(t.names + t.syms[0].name, "first");
    assert_string_equal(t.names + t.syms[1].name, "_stext");
    assert_string_equal(t.names + t.syms[2].name, "helper");
    js_symtab_free(&t);
}

typedef struct {
    uintptr_t addr;
    char name[256];
} ref_sym;

static int by_addr_name(const void *a, const void *b)
{
    const ref_sym *x = a, *y = b;
    return x->addr != y->addr ? (x->addr < y->addr ? -1 : 1) : strcmp(x->name, y->name);
}

/* The line reader keeps what sscanf("%llx %c %255s") kept, on this machine's /proc/kallsyms (120,000 lines here:
 * symbols of modules, tabs, every type) and on lines made to differ: a 0x prefix, tabs, a name cut at 255. */
static void test_kallsyms_as_sscanf_reads_it(void **state)
{
    (void)state;
    char long_line[400];
    memset(long_line, 'n', sizeof long_line);
    memcpy(long_line, "ffffffff81000300 T ", 19);
    long_line[sizeof long_line - 2] = '\n';
    long_line[sizeof long_line - 1] = '\0';
    char made[1024];
    snprintf(made, sizeof made, "0xffffffff81000200 t with_prefix\n  ffffffff81000400\tT\ttabs\t[mod]\n"
             "ffffffff81000500 T\n%s", long_line);
    for (int pass = 0; pass < 2; pass++) {
        FILE *f = pass ? fopen("/proc/kallsyms", "re") : fmemopen(made, strlen(made), "r");
        if (!f) {
            printf("  /proc/kallsyms cannot be read here: only the made lines are compared\n");
            continue;
        }
        size_t cap = 1024, n = 0;
        ref_sym *ref = malloc(cap * sizeof *ref);
        assert_non_null(ref);
        char line[512];
        while (fgets(line, sizeof line, f)) {
            unsigned long long a;
            char type;
            if (n == cap) assert_non_null(ref = realloc(ref, (cap *= 2) * sizeof *ref));
            if (sscanf(line, "%llx %c %255s", &a, &type, ref[n].name) != 3 || !a || (type != 't' && type != 'T'))
                continue;
            ref[n++].addr = (uintptr_t)a;
        }
        rewind(f);
        js_symtab t;
        assert_int_equal(js_symtab_from_kallsyms(f, &t), 0);
        fclose(f);
        assert_int_equal(t.n, n);
        ref_sym *got = malloc((n ? n : 1) * sizeof *got);
        assert_non_null(got);
        for (size_t i = 0; i < n; i++) {
            assert_true(i == 0 || t.syms[i - 1].addr <= t.syms[i].addr);
            got[i].addr = t.syms[i].addr;
            snprintf(got[i].name, sizeof got[i].name, "%s", t.names + t.syms[i].name);
        }
        qsort(ref, n, sizeof *ref, by_addr_name);
        qsort(got, n, sizeof *got, by_addr_name);
        for (size_t i = 0; i < n; i++) {
            assert_true(ref[i].addr == got[i].addr);
            assert_string_equal(ref[i].name, got[i].name);
        }
        if (pass == 0) assert_int_equal(n, 3); /* the prefix, the tabs, the long name (cut to 255) */
        else printf("  /proc/kallsyms: %zu text symbols, as sscanf reads them\n", n);
        free(ref);
        free(got);
        js_symtab_free(&t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_code_names),
        cmocka_unit_test(test_crafted_images),
        cmocka_unit_test(test_replaced_library),
        cmocka_unit_test(test_kallsyms),
        cmocka_unit_test(test_kallsyms_as_sscanf_reads_it),
        cmocka_unit_test(test_cut_arguments_and_lookup),
        cmocka_unit_test(test_find_by_name),
        cmocka_unit_test(test_debug_file_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

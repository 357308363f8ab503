/* fuzz_elf.c - libFuzzer target for the symbol readers (src/core/symbols.c; docs/FUZZING.md): the ELF image of a
 * library (its file is read again on disk the first time one of its addresses is named, so it may have been
 * replaced or crafted) and the text of /proc/kallsyms.
 *
 * Each input is read both as an ELF image (js_symtab_from_elf) and as kallsyms text (js_symtab_from_kallsyms).
 * Invariants beyond the sanitizers (which catch any read outside the image): a table read is sorted by address,
 * every name is terminated within the cap, and a lookup of each symbol's first and last byte, and of a few
 * other addresses, finds a symbol that contains the address or none.
 * Seeds: native-tests/fuzz-corpus/elf, small shared objects built for the purpose (with and without .symtab).
 */
#include "fuzz_util.h"

#include "../src/core/symbols_int.h"

/* The checks on a table read. */
static void check_table(const js_symtab *t, const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < t->n; i++) {
        const js_sym *s = &t->syms[i];
        FZ_CHECK(i == 0 || t->syms[i - 1].addr <= s->addr, "symbols out of order at %zu", i);
        FZ_CHECK(strnlen(t->names + s->name, 1025) <= 1024, "name of symbol %zu too long", i);
    }
    size_t probes = t->n < 64 ? t->n : 64;
    for (size_t i = 0; i < probes; i++) {
        const js_sym *s = &t->syms[i * (t->n / probes)];
        uintptr_t pcs[3] = {s->addr, s->addr + (s->size ? s->size - 1 : 0), s->addr + s->size};
        for (int k = 0; k < 3; k++) {
            const js_sym *f = js_symtab_find(t, pcs[k]);
            FZ_CHECK(!f || (pcs[k] >= f->addr && pcs[k] - f->addr < (f->size ? f->size : 1)),
                     "lookup of %#lx gave a symbol that does not hold it", (unsigned long)pcs[k]);
        }
    }
    uintptr_t pc = 0;
    memcpy(&pc, data, size < sizeof pc ? size : sizeof pc);
    const js_sym *f = js_symtab_find(t, pc);
    FZ_CHECK(!f || (pc >= f->addr && pc - f->addr < (f->size ? f->size : 1)), "lookup of %#lx", (unsigned long)pc);
}

/* libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    js_symtab t;
    if (js_symtab_from_elf(data, size, 0x7f0000000000ull, &t) == 0) check_table(&t, data, size);
    char id[130], link[256]; /* the separate debug file it names: strings that fit, a build id in hex */
    int has = js_elf_debug_ref(data, size, id, sizeof id, link, sizeof link);
    FZ_CHECK(has >= -1 && has <= 1 && strlen(id) < sizeof id && strlen(link) < sizeof link && !strchr(link, '/') &&
             strspn(id, "0123456789abcdef") == strlen(id), "debug ref %d '%s' '%s'", has, id, link);
    js_symtab_free(&t);
    FILE *f = size ? fmemopen((void *)data, size, "r") : NULL;
    if (f) {
        FZ_CHECK(js_symtab_from_kallsyms(f, &t) == 0, "kallsyms");
        fclose(f);
        for (size_t i = 0; i < t.n; i++) FZ_CHECK(t.syms[i].addr != 0, "a zero address kept");
        check_table(&t, data, size);
        js_symtab_free(&t);
    }
    return 0;
}

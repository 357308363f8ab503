/* symbols_int.h - internal to symbols.c: the symbol table readers, on bytes already read, so tests and the
 * fuzzing targets can feed them any file. symbols.h is the contract. */
#ifndef JS_SYMBOLS_INT_H
#define JS_SYMBOLS_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    uintptr_t addr; /* runtime address */
    uint32_t size;  /* bytes (0: unknown) */
    uint32_t name;  /* offset into the table's names */
} js_sym;

/* Symbols sorted by address, their names NUL-terminated in one buffer. */
typedef struct {
    js_sym *syms;
    size_t n;
    char *names;
} js_symtab;

/* The function symbols of an ELF64 image of fsize bytes (.symtab, else .dynsym), at bias + their value; every
 * offset and size is checked against fsize (and the tables' alignment) before it is used, names are cut at 1024
 * bytes and 64 MiB of them at most are kept. 0, or -1 (not an ELF64 image with a symbol table, or no memory). */
int js_symtab_from_elf(const uint8_t *f, size_t fsize, uintptr_t bias, js_symtab *t);
/* What ELF image f says of its separate debug file, when it has no .symtab of its own: its build id in hex
 * (NT_GNU_BUILD_ID, "" if none) and its .gnu_debuglink file name ("" if none). 1 if f has a .symtab (both left ""),
 * 0 if not, -1 if f is not an ELF image we read. */
int js_elf_debug_ref(const uint8_t *f, size_t fsize, char *build_id, size_t idlen, char *link, size_t linklen);
/* The text symbols ('t', 'T') of a /proc/kallsyms stream with a non-zero address. 0. */
int js_symtab_from_kallsyms(FILE *f, js_symtab *t);
/* The symbol of t containing pc (a size of 0 counts as 1 byte), or NULL. */
const js_sym *js_symtab_find(const js_symtab *t, uintptr_t pc);
/* Frees t's memory and empties it. */
void js_symtab_free(js_symtab *t);

#endif

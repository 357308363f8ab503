/* native_objects.h - the loaded ELF objects and copies of their unwind tables, for walks inside a signal handler.
 *
 * glibc's dl_iterate_phdr takes the loader's lock, so a handler that interrupted dlopen must never call it; and a
 * library may be unloaded (dlclose) while a handler reads its tables. So, outside any handler, when sampling
 * starts and whenever the loader's count of loads and unloads moves, a table is built of every loaded object's
 * executable range and a private copy of its .eh_frame_hdr and .eh_frame (made while the loader's lock holds the
 * object in place: core/native_prep.c), and published here by one index. A handler reads unwind data from the
 * copies, by the addresses the object had, so an object unloaded meanwhile costs nothing worse than a stale frame.
 * A handler enters the current table, counted, and leaves it; a replaced table is freed only once no handler is
 * inside it.
 */
#ifndef JS_NATIVE_OBJECTS_H
#define JS_NATIVE_OBJECTS_H

#include <stddef.h>
#include <stdint.h>

/* One loaded object's executable segment. */
typedef struct {
    uintptr_t text_lo, text_hi; /* its executable code [lo, hi) */
    uintptr_t eh_hdr;           /* .eh_frame_hdr's address in the object (the table's data-relative base); 0: none */
    uintptr_t eh_table;         /* the sorted (start pc, FDE) pairs in it, 8 bytes each; 0 if unusable */
    uint32_t fde_count;         /* pairs in eh_table */
} js_nobj;

/* A range of an object's memory [lo, hi) and its private copy. */
typedef struct {
    uintptr_t lo, hi;
    unsigned char *copy;
} js_nobj_shadow;

/* A table, built outside any handler (core/native_prep.c) and read-only once published. */
typedef struct js_nobj_table {
    int slot;              /* which of the two slots holds it (set by js_nobj_publish) */
    int n;                 /* executable segments */
    js_nobj *obj;          /* sorted by text_lo */
    int nsh;               /* copied ranges */
    js_nobj_shadow *sh;    /* sorted by lo */
    size_t copied;         /* bytes in the copies */
} js_nobj_table;

/* Not signal-safe (one caller at a time). Make t the current table: 0 and *evicted = the table it displaced from
 * its slot (no handler is inside that one: the caller frees it; NULL if none), or -1 if a handler still walks the
 * table t would displace (try again later). */
int js_nobj_publish(js_nobj_table *t, js_nobj_table **evicted);

/* Signal-safe. Enter the current table (NULL before the first js_nobj_publish); pair with js_nobj_leave. */
const js_nobj_table *js_nobj_enter(void);

/* Signal-safe. Leave a table entered with js_nobj_enter (NULL is ignored). */
void js_nobj_leave(const js_nobj_table *t);

/* Signal-safe. The executable segment holding pc, or NULL. */
const js_nobj *js_nobj_find(const js_nobj_table *t, uintptr_t pc);

/* Signal-safe. Where the table's copy holds the n bytes the object had at addr, or NULL. shadow (if not NULL) gets
 * the copied range [lo, hi) of the object and the copy's offset from it (copy = addr + off): the next read nearby
 * need not search. */
const void *js_nobj_copy_of(const js_nobj_table *t, uintptr_t addr, size_t n, uintptr_t shadow[3]);

/* Signal-safe. Executable segments in the current table: with an unwind table, in all; bytes of unwind data
 * copied. */
void js_nobj_counts(int *with_unwind, int *all, size_t *copied);

#endif

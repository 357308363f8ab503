/* native_prep.c - see native_prep.h. */
#include "core/native_prep.h"

#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#define MAX_SEGMENTS 8192    /* executable segments kept in one table */
#define MAX_COPY (64u << 20) /* unwind data copied from one object at most */
#define EH_TABLE_ENC 0x3b    /* DW_EH_PE_datarel | DW_EH_PE_sdata4: the only search-table encoding used */

/* A table being built, with its capacities. */
typedef struct {
    js_nobj_table *t;
    int cap, shcap;
    int failed; /* out of memory */
} builder;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* one builder at a time (arming, housekeeper) */
static unsigned long long seen_adds, seen_subs;          /* the loader's counts at the last build, under lock */
static int built;                                        /* a table was published, under lock */
static char unusable[256]; /* why libunwind cannot serve this process ("" if it can), set once under lock */
static int space_made;     /* under lock */

/* Read a value of the given DWARF pointer encoding at *p (advanced): 0, or -1 for encodings not used here. */
static int read_encoded(const uint8_t **p, uint8_t enc, uintptr_t *out)
{
    const uint8_t *at = *p;
    int64_t v;
    switch (enc & 0x0f) {
    case 0x00: case 0x04: { uint64_t u; memcpy(&u, at, 8); v = (int64_t)u; *p += 8; break; }
    case 0x0c: memcpy(&v, at, 8); *p += 8; break;
    case 0x03: { uint32_t u; memcpy(&u, at, 4); v = u; *p += 4; break; }
    case 0x0b: { int32_t s; memcpy(&s, at, 4); v = s; *p += 4; break; }
    case 0x02: { uint16_t u; memcpy(&u, at, 2); v = u; *p += 2; break; }
    case 0x0a: { int16_t s; memcpy(&s, at, 2); v = s; *p += 2; break; }
    default: return -1;
    }
    if ((enc & 0x70) == 0x10) v += (int64_t)(uintptr_t)at; /* pc-relative */
    else if ((enc & 0x70) != 0) return -1;
    *out = (uintptr_t)v;
    return 0;
}

/* The search table, its length and .eh_frame of the .eh_frame_hdr at hdr (mapped: the loader's lock is held):
 * 0, or -1 if unusable. */
static int parse_eh_hdr(uintptr_t hdr, uintptr_t *table, uint32_t *count, uintptr_t *eh_frame)
{
    const uint8_t *p = (const uint8_t *)hdr;
    if (p[0] != 1 || p[1] == 0xff || p[2] == 0xff || p[3] != EH_TABLE_ENC) return -1;
    uint8_t ptr_enc = p[1], count_enc = p[2];
    p += 4;
    uintptr_t n;
    if (read_encoded(&p, ptr_enc, eh_frame) != 0 || read_encoded(&p, count_enc, &n) != 0) return -1;
    if (n == 0 || n > UINT32_MAX) return -1;
    *table = (uintptr_t)p;
    *count = (uint32_t)n;
    return 0;
}

/* Copy [lo, hi) of a mapped object into b: 0, or -1 (b->failed set when out of memory). */
static int add_copy(builder *b, uintptr_t lo, uintptr_t hi)
{
    if (hi <= lo || hi - lo > MAX_COPY) return -1;
    if (b->t->nsh == b->shcap) {
        int cap = b->shcap ? 2 * b->shcap : 64;
        js_nobj_shadow *v = realloc(b->t->sh, (size_t)cap * sizeof *v);
        if (!v) return b->failed = 1, -1;
        b->t->sh = v, b->shcap = cap;
    }
    unsigned char *c = malloc(hi - lo);
    if (!c) return b->failed = 1, -1;
    memcpy(c, (const void *)lo, hi - lo);
    b->t->sh[b->t->nsh++] = (js_nobj_shadow){lo, hi, c};
    b->t->copied += hi - lo;
    return 0;
}

static int add_segment(builder *b, js_nobj o)
{
    if (b->t->n == b->cap) {
        if (b->cap >= MAX_SEGMENTS) return -1;
        int cap = b->cap ? 2 * b->cap : 64;
        js_nobj *v = realloc(b->t->obj, (size_t)cap * sizeof *v);
        if (!v) return b->failed = 1, -1;
        b->t->obj = v, b->cap = cap;
    }
    b->t->obj[b->t->n++] = o;
    return 0;
}

/* The end of the loaded segment of info holding addr, or 0. */
static uintptr_t segment_end(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && addr >= lo && addr < lo + ph->p_memsz) return lo + ph->p_memsz;
    }
    return 0;
}

/* The end of .eh_frame starting at p, its records followed by their length fields up to the zero terminator; at
 * most seg_end (mapped: the loader's lock is held). */
static uintptr_t eh_frame_end(uintptr_t p, uintptr_t seg_end)
{
    while (p + 4 <= seg_end) {
        uint32_t len;
        memcpy(&len, (const void *)p, 4);
        if (len == 0) return p + 4; /* the terminator */
        uint64_t n = len;
        uintptr_t body = p + 4;
        if (len == 0xffffffffu) { /* 64-bit DWARF: the length follows */
            if (p + 12 > seg_end) break;
            memcpy(&n, (const void *)(p + 4), 8);
            body = p + 12;
        }
        if (n > seg_end - body) break;
        p = body + n;
    }
    return seg_end;
}

/* Copy one object's unwind data (.eh_frame_hdr, .eh_frame): 0, or -1 if it has none usable. */
static int copy_unwind(builder *b, const struct dl_phdr_info *info, js_nobj *o)
{
    uintptr_t hdr = 0, hdr_size = 0, eh_frame, table;
    uint32_t count;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_EH_FRAME) hdr = info->dlpi_addr + ph->p_vaddr, hdr_size = ph->p_memsz;
    }
    /* the header read only once it lies inside a loaded segment: a crafted library may point it anywhere */
    uintptr_t hdr_end = hdr ? segment_end(info, hdr) : 0;
    if (!hdr_end || hdr_size < 20 || hdr_size > hdr_end - hdr || parse_eh_hdr(hdr, &table, &count, &eh_frame) != 0)
        return -1;
    if (table - hdr > hdr_size || (uint64_t)count * 8 > hdr_size - (table - hdr)) return -1;
    uintptr_t seg_end = segment_end(info, eh_frame);
    if (!seg_end) return -1;
    uintptr_t eh_end = eh_frame_end(eh_frame, seg_end);
    /* libunwind reads whole aligned words: copies start and end on 8-byte bounds (still inside their pages) */
    uintptr_t h_lo = hdr & ~(uintptr_t)7, h_hi = (hdr + hdr_size + 7) & ~(uintptr_t)7;
    uintptr_t e_lo = eh_frame & ~(uintptr_t)7, e_hi = (eh_end + 7) & ~(uintptr_t)7;
    int rc;
    if (hdr_end == seg_end && h_lo <= e_hi && e_lo <= h_hi) /* the usual layout, side by side: one copy */
        rc = add_copy(b, h_lo < e_lo ? h_lo : e_lo, h_hi > e_hi ? h_hi : e_hi);
    else
        rc = add_copy(b, h_lo, h_hi) == 0 && add_copy(b, e_lo, e_hi) == 0 ? 0 : -1;
    if (rc == 0) o->eh_hdr = hdr, o->eh_table = table, o->fde_count = count;
    return rc;
}

/* dl_iterate_phdr callback: add one object to the table (the loader's lock keeps it mapped meanwhile). */
static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    builder *b = data;
    js_nobj unwind = {0, 0, 0, 0, 0};
    int has_exec = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        has_exec |= info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X);
    if (has_exec) copy_unwind(b, info, &unwind); /* without usable tables, walks stop at its code */
    for (int i = 0; i < info->dlpi_phnum && !b->failed; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        js_nobj o = unwind;
        o.text_lo = info->dlpi_addr + ph->p_vaddr;
        o.text_hi = o.text_lo + ph->p_memsz;
        if (add_segment(b, o) != 0) break;
    }
    return b->failed;
}

static int by_text(const void *a, const void *b)
{
    uintptr_t x = ((const js_nobj *)a)->text_lo, y = ((const js_nobj *)b)->text_lo;
    return x < y ? -1 : x > y;
}

static int by_lo(const void *a, const void *b)
{
    uintptr_t x = ((const js_nobj_shadow *)a)->lo, y = ((const js_nobj_shadow *)b)->lo;
    return x < y ? -1 : x > y;
}

void js_native_free_table(js_nobj_table *t)
{
    if (!t) return;
    for (int i = 0; i < t->nsh; i++) free(t->sh[i].copy);
    free(t->sh);
    free(t->obj);
    free(t);
}

/* dl_iterate_phdr callback: the loader's load and unload counts, from the first object. */
static int counts_of(struct dl_phdr_info *info, size_t size, void *data)
{
    unsigned long long *c = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c[0] = info->dlpi_adds;
        c[1] = info->dlpi_subs;
    }
    return 1;
}

/* Under lock: build and publish a table if the loaded objects changed: 0, or -1 with why. */
static int refresh_objects(char *err, size_t errlen)
{
    unsigned long long c[2] = {0, 0};
    dl_iterate_phdr(counts_of, c);
    if (built && c[0] == seen_adds && c[1] == seen_subs) return 0;
    builder b = {calloc(1, sizeof(js_nobj_table)), 0, 0, 0};
    if (b.t) dl_iterate_phdr(collect, &b);
    if (!b.t || b.failed) {
        js_native_free_table(b.t);
        snprintf(err, errlen, "cstack=dwarf: out of memory for the unwind tables of the loaded objects");
        return -1;
    }
    qsort(b.t->obj, (size_t)b.t->n, sizeof *b.t->obj, by_text);
    qsort(b.t->sh, (size_t)b.t->nsh, sizeof *b.t->sh, by_lo);
    js_nobj_table *evicted = NULL;
    if (js_nobj_publish(b.t, &evicted) != 0) { /* a handler still walks the table before the current one */
        js_native_free_table(b.t);
        return 0; /* next time */
    }
    js_native_free_table(evicted);
    seen_adds = c[0], seen_subs = c[1];
    built = 1;
    return 0;
}

/* Walk this thread from here: libunwind initialises itself outside any handler, and tables it cannot use are
 * found before sampling starts. 0, or -1 with why. */
__attribute__((noinline)) static int self_test(char *err, size_t errlen)
{
    static ucontext_t uc; /* under lock */
    if (getcontext(&uc) != 0) {
        snprintf(err, errlen, "cstack=dwarf: getcontext failed");
        return -1;
    }
    js_raw_frame f[8];
    int in_java, n = js_native_dwarf.walk(&uc, f, 8, &in_java);
    if (n < 3) {
        snprintf(err, errlen, "cstack=dwarf: libunwind walked %d frame(s) of the agent's own stack; use cstack=fp", n);
        return -1;
    }
    return 0;
}

/* Under lock, once: libunwind's address space for the dwarf walker (unusable[] says why not). */
static void make_space(void)
{
    space_made = 1;
    unw_addr_space_t as = unw_create_addr_space(js_native_dwarf_accessors(), 0);
    if (!as || unw_set_caching_policy(as, UNW_CACHE_NONE) != 0) { /* libunwind's caches take locks */
        snprintf(unusable, sizeof unusable, "cstack=dwarf: libunwind could not make an address space");
        return;
    }
    js_native_dwarf_use(as); /* kept for the process's life: a handler may use it at any time */
    if (self_test(unusable, sizeof unusable) != 0) js_native_dwarf_use(NULL);
}

int js_native_prepare(const js_native_walker *w, char *err, size_t errlen)
{
    if (w != &js_native_dwarf) return 0;
    pthread_mutex_lock(&lock);
    int rc = refresh_objects(err, errlen);
    if (rc == 0 && !space_made) make_space();
    if (rc == 0 && unusable[0]) {
        snprintf(err, errlen, "%s", unusable);
        rc = -1;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* pprof_read_int.h - the pprof reader's state, shared by its two files: pprof_read.c (the input stream, the
 * top-level fields, the tables and the sample aggregates) and pprof_read_resolve.c (the aggregates resolved into
 * a js_profile). */
#ifndef JS_PPROF_READ_INT_H
#define JS_PPROF_READ_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

#include "output/pprof.h"
#include "output/profile.h"

#define JS_PPROFR_MAX_LABELS 8          /* labels of a sample kept (with threads) */
#define JS_PPROFR_MAX_IDS (32u << 20)   /* location ids of all distinct stacks together */
#define JS_PPROFR_MAX_STRBYTES (256u << 20) /* bytes of all strings together */
#define JS_PPROFR_NAME_MAX 16384        /* a frame name is cut there */

typedef struct {
    uint64_t id, off;  /* off: where it was read, for messages */
    int64_t filename;  /* string index */
} js_pprofr_mapping;

typedef struct {
    uint64_t id, mapping, address, off;
    uint32_t first, nlines; /* its lines in js_pprofr.lines */
    uint32_t frames, nframes; /* resolved: its frames in js_pprofr.lframes (root first); nframes UINT32_MAX = not yet */
} js_pprofr_location;

typedef struct {
    uint64_t function;
    int64_t line;
} js_pprofr_line;

typedef struct {
    uint64_t id, off;
    int64_t name, filename; /* string indexes */
} js_pprofr_function;

typedef struct {
    int64_t key, str, num;
} js_pprofr_label;

/* Samples with the same location ids (and labels, with threads): their summed values. */
typedef struct {
    uint64_t ids, vals, off; /* first id in js_pprofr.ids, first value in .vals; where the first was read */
    uint32_t nids, nvals, labels, nlabels;
    uint64_t hash, messages;
} js_pprofr_agg;

typedef struct {
    const char *name;
    const js_pprof_read_opts *o;
    char *err;
    size_t errlen;
    /* the input */
    FILE *f;
    const unsigned char *mem;
    size_t mem_len, mem_pos;
    int gz, gz_end, z_open, in_eof;
    z_stream z;
    unsigned char *in;          /* compressed bytes */
    unsigned char *win;         /* decompressed bytes, win[pos..len) not yet read */
    size_t io_cap;              /* bytes of in and of win */
    size_t pos, len;
    uint64_t base;              /* offset of win[0] in the decompressed stream */
    unsigned char *field;       /* one top-level field */
    size_t cap_field;
    /* the tables */
    struct { int64_t type, unit; } types[JS_PPROF_MAX_TYPES];
    uint32_t ntypes;
    int64_t period_type, period_unit, period, time_ns, duration_ns, default_type;
    js_pprofr_mapping *maps;
    size_t nmaps, cap_maps;
    js_pprofr_location *locs;
    size_t nlocs, cap_locs;
    js_pprofr_line *lines;
    size_t nlines, cap_lines;
    js_pprofr_function *fns;
    size_t nfns, cap_fns;
    uint64_t *str_off;          /* per string: offset in strbytes; its length is up to the next */
    size_t nstr, cap_str;
    char *strbytes;
    size_t nstrbytes, cap_strbytes;
    /* the samples */
    js_pprofr_agg *aggs;
    size_t naggs, cap_aggs;
    uint32_t *agg_slots;        /* open addressing: agg index + 1 */
    size_t nagg_slots;
    uint64_t *ids;
    size_t nids, cap_ids;
    int64_t *vals;
    size_t nvals, cap_vals;
    js_pprofr_label *labs;
    size_t nlabs, cap_labs;
    unsigned char *prev;        /* the previous Sample's bytes (nprev 0: none), its values and aggregate */
    size_t nprev, prev_nvals, prev_agg;
    int64_t prev_vals[JS_PPROF_MAX_TYPES];
    uint64_t messages;
    /* resolution */
    uint32_t *lframes;
    size_t nlframes, cap_lframes;
    uint32_t *stack;
    char name_buf[JS_PPROFR_NAME_MAX + 32]; /* a frame name being made */
    size_t alloc_used;          /* bytes protobuf-c holds for the message being unpacked */
} js_pprofr;

/* One line "NAME: offset N: what" in the reader's err (control characters as '?'); -1. */
__attribute__((format(printf, 3, 4))) int js_pprofr_fail(js_pprofr *r, uint64_t off, const char *fmt, ...);
/* Makes room for one more element in *arr (n used, *cap allocated, elements of size sz), at most max; 0, or -1
 * with the error (naming what) set. */
int js_pprofr_grow(js_pprofr *r, void **arr, size_t n, size_t *cap, size_t sz, size_t max, const char *what);
/* String i (length in *len), or NULL if the table has no such string. */
const char *js_pprofr_string(const js_pprofr *r, int64_t i, size_t *len);
/* Resolves the aggregates into p (pprof_read_resolve.c); 0, or -1 with the error set. */
int js_pprofr_resolve(js_pprofr *r, js_profile *p, js_pprof_read_info *info);

#endif

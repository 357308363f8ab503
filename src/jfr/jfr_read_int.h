/* jfr_read_int.h - internal to the JFR reader (src/jfr_read*.c, src/jfr_meta_read*.c): not part of the API,
 * which is jfr_read.h. Included only by the reader's own files.
 *
 * The reader's files, from the bottom up:
 *   jfr_read_cursor.c   a bounded cursor over the input: varints, bytes, counts, strings (encodings 0-5)
 *   jfr_meta_read.c     the metadata event: classes and fields, looked up by name
 *   jfr_read_decode.c   the generic decoder every pool entry and event goes through
 *   jfr_read_pool.c     keyed tables, and the checkpoint chain that fills the pools the reader keeps
 *   jfr_read_event.c    the selected events, aggregated per (stack trace, thread, class)
 *   jfr_read_resolve.c  aggregates resolved into the profile: frame, thread and class names
 *   jfr_read_chunk.c    the chunk loop: header, metadata, roles, pools, events, resolution
 *   jfr_read.c          the API: entry points, input sources, option parsing
 */
#ifndef JS_JFR_READ_INT_H
#define JS_JFR_READ_INT_H

#include <stdio.h>
#include "jfr/jfr_read.h"

#define JS_JFRR_WINDOW (256 * 1024) /* read window, bytes */
#define JS_JFRR_NAME_MAX 8192       /* longest string kept (longer ones are cut at a character boundary) */
#define JS_JFRR_MAX_DEPTH 16        /* metadata element nesting and struct-in-struct nesting */
#define JS_JFRR_META_MAX (64u << 20) /* largest metadata event accepted */
#define JS_JFRR_CAPTURE 32          /* fields of one struct whose values can be captured */
#define JS_JFRR_HEADER 68           /* chunk header size: the first record starts here */
#define JS_JFRR_NONE UINT32_MAX     /* no index: an empty table slot, a profile frame not resolved yet */
#define JS_JFRR_NAME_BUF (2 * JS_JFRR_NAME_MAX + 64) /* one frame name being built */
#define JS_JFRR_MIN_NORMALIZE 4096  /* stacks the profile may grow by before it is merged (at least) */
#define JS_JFRR_MAX_EVENT_TYPES 8   /* selected event types per chunk (js_jfrr_chunk.ev) */

/* ---- cursor, strings, metadata, generic decoder, keyed tables ----------------------------------------- */

/* Random access to the input: fill buf with n bytes at off; 0, or -1 with errno. */
typedef int (*js_jfrr_read_at)(void *ctx, uint64_t off, void *buf, size_t n);

/* A cursor over [pos, end) of the input through a window; errors are written to err once. */
typedef struct {
    js_jfrr_read_at read_at;
    void *ctx;
    uint64_t fsize;
    uint8_t *win;
    size_t wcap; /* window size: JS_JFRR_WINDOW, or the input size when smaller (at least 16) */
    uint64_t wstart;
    size_t wlen;
    uint64_t pos, end;
    const char *name;
    char *err;
    size_t errlen;
} js_jfrr_cur;

/* A string value: null, kept text (arena offset and length), or a java.lang.String pool key. */
enum { JS_JFRR_S_NULL = 0, JS_JFRR_S_TEXT, JS_JFRR_S_REF };
typedef struct {
    uint8_t kind;
    uint32_t off, len;
    uint64_t key;
} js_jfrr_str;

/* Growable byte arena for kept strings (NUL-terminated). */
typedef struct {
    char *buf;
    size_t len, cap;
} js_jfrr_arena;

/* Primitive kinds of field-less metadata classes. */
enum { JS_JFRR_P_NONE = 0, JS_JFRR_P_BYTE, JS_JFRR_P_VARINT, JS_JFRR_P_F32, JS_JFRR_P_F64, JS_JFRR_P_STRING };

typedef struct {
    uint32_t name;   /* metadata string index */
    uint64_t type;   /* class id */
    int32_t cls;     /* index into js_jfrr_meta.classes, -1 if undeclared */
    uint8_t cp, array;
} js_jfrr_field;

typedef struct {
    uint64_t id;
    uint32_t name, super; /* metadata string indexes (UINT32_MAX = absent) */
    uint32_t first, nfields;
    uint8_t prim;
} js_jfrr_class;

typedef struct {
    js_jfrr_arena text; /* metadata strings */
    uint32_t *str;      /* string index -> offset in text (UINT32_MAX = null) */
    uint32_t nstr;
    js_jfrr_class *classes; /* sorted by id once parsed */
    size_t nclasses, cap_classes;
    js_jfrr_field *fields;
    size_t nfields, cap_fields;
} js_jfrr_meta;

/* A captured field value. */
typedef struct {
    uint8_t set;
    uint64_t u;     /* varint, byte, boolean, pool key */
    js_jfrr_str s;  /* string */
} js_jfrr_val;

/* Writes "NAME: offset OFF: what" into the cursor's err; returns -1. */
int js_jfrr_fail(js_jfrr_cur *c, uint64_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Reads one varint at the cursor; 0 or -1. */
int js_jfrr_varint(js_jfrr_cur *c, uint64_t *v);
/* Reads one raw byte; 0 or -1. */
int js_jfrr_u8(js_jfrr_cur *c, uint8_t *v);
/* Skips n bytes (must stay inside the record); 0 or -1. */
int js_jfrr_skip(js_jfrr_cur *c, uint64_t n);
/* Reads a count that must not exceed the bytes left in the record; 0 or -1. */
int js_jfrr_count(js_jfrr_cur *c, uint64_t *n, const char *what);
/* Reads a string (any encoding 0-5); kept in a when out and a are non-NULL, skipped otherwise; 0 or -1. */
int js_jfrr_string(js_jfrr_cur *c, js_jfrr_arena *a, js_jfrr_str *out);
/* Text of a kept string ("" if not kept). */
const char *js_jfrr_text(const js_jfrr_arena *a, const js_jfrr_str *s);

/* Parses the metadata payload at the cursor (after its size and type id; the cursor ends at the record end) into m. */
int js_jfrr_meta_parse(js_jfrr_cur *c, js_jfrr_meta *m);
/* Releases m's memory and empties it. */
void js_jfrr_meta_free(js_jfrr_meta *m);
/* Index of the class named name, or -1. */
int32_t js_jfrr_meta_class(const js_jfrr_meta *m, const char *name);
/* Index of the class with id, or -1. */
int32_t js_jfrr_meta_class_id(const js_jfrr_meta *m, uint64_t id);
/* Index (within the class) of cls's field named name, or -1. */
int32_t js_jfrr_meta_field(const js_jfrr_meta *m, int32_t cls, const char *name);
/* Text of metadata string index i ("" when absent or null). */
const char *js_jfrr_meta_str(const js_jfrr_meta *m, uint32_t i);
/* Decodes one value of class cls (its fields in order); the first min(nvals, fields) top-level fields'
 * values go to vals (strings kept in a), deeper ones are skipped; 0 or -1. */
int js_jfrr_decode(js_jfrr_cur *c, const js_jfrr_meta *m, int32_t cls, js_jfrr_arena *a, js_jfrr_val *vals,
                   size_t nvals);
/* Decodes or skips one field's value (array, pool key, primitive or nested struct); out may be NULL. */
int js_jfrr_field_value(js_jfrr_cur *c, const js_jfrr_meta *m, const js_jfrr_field *f, js_jfrr_arena *a,
                        js_jfrr_val *out, int depth);

/* A table of fixed-size records keyed by pool key (open addressing; a reused key reuses its record); filled by
 * jfr_read_pool.c. */
typedef struct {
    uint64_t *keys;
    uint32_t *idx; /* JS_JFRR_NONE = empty slot */
    size_t cap;
    uint8_t *recs;
    size_t n, rcap, size; /* records of `size` bytes */
    uint64_t probes;      /* slots looked at to place entries (inserts and rehashes) */
} js_jfrr_pool;
/* Record of key, or NULL. */
void *js_jfrr_pool_get(const js_jfrr_pool *p, uint64_t key);
/* Frees p's memory, keeping its record size. */
void js_jfrr_pool_free(js_jfrr_pool *p);

/* ---- pool records (names stay references into the pools until resolved) ------------------------------ */

/* A name: inline text, or a Symbol or java.lang.String pool key. */
enum { JS_JFRR_NR_NONE = 0, JS_JFRR_NR_TEXT, JS_JFRR_NR_SYM, JS_JFRR_NR_STR };
typedef struct {
    uint8_t how;
    uint64_t key;
    js_jfrr_str s;
} js_jfrr_nameref;

typedef struct {
    js_jfrr_nameref name;
} js_jfrr_name_rec; /* Symbol, java.lang.String, FrameType entries; java.lang.Class */
typedef struct {
    uint64_t cls;
    js_jfrr_nameref name;
} js_jfrr_method_rec;
typedef struct {
    js_jfrr_nameref jname, osname;
    uint64_t ostid;
    int8_t match; /* thread filter: -1 not yet known */
    uint32_t pframe;
} js_jfrr_thread_rec;
typedef struct {
    uint32_t first, n;
    uint8_t truncated; /* the trace was cut at the writer's depth */
} js_jfrr_trace_rec;
typedef struct {
    uint64_t method, ftype;
    int32_t line;
    uint32_t pframe; /* resolved profile frame, JS_JFRR_NONE until needed */
} js_jfrr_frame_rec;

/* ---- per-chunk state --------------------------------------------------------------------------------- */

/* How an event type's weight and class frame are read. */
enum { JS_JFRR_EV_PLAIN, JS_JFRR_EV_WALL, JS_JFRR_EV_TLAB, JS_JFRR_EV_OUTSIDE, JS_JFRR_EV_ASAMPLE, JS_JFRR_EV_LOCK };

/* A selected event type found in the chunk's metadata, with the fields read from it. */
typedef struct {
    uint64_t id;
    int32_t cls;
    uint8_t ev;
    int32_t time, thread, stack, weight, weight2, klass; /* field indexes, -1 = absent */
} js_jfrr_event_slot;

/* An aggregate: events with the same (trace, thread, class, flag), their summed weight and count. */
typedef struct {
    uint64_t trace, thread, cls, weight, n;
    uint8_t flag, used;
} js_jfrr_agg_ent;

/* One chunk's state: metadata, kept pools, stack frames, aggregates, roles, time base; freed per chunk. */
typedef struct {
    js_jfrr_meta meta;
    js_jfrr_arena text;
    js_jfrr_pool sym, str, ftype, cls, meth, thread, trace;
    uint64_t probes; /* the pools' probes of the chunks freed so far (kept across js_jfrr_chunk_free) */
    js_jfrr_frame_rec *frames;
    size_t nframes, cap_frames;
    js_jfrr_agg_ent *agg;
    size_t nagg, cap_agg;
    /* roles: class indexes and field indexes, -1 when absent */
    int32_t c_sym, c_str, c_ftype, c_cls, c_meth, c_thread, c_trace, c_frame;
    int32_t sym_s, ftype_s, cls_name, meth_type, meth_name, th_os, th_ostid, th_java, trace_frames;
    int32_t trace_truncated;
    int32_t fr_method, fr_line, fr_type;
    js_jfrr_event_slot ev[JS_JFRR_MAX_EVENT_TYPES];
    int nev;
    uint64_t start_nanos, start_ticks, tps, duration_nanos;
} js_jfrr_chunk;

/* One read: the cursor, options, the profile being built, the current chunk, the time range, scratch space. */
typedef struct {
    js_jfrr_cur cur;
    const js_jfr_read_opts *o;
    js_profile *p;
    js_jfr_read_stats st;
    js_jfrr_chunk k;
    int64_t rec_start;
    __int128 from, to;
    uint32_t *scratch;
    size_t cap_scratch;
    size_t norm_mark;
    char name[JS_JFRR_NAME_BUF];
} js_jfrr_reader;

/* ---- the chunk loop's steps (each 0, or -1 with one line in the cursor's err) ------------------------- */

/* Resets the chunk state, freeing what it holds; k->probes keeps adding up (jfr_read_chunk.c). */
void js_jfrr_chunk_free(js_jfrr_chunk *k);
/* Reads every chunk of the input into the profile (jfr_read_chunk.c). */
int js_jfrr_read_chunks(js_jfrr_reader *r);
/* Walks the checkpoint chain back from chunk offset cp_off, keeping the pools (jfr_read_pool.c). */
int js_jfrr_read_pools(js_jfrr_reader *r, uint64_t base, uint64_t chunk_end, uint64_t cp_off);
/* Reads every record of the chunk [base, end), aggregating the selected events (jfr_read_event.c). */
int js_jfrr_read_events(js_jfrr_reader *r, uint64_t base, uint64_t end);
/* Resolves the chunk's aggregates into the profile, merging it when it has grown (jfr_read_resolve.c). */
int js_jfrr_resolve_chunk(js_jfrr_reader *r);

#endif

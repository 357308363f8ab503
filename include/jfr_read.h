/* jfr_read.h - read JFR recordings (the JDK's own, async-profiler's, jsampler's) into a js_profile.
 *
 * Streaming: the file is read chunk by chunk through a bounded window (pread), never slurped. Per chunk:
 * the header, the metadata event (types and fields found by name, never by id, so JDK 17, JDK 25 and
 * other writers all work), every pool in the checkpoint chain (decoded generically by the metadata; only
 * threads, stack traces, methods, classes, symbols, frame types and strings are kept), then the events of
 * the selected kind, aggregated per (stack trace, thread, leaf class) and resolved into the profile at
 * chunk end. Memory: one chunk's pools and aggregates plus the profile, which is merged as it grows.
 *
 * Events per kind (weights):
 *   cpu   jdk.ExecutionSample, jdk.NativeMethodSample           1 per event            unit "samples"
 *   wall  profiler.WallClockSample                              field `samples`, else 1 unit "samples"
 *   alloc jdk.ObjectAllocationInNewTLAB                         tlabSize, else allocationSize
 *         jdk.ObjectAllocationOutsideTLAB                       allocationSize
 *         jdk.ObjectAllocationSample                            weight                 unit "bytes"
 *   lock  jdk.JavaMonitorEnter, jdk.ThreadPark                  duration in ns         unit "ns"
 *
 * Frames, root first: optional thread root "[name tid=N]" (type thread; name = Java name, else OS name;
 * N = OS thread id), the stack's frames from the outermost caller to the leaf, and for alloc and lock
 * events the class involved as a leaf frame named like async-profiler's collapsed output: the Java class
 * name plus "_[i]" (type inlined: allocation in a new TLAB, or the monitor/parked class of a lock event)
 * or "_[k]" (type kernel: allocation outside a TLAB or a jdk.ObjectAllocationSample), e.g.
 * "java.lang.String_[i]", "byte[]_[k]". A method frame is "pkg.Class.method" (class name with '/' -> '.',
 * a hidden-class suffix from "/0x" or "+0x" on dropped, as the agent does); a method whose class has no
 * name is named by the method name alone (of type error when it is bracketed, "[unknown_Java]": the
 * pseudo frames profilers write); --lines appends ":LINE" when the line is known (> 0). Frame
 * types come from the FrameType pool's description ("Interpreted", "JIT compiled", "Inlined", "Native",
 * "C++", "Kernel", "C1 compiled"); a missing or unknown one counts as JIT. A method missing from its pool
 * (or its name) is "[unknown_method]" (type error); an event whose stack trace is missing has no stack frames.
 *
 * Time: an event's time is its chunk's startNanos + (ticks - startTicks) * 1e9 / ticksPerSecond; the
 * recording starts at the first chunk's startNanos. A range keeps events with from <= time < to.
 *
 * Errors: -1 and one line "NAME: offset N: what" (N = absolute byte offset in the file) for every
 * malformed input (bad magic, unknown major version, sizes or offsets past the end or backwards, cyclic
 * checkpoint chains, nesting too deep, counts larger than the bytes left, zero-size records, unknown
 * string encodings); no allocation is larger than what the bytes left could hold.
 */
#ifndef JS_JFR_READ_H
#define JS_JFR_READ_H

#include <stddef.h>
#include <stdint.h>
#include "profile.h"

typedef enum { JS_JFR_READ_CPU = 0, JS_JFR_READ_WALL, JS_JFR_READ_ALLOC, JS_JFR_READ_LOCK } js_jfr_read_kind;

typedef struct {
    js_jfr_read_kind kind;
    const char *thread;  /* keep only threads whose name matches: a glob if it has '*' or '?', else a
                          * substring; NULL or "" = all threads */
    int has_from, has_to;
    int from_abs, to_abs; /* 1: the value is ns since the epoch; 0: ns since the recording start */
    int64_t from_ns, to_ns;
    int lines;            /* append ":LINE" to method frames */
    int threads;          /* add a "[name tid=N]" root frame per thread */
} js_jfr_read_opts;

typedef struct {
    uint64_t chunks;  /* chunks read */
    uint64_t events;  /* events of the selected kind kept (after the thread and time filters) */
    uint64_t skipped; /* events of the selected kind dropped by the thread or time filter */
} js_jfr_read_stats;

/* Reads the JFR recording in the seekable file fd (from offset 0 to its size) into p, which must be
 * initialised; name is used in messages. stats may be NULL. 0, or -1 with one line in err. */
int js_jfr_read_fd(int fd, const char *name, const js_jfr_read_opts *o, js_profile *p, js_jfr_read_stats *stats,
                   char *err, size_t errlen);
/* Same for a recording held in memory (tests, fuzzing). */
int js_jfr_read_mem(const void *data, size_t len, const char *name, const js_jfr_read_opts *o, js_profile *p,
                    js_jfr_read_stats *stats, char *err, size_t errlen);
/* Parses an event kind name ("cpu", "wall", "alloc", "lock"); 0, or -1 if unknown. */
int js_jfr_read_kind_parse(const char *s, js_jfr_read_kind *out);
/* Name of a kind ("cpu", ...). */
const char *js_jfr_read_kind_name(js_jfr_read_kind k);
/* Parses a --from/--to value: "@MS" = absolute, milliseconds since the epoch; else a duration since the
 * recording start, a decimal number with an optional unit ns, us, ms, s (default), m, h ("90", "1.5s",
 * "200ms", "2m"). 0, or -1 if malformed or out of range. */
int js_jfr_read_parse_time(const char *s, int *absolute, int64_t *ns);

#ifdef JS_JFR_READ_INTERNAL
/* ---- internal to src/jfr_read.c and src/jfr_meta_read.c (not part of the API) ---- */
#include <stdio.h>

#define JS_JFRR_WINDOW (256 * 1024) /* read window, bytes */
#define JS_JFRR_NAME_MAX 8192       /* longest string kept (longer ones are cut at a character boundary) */
#define JS_JFRR_MAX_DEPTH 16        /* metadata element nesting and struct-in-struct nesting */
#define JS_JFRR_META_MAX (64u << 20) /* largest metadata event accepted */
#define JS_JFRR_CAPTURE 32          /* fields of one struct whose values can be captured */

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

/* A table of fixed-size records keyed by pool key (open addressing; a reused key reuses its record). */
typedef struct {
    uint64_t *keys;
    uint32_t *idx; /* NONE = empty slot */
    size_t cap;
    uint8_t *recs;
    size_t n, rcap, size; /* records of `size` bytes */
} js_jfrr_pool;
/* Record of key, or NULL. */
void *js_jfrr_pool_get(const js_jfrr_pool *p, uint64_t key);
/* Record of key, zeroed (created when missing); NULL without memory. */
void *js_jfrr_pool_put(js_jfrr_pool *p, uint64_t key);
/* Frees p's memory, keeping its record size. */
void js_jfrr_pool_free(js_jfrr_pool *p);
/* Appends n bytes of s to buf at *o within cap (always NUL-terminated, cut when full). */
void js_jfrr_append(char *buf, size_t *o, size_t cap, const char *s, size_t n);
/* Appends a JVM class name as a Java name ('/' -> '.', hidden-class suffix dropped, arrays as "int[]"). */
void js_jfrr_put_class(char *buf, size_t *o, size_t cap, const char *s);

typedef struct {
    int fd;
} js_jfrr_fd_src;
typedef struct {
    const uint8_t *data;
    size_t len;
} js_jfrr_mem_src;
/* js_jfrr_read_at over a file descriptor (pread) and over memory. */
int js_jfrr_fd_read_at(void *ctx, uint64_t off, void *buf, size_t n);
int js_jfrr_mem_read_at(void *ctx, uint64_t off, void *buf, size_t n);
#endif

#endif

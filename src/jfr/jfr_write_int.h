/* jfr_write_int.h - internal to the JFR writer (src/jfr_write*.c); nothing else includes it.
 *
 * The writer's state, and the layers its files share: output (a bounded buffer over the file with varint, string
 * and record helpers; the first failure is kept and every later write is skipped), the checkpoint (pool keys,
 * resolution through the js_jfr_source, the size estimates behind max_size) and the chunk's stack traces
 * (jfr_write_trace.c): a trace is pulled from the source the first time a chunk sees its producer key, encoded
 * as the StackTrace entry will be written, and identified by its content, so the chunk writes each distinct
 * stack once whatever keys name it. Entries wait in memory up to o.trace_buffer bytes, then go to the file in a
 * checkpoint of their own within the chunk (the chunk's checkpoints are chained by their deltas), so a chunk may
 * hold any number of traces while the writer holds a bounded amount.
 */
#ifndef JS_JFR_WRITE_INT_H
#define JS_JFR_WRITE_INT_H

#include <stdint.h>

#include "jfr/jfr_meta.h"
#include "jfr/jfr_pool.h"
#include "jfr/jfr_write.h"


#define BUF_CAP (256 * 1024)
#define DEFAULT_CHUNK_SIZE (64ULL << 20)
#define DEFAULT_DEPTH 2048
#define DEPTH_LIMIT 65536
#define MAX_WEIGHT 1000
#define KEY_LIMIT 0x80000000u       /* pool keys stay below 2^31 (async-profiler reads them as int) */
#define SYMBOL_MAX 0xFFFFFFu        /* symbols per chunk: the low 24 bits of a symbol key */
#define SYMBOL_BANDS 127            /* symbol keys are band << 24 | id, band = 1..127 by chunk */
#define PLACEHOLDER_METHOD 1        /* method key of "[unknown]" frames */
#define UNKNOWN "[unknown]"
#define NO_DESCRIPTOR "()L;"
#define CP_BASE 1024                /* checkpoint bytes besides entries: headers, frame types, slack */
#define VAR_MAX 5                   /* bytes of a varint below 2^35, i.e. any key, int or size here */
#define LONG_MAX_BYTES 9
#define TICK_SLACK 1000000000ULL /* 1 s: samples stamped just before the open still get ticks > 0 */
#define JS_JFRW_NO_STATE UINT32_MAX /* js_jfrw_admit: the event has no thread state */
#define STATE_COST (VAR_MAX + 1 + VAR_MAX + 32)
#define TRACE_KEEP_BYTES (1u << 20) /* trace tables a chunk end keeps allocated for the next chunk */
#define TRACE_FLUSH_BYTES (1u << 20) /* default o.trace_buffer: encoded trace entries held before they are written */
#define TRACE_INDEX_MAX (1u << 17)   /* a chunk is due once it has seen this many producer keys or distinct stacks: the
                                      * index of the chunk's traces stays within about 7 MiB */
#define METHOD_MEMO 256             /* direct-mapped memo in front of the method id map */
#define CP_FLUSH_COST 40             /* bytes of a checkpoint around its traces: size, type, times, delta, pool head */

/* One distinct stack of the chunk: the hash of its encoded content and its StackTrace key; key 0 = empty. */
typedef struct {
    uint64_t hash;
    uint32_t key;
} js_jfrw_content;

struct js_jfr_writer {
    int fd;
    int err_no; /* first failure (an errno value); every later write is skipped */
    char *path;
    js_jfr_source src;
    js_jfr_options o;   /* copy with defaults applied; strings point into `strings` */
    char *strings;      /* owned copies of the recording name and settings */
    int64_t clock_offset; /* CLOCK_REALTIME - CLOCK_MONOTONIC, ns, measured once */
    uint64_t tick_base;   /* written ticks = CLOCK_MONOTONIC ns - tick_base (see js_jfrw_tick) */
    uint64_t start_ms;    /* recording start, ms since the epoch */
    js_jfr_bytes meta;    /* metadata event body after startTicks and duration */
    uint8_t *buf;         /* output buffer, BUF_CAP bytes */
    size_t len;
    uint64_t flushed; /* bytes already written to fd */
    /* current chunk */
    uint64_t chunk_start, chunk_ticks, chunk_events, chunk_fixed;
    uint32_t chunk_no;
    uint64_t reserve; /* with max_size: upper bound of this chunk's checkpoint */
    int capped;       /* max_size reached: events are dropped from now on */
    unsigned frame_types;
    js_jfr_set threads, states, methods, classes, packages;
    js_jfr_idmap trace_ids;   /* producer trace key -> index 1..count, this chunk */
    uint32_t *trace_keys;     /* trace_keys[index]: its StackTrace key */
    uint32_t trace_keys_cap;
    js_jfrw_content *content; /* the chunk's distinct stacks, open addressing */
    uint32_t content_cap, content_count;
    uint8_t *tpend;           /* encoded StackTrace entries not yet written */
    size_t tpend_len, tpend_cap;
    uint32_t tpend_count;
    uint64_t last_cp;         /* file offset of the chunk's last checkpoint so far, 0 none */
    uint32_t tkey_next, tkey_min, tkey_max; /* StackTrace keys: ascending in a chunk, */
    uint32_t tkey_skip_lo, tkey_skip_hi;    /* skipping the previous chunk's range */
    uint8_t *tenc;            /* the trace just pulled, encoded without its key: truncated, count, frames */
    size_t tenc_len, tenc_cap;
    uint32_t *tmeth;          /* its frames' method keys (each once, mostly), o.max_depth + 1 */
    uint32_t tmeth_n, ttypes; /* how many, and the frame types it uses (bits) */
    js_jfr_set est_methods, est_classes; /* already counted in reserve */
    js_jfr_strtab symbols;
    /* writer lifetime */
    js_jfr_idmap method_ids;
    uint64_t mmemo_key[METHOD_MEMO]; /* recent caller method keys and their ids + 1 (0: empty) */
    uint32_t mmemo_id[METHOD_MEMO];
    js_jfr_strtab class_names;
    js_jfr_frame *frames; /* scratch, o.max_depth */
    js_jfr_stats st;
};

#define CHUNK_SETS(w) {&(w)->threads, &(w)->states, &(w)->methods, &(w)->classes, \
                       &(w)->packages, &(w)->est_methods, &(w)->est_classes}

/* Ticks as written: ns since TICK_SLACK before the recording started, so a sample's time takes 5 varint
 * bytes for the first 33 s and 6 for the next 73 minutes (not 7 to 8 for CLOCK_MONOTONIC since boot); the chunk
 * header's startTicks uses the same base, so readers get the same times. Earlier ticks are written as 0. */
static inline uint64_t js_jfrw_tick(const js_jfr_writer *w, uint64_t t)
{
    return t > w->tick_base ? t - w->tick_base : 0;
}

/* A type id as this file writes it (js_jfr_options.type_base). */
static inline uint32_t js_jfrw_type(const js_jfr_writer *w, uint32_t t)
{
    return t + w->o.type_base;
}

/* The line number written for a caller's line: 0 for none (-1 or any negative), as other JFR producers do. */
static inline int32_t js_jfrw_line(int32_t line)
{
    return line > 0 ? line : 0;
}

/* ---- output (jfr_write_out.c) ---- */

/* Remember the first failure. */
void js_jfrw_set_error(js_jfr_writer *w, int e);
/* Format the writer's error into err; returns -1. */
int js_jfrw_fail(const js_jfr_writer *w, char *err, size_t errlen);
/* Write p[0..n) at fd's offset (off < 0) or at off, retrying EINTR and short writes; 0 or an errno. */
int js_jfrw_write_all(int fd, const uint8_t *p, size_t n, int64_t off);
/* File offset of the next byte appended. */
uint64_t js_jfrw_pos(const js_jfr_writer *w);
/* Write the buffer to the file; 0, or -1 with the error recorded. */
int js_jfrw_flush(js_jfr_writer *w);
/* Append n bytes (n <= BUF_CAP), flushing first if they do not fit; nothing once failed. */
void js_jfrw_put(js_jfr_writer *w, const void *p, size_t n);
/* Append n bytes of any size: through the buffer when they fit in it, else straight to the file after it. */
void js_jfrw_put_large(js_jfr_writer *w, const void *p, size_t n);
/* Append a varint. */
void js_jfrw_put_var(js_jfr_writer *w, uint64_t v);
/* Append a JFR int: its 32-bit two's complement as a varint (-1 takes 5 bytes, as HotSpot's). */
void js_jfrw_put_int(js_jfr_writer *w, int32_t v);
/* Append a raw byte (boolean, encoding). */
void js_jfrw_put_u8(js_jfr_writer *w, uint8_t v);
/* Append a string: NULL as encoding 0, else encoding 3 cut to JS_JFR_STR_MAX bytes. */
void js_jfrw_put_str(js_jfr_writer *w, const char *s);
/* Append a 5-byte varint placeholder; returns its file offset for patch5. */
uint64_t js_jfrw_reserve5(js_jfr_writer *w);
/* Overwrite the 5-byte varint at file offset off with v: in the buffer, or in the file if flushed. */
void js_jfrw_patch5(js_jfr_writer *w, uint64_t off, uint64_t v);
/* Start a record of the given type with a padded size; returns its offset for record_end. */
uint64_t js_jfrw_record_begin(js_jfr_writer *w, uint32_t type);
/* Patch the size of the record started at `at` (the size counts itself). */
void js_jfrw_record_end(js_jfr_writer *w, uint64_t at);
/* Add key to a per-chunk set; 1 if new, 0 if present or out of memory (recorded). */
int js_jfrw_ref(js_jfr_writer *w, js_jfr_set *s, uint32_t key);

/* ---- stack traces (jfr_write_trace.c) ---- */

/* A producer trace key resolved for this chunk: the StackTrace key, and whether its content is new to the chunk
 * (then it is encoded in w->tenc, w->tmeth, w->ttypes, and `bytes` is the entry's size in the file). */
typedef struct {
    uint32_t key;
    int fresh;
    uint64_t bytes, hash;
} js_jfrw_trace_ref;

/* Resolve producer key `key` for this chunk: known keys cost one lookup; a new one is pulled from the source and
 * encoded, and its content looked up. 0, or -1 with the error recorded (out of memory). Takes nothing yet. */
int js_jfrw_trace_resolve(js_jfr_writer *w, uint64_t key, js_jfrw_trace_ref *ref);
/* Make `key` (resolved into ref, nothing resolved since) part of the chunk: map it, and for fresh content queue its
 * entry (written in a checkpoint of its own once o.trace_buffer bytes wait, at ticks). 0, or -1 (recorded). */
int js_jfrw_trace_take(js_jfr_writer *w, uint64_t key, const js_jfrw_trace_ref *ref, uint64_t ticks);
/* Whether the chunk's trace index reached TRACE_INDEX_MAX. */
int js_jfrw_trace_index_full(const js_jfr_writer *w);
/* Write the queued entries in a checkpoint of their own (nothing if none, or if max_size leaves no room). */
void js_jfrw_trace_flush(js_jfr_writer *w, uint64_t ticks);
/* The StackTrace pool of the queued entries, in the chunk's last checkpoint; 1 if written (there were some). */
int js_jfrw_trace_pool(js_jfr_writer *w);
/* Forget this chunk's traces (a new chunk starts); keys of the next chunk avoid this one's. */
void js_jfrw_trace_reset(js_jfr_writer *w);
/* Release every trace table. */
void js_jfrw_trace_free(js_jfr_writer *w);

/* ---- checkpoint (jfr_write_cp.c) ---- */

/* Method key of a caller's method key (stable for the writer's life; the placeholder without memory). */
uint32_t js_jfrw_method_key(js_jfr_writer *w, uint64_t caller_key);
#define METHOD_MEMO_SLOT(k) ((uint32_t)((k) >> 3 ^ (k) >> 13) & (METHOD_MEMO - 1))
/* Whether `bytes` more event bytes, plus the pool entries their ids add, keep the file within
 * max_size; the first refusal caps the writer for good. trace: the event's resolved trace (fresh content adds
 * its entry and the methods it names). */
int js_jfrw_admit(js_jfr_writer *w, uint32_t thread, const js_jfrw_trace_ref *trace, uint32_t state, uint64_t bytes);
/* Class key of an internal class name (stable for the writer's life; 1 without memory, recorded). */
uint32_t js_jfrw_class_key(js_jfr_writer *w, const char *name);
/* What js_jfrw_admit adds for an event naming class key cls (0 none) that is not yet in the estimate. */
uint64_t js_jfrw_class_cost(js_jfr_writer *w, uint32_t cls, const char *name);
/* The pools of the chunk's last checkpoint, none empty, each the number written: the thread states and threads; then,
 * after the StackTrace pool (its traces mark methods), the frame types, methods, classes, packages and symbols. */
int js_jfrw_cp_threads(js_jfr_writer *w);
int js_jfrw_cp_names(js_jfr_writer *w);

#endif

/* jfr_write.c - see jfr_write.h. The byte-level rules followed are those of the team's JFR format
 * sheet (jfr-format.md); the chunk layout is its §10: header placeholder, metadata,
 * jdk.ActiveRecording and jdk.ActiveSetting events, sample events, then one checkpoint (delta 0)
 * with every pool entry the chunk references, then bytes 8..67 of the header are patched.
 *
 * Pool keys: threads and stack traces use the caller's ids; methods get dense ids (1 + the id map's,
 * 1 itself being the "[unknown]" placeholder) and classes dense ids by name, both stable for the
 * writer's life; symbols and packages are numbered per chunk in a key band that changes with every
 * chunk, because the JDK keeps the previous chunk's value for a reused key. A package's key is the
 * key of its name's symbol. All keys are non-zero and below 2^31.
 */
#include "jfr_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jfr_meta.h"
#include "jfr_pool.h"

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
#define FRAME_COST (3 * VAR_MAX + 1)
#define STATE_COST (VAR_MAX + 1 + VAR_MAX + 32)
#define UNKNOWN_METHOD_COST 128

struct js_jfr_writer {
    int fd;
    int err_no; /* first failure (an errno value); every later write is skipped */
    char *path;
    js_jfr_source src;
    js_jfr_options o;   /* copy with defaults applied; strings point into `strings` */
    char *strings;      /* owned copies of the recording name and settings */
    int64_t clock_offset; /* CLOCK_REALTIME - CLOCK_MONOTONIC, ns, measured once */
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
    js_jfr_set threads, traces, states, methods, classes, packages;
    js_jfr_set est_methods, est_classes; /* already counted in reserve */
    js_jfr_strtab symbols;
    /* writer lifetime */
    js_jfr_idmap method_ids;
    js_jfr_strtab class_names;
    js_jfr_frame *frames; /* scratch, o.max_depth */
    js_jfr_stats st;
};

#define CHUNK_SETS(w) {&(w)->threads, &(w)->traces, &(w)->states, &(w)->methods, &(w)->classes, \
                       &(w)->packages, &(w)->est_methods, &(w)->est_classes}

/* ---- output ---- */

/* Remember the first failure. */
static void set_error(js_jfr_writer *w, int e)
{
    if (!w->err_no) w->err_no = e ? e : EIO;
}

/* Format the writer's error into err; returns -1. */
static int fail(const js_jfr_writer *w, char *err, size_t errlen)
{
    char tmp[128];
    snprintf(err, errlen, "cannot write JFR '%s': %s", w->path, strerror_r(w->err_no, tmp, sizeof tmp));
    return -1;
}

/* Write p[0..n) at fd's offset (off < 0) or at off, retrying EINTR and short writes; 0 or an errno. */
static int write_all(int fd, const uint8_t *p, size_t n, int64_t off)
{
    while (n) {
        ssize_t k = off < 0 ? write(fd, p, n) : pwrite(fd, p, n, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return k < 0 ? errno : EIO;
        p += k;
        n -= (size_t)k;
        if (off >= 0) off += k;
    }
    return 0;
}

/* File offset of the next byte appended. */
static uint64_t pos(const js_jfr_writer *w)
{
    return w->flushed + w->len;
}

/* Write the buffer to the file; 0, or -1 with the error recorded. */
static int flush(js_jfr_writer *w)
{
    if (w->err_no) return -1;
    int e = write_all(w->fd, w->buf, w->len, -1);
    if (e) {
        set_error(w, e);
        return -1;
    }
    w->flushed += w->len;
    w->len = 0;
    return 0;
}

/* Append n bytes (n <= BUF_CAP), flushing first if they do not fit; nothing once failed. */
static void put(js_jfr_writer *w, const void *p, size_t n)
{
    if (w->err_no || (w->len + n > BUF_CAP && flush(w) != 0)) return;
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

/* Append a varint. */
static void put_var(js_jfr_writer *w, uint64_t v)
{
    uint8_t b[LONG_MAX_BYTES];
    put(w, b, js_jfr_varint(b, v));
}

/* Append a JFR int: its 32-bit two's complement as a varint (-1 takes 5 bytes, as HotSpot's). */
static void put_int(js_jfr_writer *w, int32_t v)
{
    put_var(w, (uint32_t)v);
}

/* Append a raw byte (boolean, encoding). */
static void put_u8(js_jfr_writer *w, uint8_t v)
{
    put(w, &v, 1);
}

/* Append a string: NULL as encoding 0, else encoding 3 cut to JS_JFR_STR_MAX bytes. */
static void put_str(js_jfr_writer *w, const char *s)
{
    put_u8(w, s ? 3 : 0);
    if (!s) return;
    size_t n = js_jfr_utf8_cut(s, strlen(s), JS_JFR_STR_MAX);
    put_var(w, n);
    put(w, s, n);
}

/* Append a 5-byte varint placeholder; returns its file offset for patch5. */
static uint64_t reserve5(js_jfr_writer *w)
{
    uint8_t b[5];
    js_jfr_varint5(b, 0);
    put(w, b, 5);
    return pos(w) - 5;
}

/* Overwrite the 5-byte varint at file offset off with v: in the buffer, or in the file if flushed. */
static void patch5(js_jfr_writer *w, uint64_t off, uint64_t v)
{
    uint8_t b[5];
    js_jfr_varint5(b, v);
    if (w->err_no) return;
    if (off >= w->flushed) {
        memcpy(w->buf + (off - w->flushed), b, 5);
        return;
    }
    int e = write_all(w->fd, b, 5, (int64_t)off);
    if (e) set_error(w, e);
}

/* Start a record of the given type with a padded size; returns its offset for record_end. */
static uint64_t record_begin(js_jfr_writer *w, uint32_t type)
{
    uint64_t at = reserve5(w);
    put_var(w, type);
    return at;
}

/* Patch the size of the record started at `at` (the size counts itself). */
static void record_end(js_jfr_writer *w, uint64_t at)
{
    patch5(w, at, pos(w) - at);
}

/* ---- keys ---- */

/* Add key to a per-chunk set; 1 if new, 0 if present or out of memory (recorded). */
static int ref(js_jfr_writer *w, js_jfr_set *s, uint32_t key)
{
    int r = js_jfr_set_add(s, key);
    if (r < 0) set_error(w, ENOMEM);
    return r > 0;
}

/* Method key of a caller's method key (stable for the writer's life). */
static uint32_t method_key(js_jfr_writer *w, uint64_t caller_key)
{
    uint32_t id = js_jfr_idmap_id(&w->method_ids, caller_key);
    if (id && id < KEY_LIMIT - 1) return id + 1;
    set_error(w, ENOMEM);
    return PLACEHOLDER_METHOD;
}

/* Class key of an internal class name (stable for the writer's life). */
static uint32_t class_key(js_jfr_writer *w, const char *name)
{
    size_t n = js_jfr_utf8_cut(name, strlen(name), JS_JFR_STR_MAX);
    uint32_t id = js_jfr_strtab_id(&w->class_names, name, n);
    if (!id) set_error(w, ENOMEM);
    return id ? id : 1;
}

/* Symbol key of s[0..len) in the current chunk. */
static uint32_t symbol_n(js_jfr_writer *w, const char *s, size_t len)
{
    uint32_t band = (w->chunk_no - 1) % SYMBOL_BANDS + 1;
    uint32_t id = 0;
    if (w->symbols.count < SYMBOL_MAX) id = js_jfr_strtab_id(&w->symbols, s, js_jfr_utf8_cut(s, len, JS_JFR_STR_MAX));
    if (!id) set_error(w, w->symbols.count < SYMBOL_MAX ? ENOMEM : EOVERFLOW);
    return band << 24 | (id ? id : 1);
}

/* Package key of an internal class name ("java/lang" of "java/lang/String"), 0 for none. */
static uint32_t package_key(js_jfr_writer *w, const char *cls, size_t len)
{
    const char *slash = memrchr(cls, '/', len);
    if (!slash) return 0;
    uint32_t key = symbol_n(w, cls, (size_t)(slash - cls));
    ref(w, &w->packages, key);
    return key;
}

/* ---- resolution through the source ---- */

/* Method m's names; "[unknown]" with an empty class for the placeholder or an unknown key, and
 * async-profiler's "()L;" for a missing or malformed descriptor. */
static void resolve_method(js_jfr_writer *w, uint32_t m, js_jfr_method *out)
{
    memset(out, 0, sizeof *out);
    if (m == PLACEHOLDER_METHOD || !w->src.method ||
        w->src.method(w->src.ctx, w->method_ids.keys[m - 1], out) != 0) {
        memset(out, 0, sizeof *out);
        out->name = UNKNOWN;
    }
    if (!out->class_name) out->class_name = "";
    if (!out->name) out->name = UNKNOWN;
    if (!out->descriptor || !js_jfr_descriptor_ok(out->descriptor)) out->descriptor = NO_DESCRIPTOR;
}

/* Thread id's description; "[unknown]" if the source does not know it. */
static void resolve_thread(js_jfr_writer *w, uint32_t id, js_jfr_thread *out)
{
    memset(out, 0, sizeof *out);
    if (!w->src.thread || w->src.thread(w->src.ctx, id, out) != 0) memset(out, 0, sizeof *out);
    if (!out->os_name) out->os_name = UNKNOWN;
}

/* Frames of trace id into w->frames (leaf first); the count, or -1 if unknown. */
static int resolve_trace(js_jfr_writer *w, uint32_t id, int *truncated)
{
    *truncated = 0;
    int n = w->src.trace ? w->src.trace(w->src.ctx, id, w->frames, w->o.max_depth, truncated) : -1;
    if (n > w->o.max_depth) n = w->o.max_depth, *truncated = 1;
    return n >= 1 ? n : -1;
}

/* ---- checkpoint size estimates (only with max_size) ---- */

/* Upper bound of an encoding-3 string's bytes. */
static uint64_t str_cost(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return 1 + VAR_MAX + (n < JS_JFR_STR_MAX ? n : JS_JFR_STR_MAX);
}

/* Upper bound of Method entry m with its symbols and, if its class is new to the estimate, the
 * Class entry with its name and package symbols and the Package entry. */
static uint64_t method_cost(js_jfr_writer *w, uint32_t m)
{
    js_jfr_method jm;
    resolve_method(w, m, &jm);
    uint64_t cost = 7 * VAR_MAX + 1 + str_cost(jm.name) + str_cost(jm.descriptor);
    if (ref(w, &w->est_classes, class_key(w, jm.class_name)))
        cost += 8 * VAR_MAX + 2 + 2 * str_cost(jm.class_name);
    return cost;
}

/* Upper bound of the StackTrace entry of trace id plus the methods and classes it adds. */
static uint64_t trace_cost(js_jfr_writer *w, uint32_t id)
{
    int truncated;
    int n = resolve_trace(w, id, &truncated);
    if (n < 0) return 2 * VAR_MAX + 1 + FRAME_COST + UNKNOWN_METHOD_COST;
    uint64_t cost = 2 * VAR_MAX + 1 + (uint64_t)n * FRAME_COST;
    for (int i = 0; i < n; i++) {
        uint32_t m = method_key(w, w->frames[i].method);
        if (ref(w, &w->est_methods, m)) cost += method_cost(w, m);
    }
    return cost;
}

/* Upper bound of thread id's Thread entry. */
static uint64_t thread_cost(js_jfr_writer *w, uint32_t id)
{
    js_jfr_thread t;
    resolve_thread(w, id, &t);
    return VAR_MAX + str_cost(t.os_name) + LONG_MAX_BYTES + str_cost(t.java_name) + LONG_MAX_BYTES;
}

/* Whether `bytes` more event bytes, plus the pool entries their ids add, keep the file within
 * max_size; the first refusal caps the writer for good. */
static int admit(js_jfr_writer *w, uint32_t thread, uint32_t trace, uint32_t state, uint64_t bytes)
{
    if (w->capped) return 0;
    uint64_t extra = 0;
    if (!js_jfr_set_has(&w->threads, thread)) extra += thread_cost(w, thread);
    if (!js_jfr_set_has(&w->states, state + 1)) extra += STATE_COST;
    if (!js_jfr_set_has(&w->traces, trace)) extra += trace_cost(w, trace);
    if (pos(w) + bytes + w->reserve + extra > w->o.max_size) {
        w->capped = 1;
        return 0;
    }
    w->reserve += extra;
    return 1;
}

/* ---- checkpoint ---- */

/* Start a pool of `count` entries of type; 0 (nothing written) if there are none. */
static int pool_begin(js_jfr_writer *w, uint32_t type, uint64_t count)
{
    if (count) {
        put_var(w, type);
        put_var(w, count);
    }
    return count != 0;
}

/* ThreadState pool; 1 if written, 0 if the chunk has no state. */
static int pool_states(js_jfr_writer *w)
{
    if (!pool_begin(w, JS_JFR_T_THREAD_STATE, w->states.count)) return 0;
    for (uint32_t i = 0, k; (k = js_jfr_set_next(&w->states, &i));) {
        put_var(w, k - 1);
        put_str(w, js_jfr_state_name(k - 1));
    }
    return 1;
}

/* Thread pool: osName, osThreadId, javaName, javaThreadId; 1 if written. */
static int pool_threads(js_jfr_writer *w)
{
    if (!pool_begin(w, JS_JFR_T_THREAD, w->threads.count)) return 0;
    for (uint32_t i = 0, id; (id = js_jfr_set_next(&w->threads, &i));) {
        js_jfr_thread t;
        resolve_thread(w, id, &t);
        put_var(w, id);
        put_str(w, t.os_name);
        put_var(w, t.os_tid);
        put_str(w, t.java_name);
        put_var(w, t.java_tid);
    }
    return 1;
}

/* One inline StackFrame: method key, line, bci, frame type (types outside 0..6 become C++). */
static void put_frame(js_jfr_writer *w, uint32_t method, int32_t line, int32_t bci, uint8_t type)
{
    if (type > 6) type = 4;
    w->frame_types |= 1u << type;
    ref(w, &w->methods, method);
    put_var(w, method);
    put_int(w, line);
    put_int(w, bci);
    put_var(w, type);
}

/* One StackTrace entry from the source, or a single "[unknown]" frame if the source fails. */
static void write_trace(js_jfr_writer *w, uint32_t id)
{
    int truncated;
    int n = resolve_trace(w, id, &truncated);
    put_var(w, id);
    put_u8(w, n > 0 && truncated);
    put_var(w, n > 0 ? (uint64_t)n : 1);
    if (n < 0) put_frame(w, PLACEHOLDER_METHOD, -1, -1, 4);
    for (int i = 0; i < n; i++) {
        const js_jfr_frame *f = &w->frames[i];
        put_frame(w, method_key(w, f->method), f->line, f->bci, f->type);
    }
}

/* StackTrace pool (marks the methods and frame types used); 1 if written. */
static int pool_traces(js_jfr_writer *w)
{
    if (!pool_begin(w, JS_JFR_T_STACK_TRACE, w->traces.count)) return 0;
    for (uint32_t i = 0, id; (id = js_jfr_set_next(&w->traces, &i));) write_trace(w, id);
    return 1;
}

/* FrameType pool with the types the stack traces used; 1 if written. */
static int pool_frame_types(js_jfr_writer *w)
{
    if (!pool_begin(w, JS_JFR_T_FRAME_TYPE, (uint64_t)__builtin_popcount(w->frame_types))) return 0;
    for (uint8_t t = 0; t < 7; t++) {
        if (!(w->frame_types & (1u << t))) continue;
        put_var(w, t);
        put_str(w, js_jfr_frame_type_name(t));
    }
    return 1;
}

/* Method pool: class, name, descriptor, modifiers, hidden (marks the classes used); 1 if written. */
static int pool_methods(js_jfr_writer *w)
{
    if (!pool_begin(w, JS_JFR_T_METHOD, w->methods.count)) return 0;
    for (uint32_t i = 0, m; (m = js_jfr_set_next(&w->methods, &i));) {
        js_jfr_method jm;
        resolve_method(w, m, &jm);
        uint32_t cls = class_key(w, jm.class_name);
        ref(w, &w->classes, cls);
        put_var(w, m);
        put_var(w, cls);
        put_var(w, symbol_n(w, jm.name, strlen(jm.name)));
        put_var(w, symbol_n(w, jm.descriptor, strlen(jm.descriptor)));
        put_int(w, jm.modifiers);
        put_u8(w, jm.hidden != 0);
    }
    return 1;
}

/* Class pool: no class loader, name symbol, package, modifiers 0, not hidden; 1 if written. */
static int pool_classes(js_jfr_writer *w)
{
    if (!pool_begin(w, JS_JFR_T_CLASS, w->classes.count)) return 0;
    for (uint32_t i = 0, c; (c = js_jfr_set_next(&w->classes, &i));) {
        size_t len;
        const char *name = js_jfr_strtab_str(&w->class_names, c, &len);
        put_var(w, c);
        put_var(w, 0);
        put_var(w, symbol_n(w, name, len));
        put_var(w, package_key(w, name, len));
        put_int(w, 0);
        put_u8(w, 0);
    }
    return 1;
}

/* Package pool: each package's key is its name's symbol key; 1 if written. */
static int pool_packages(js_jfr_writer *w)
{
    if (!pool_begin(w, JS_JFR_T_PACKAGE, w->packages.count)) return 0;
    for (uint32_t i = 0, k; (k = js_jfr_set_next(&w->packages, &i));) {
        put_var(w, k);
        put_var(w, k);
    }
    return 1;
}

/* Symbol pool: every string interned in this chunk, as encoding 3; 1 if written. */
static int pool_symbols(js_jfr_writer *w)
{
    if (!pool_begin(w, JS_JFR_T_SYMBOL, w->symbols.count)) return 0;
    uint32_t band = (w->chunk_no - 1) % SYMBOL_BANDS + 1;
    for (uint32_t id = 1; id <= w->symbols.count; id++) {
        size_t len;
        const char *s = js_jfr_strtab_str(&w->symbols, id, &len);
        put_var(w, band << 24 | id);
        put_u8(w, 3);
        put_var(w, len);
        put(w, s, len);
    }
    return 1;
}

/* The chunk's one checkpoint event (delta 0): every pool its events reference, none empty. Pools
 * are written in dependency order (traces mark methods, methods mark classes, classes make
 * packages and symbols), so each count is known when its pool starts. */
static void write_checkpoint(js_jfr_writer *w, uint64_t ticks)
{
    uint64_t at = record_begin(w, 1);
    put_var(w, ticks);
    put_var(w, 0);  /* duration */
    put_var(w, 0);  /* delta: no earlier checkpoint */
    put_u8(w, 1);   /* type: flush */
    uint64_t count_at = reserve5(w);
    int pools = pool_states(w);
    pools += pool_threads(w);
    pools += pool_traces(w);
    pools += pool_frame_types(w);
    pools += pool_methods(w);
    pools += pool_classes(w);
    pools += pool_packages(w);
    pools += pool_symbols(w);
    patch5(w, count_at, (uint64_t)pools);
    record_end(w, at);
}

/* ---- chunks ---- */

/* jdk.ActiveRecording, then one jdk.ActiveSetting per option setting, stamped at ticks. */
static void write_recording(js_jfr_writer *w, uint64_t ticks)
{
    uint64_t at = record_begin(w, JS_JFR_T_ACTIVE_RECORDING);
    put_var(w, ticks);
    put_var(w, 1); /* recording id */
    put_str(w, w->o.recording_name);
    put_str(w, w->path);
    put_var(w, 0); /* maxAge: none */
    put_var(w, w->o.max_size);
    put_var(w, w->start_ms);
    put_var(w, 0); /* duration: not limited */
    record_end(w, at);
    for (int i = 0; i < w->o.nsettings; i++) {
        at = record_begin(w, JS_JFR_T_ACTIVE_SETTING);
        put_var(w, ticks);
        put_var(w, JS_JFR_T_ACTIVE_RECORDING); /* recording-wide setting */
        put_str(w, w->o.settings[i].name);
        put_str(w, w->o.settings[i].value);
        record_end(w, at);
    }
}

/* Empty every per-chunk set and the symbol table. */
static void clear_chunk_sets(js_jfr_writer *w)
{
    js_jfr_set *sets[] = CHUNK_SETS(w);
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) js_jfr_set_clear(sets[i]);
    js_jfr_strtab_clear(&w->symbols);
    w->frame_types = 0;
}

/* Begin a chunk at the current offset: header placeholder, metadata, recording and settings. */
static void start_chunk(js_jfr_writer *w, uint64_t ticks)
{
    w->chunk_no++;
    w->st.chunks++;
    w->chunk_start = pos(w);
    w->chunk_ticks = ticks;
    w->chunk_events = 0;
    w->reserve = CP_BASE;
    clear_chunk_sets(w);
    uint8_t h[JS_JFR_HEADER_SIZE];
    js_jfr_header(h, 0, 0, ticks + (uint64_t)w->clock_offset, 0, ticks, 0);
    put(w, h, JS_JFR_HEADER_SIZE);
    uint64_t at = record_begin(w, 0);
    put_var(w, ticks);
    put_var(w, 0); /* duration */
    put(w, w->meta.p, w->meta.len);
    record_end(w, at);
    write_recording(w, ticks);
    w->chunk_fixed = pos(w) - w->chunk_start;
}

/* End the chunk: checkpoint, write everything out, patch header bytes 8..67. */
static void finish_chunk(js_jfr_writer *w, uint64_t end_ticks, int final)
{
    uint64_t cp = pos(w);
    write_checkpoint(w, end_ticks);
    uint64_t size = pos(w) - w->chunk_start;
    if (flush(w) != 0) return;
    uint8_t h[JS_JFR_HEADER_SIZE];
    uint64_t duration = end_ticks > w->chunk_ticks ? end_ticks - w->chunk_ticks : 0;
    js_jfr_header(h, size, cp - w->chunk_start, w->chunk_ticks + (uint64_t)w->clock_offset, duration, w->chunk_ticks,
                  final);
    int e = write_all(w->fd, h + 8, JS_JFR_HEADER_SIZE - 8, (int64_t)(w->chunk_start + 8));
    if (e) set_error(w, e);
}

/* ---- open / close ---- */

/* Copy the options with defaults applied, the recording name and settings into owned memory. */
static int copy_options(js_jfr_writer *w, const js_jfr_options *o)
{
    static const js_jfr_options none;
    w->o = o ? *o : none;
    if (!w->o.chunk_size) w->o.chunk_size = DEFAULT_CHUNK_SIZE;
    if (w->o.max_depth <= 0) w->o.max_depth = DEFAULT_DEPTH;
    if (w->o.max_depth > DEPTH_LIMIT) w->o.max_depth = DEPTH_LIMIT;
    const char *name = w->o.recording_name ? w->o.recording_name : "jsampler";
    if (w->o.nsettings < 0 || !w->o.settings) w->o.nsettings = 0;
    size_t n = (size_t)w->o.nsettings * sizeof(js_jfr_setting) + strlen(name) + 1;
    for (int i = 0; i < w->o.nsettings; i++)
        n += strlen(w->o.settings[i].name ? w->o.settings[i].name : "") + 1 +
             strlen(w->o.settings[i].value ? w->o.settings[i].value : "") + 1;
    if (!(w->strings = malloc(n))) return -1;
    js_jfr_setting *set = (js_jfr_setting *)(void *)w->strings;
    char *p = w->strings + (size_t)w->o.nsettings * sizeof(js_jfr_setting);
    for (int i = 0; i < w->o.nsettings; i++) {
        set[i].name = p;
        p = stpcpy(p, w->o.settings[i].name ? w->o.settings[i].name : "") + 1;
        set[i].value = p;
        p = stpcpy(p, w->o.settings[i].value ? w->o.settings[i].value : "") + 1;
    }
    w->o.settings = set;
    w->o.recording_name = strcpy(p, name);
    return 0;
}

/* Nanoseconds of a clock. */
static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Allocate everything a writer needs before the file is opened; 0 or -1 out of memory. */
static int init_writer(js_jfr_writer *w, const char *path, const js_jfr_options *o, const js_jfr_source *src)
{
    w->fd = -1;
    if (src) w->src = *src;
    if (!(w->path = strdup(path)) || copy_options(w, o) != 0) return -1;
    if (js_jfr_build_metadata(&w->meta) != 0) return -1;
    w->buf = malloc(BUF_CAP);
    w->frames = calloc((size_t)w->o.max_depth, sizeof *w->frames);
    return w->buf && w->frames ? 0 : -1;
}

/* Release a writer's memory (the file must be closed already). */
static void free_writer(js_jfr_writer *w)
{
    js_jfr_set *sets[] = CHUNK_SETS(w);
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) js_jfr_set_free(sets[i]);
    js_jfr_strtab_free(&w->symbols);
    js_jfr_strtab_free(&w->class_names);
    js_jfr_idmap_free(&w->method_ids);
    js_jfr_bytes_free(&w->meta);
    free(w->frames);
    free(w->buf);
    free(w->strings);
    free(w->path);
    free(w);
}

js_jfr_writer *js_jfr_open(const char *path, const js_jfr_options *o, const js_jfr_source *src, uint64_t start_ticks,
                           char *err, size_t errlen)
{
    js_jfr_writer *w = calloc(1, sizeof *w);
    if (!w || init_writer(w, path, o, src) != 0) {
        snprintf(err, errlen, "cannot write JFR '%s': out of memory", path);
        if (w) free_writer(w);
        return NULL;
    }
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w->fd < 0) set_error(w, errno);
    int64_t real = clock_ns(CLOCK_REALTIME);
    w->clock_offset = real - clock_ns(CLOCK_MONOTONIC);
    w->start_ms = (uint64_t)(((int64_t)start_ticks + w->clock_offset) / 1000000);
    if (!w->err_no) start_chunk(w, start_ticks);
    if (w->err_no || flush(w) != 0) { /* report an unwritable file now, not at the first chunk end */
        fail(w, err, errlen);
        if (w->fd >= 0) close(w->fd);
        free_writer(w);
        return NULL;
    }
    return w;
}

int js_jfr_execution_sample(js_jfr_writer *w, uint64_t ticks, uint32_t thread, uint32_t trace, uint32_t state,
                            uint32_t weight, char *err, size_t errlen)
{
    if (!thread || thread >= KEY_LIMIT || !trace || trace >= KEY_LIMIT || state >= KEY_LIMIT - 1) {
        snprintf(err, errlen, "invalid JFR sample: thread %u, trace %u, state %u", thread, trace, state);
        return -1;
    }
    if (w->err_no) return fail(w, err, errlen);
    if (weight == 0) return 0;
    if (weight > MAX_WEIGHT) weight = MAX_WEIGHT;
    uint8_t ev[2 + 3 * VAR_MAX + LONG_MAX_BYTES];
    size_t n = 1;
    n += js_jfr_varint(ev + n, JS_JFR_T_EXECUTION_SAMPLE);
    n += js_jfr_varint(ev + n, ticks);
    n += js_jfr_varint(ev + n, thread);
    n += js_jfr_varint(ev + n, trace);
    n += js_jfr_varint(ev + n, state);
    ev[0] = (uint8_t)n; /* at most 26: a one-byte size */
    if (w->o.max_size && !admit(w, thread, trace, state, (uint64_t)n * weight)) {
        w->st.dropped_by_cap += weight;
        return w->err_no ? fail(w, err, errlen) : 0;
    }
    ref(w, &w->threads, thread);
    ref(w, &w->traces, trace);
    ref(w, &w->states, state + 1);
    for (uint32_t i = 0; i < weight; i++) put(w, ev, n);
    w->st.events += weight;
    w->chunk_events += weight;
    return w->err_no ? fail(w, err, errlen) : 0;
}

int js_jfr_maybe_rotate(js_jfr_writer *w, uint64_t now_ticks, char *err, size_t errlen)
{
    if (w->err_no) return fail(w, err, errlen);
    int due = pos(w) - w->chunk_start >= w->o.chunk_size ||
              (w->o.chunk_time_ns && now_ticks > w->chunk_ticks && now_ticks - w->chunk_ticks >= w->o.chunk_time_ns);
    if (!due || !w->chunk_events || w->capped) return 0;
    if (w->o.max_size && pos(w) + w->reserve + w->chunk_fixed + CP_BASE > w->o.max_size) {
        w->capped = 1; /* no room for another chunk: this one stays open, later events are dropped */
        return 0;
    }
    finish_chunk(w, now_ticks, 0);
    start_chunk(w, now_ticks);
    return w->err_no ? fail(w, err, errlen) : 0;
}

int js_jfr_close(js_jfr_writer *w, uint64_t end_ticks, char *err, size_t errlen)
{
    if (!w) return 0;
    finish_chunk(w, end_ticks, 1);
    if (close(w->fd) != 0) set_error(w, errno);
    int rc = w->err_no ? fail(w, err, errlen) : 0;
    free_writer(w);
    return rc;
}

void js_jfr_get_stats(const js_jfr_writer *w, js_jfr_stats *st)
{
    *st = w->st;
    st->bytes = pos(w);
}

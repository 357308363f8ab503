/* jfr_write.c - see jfr_write.h. The byte-level rules followed are those of the team's JFR format
 * sheet (jfr-format.md); the chunk layout is its §10: header placeholder, metadata,
 * jdk.ActiveRecording and jdk.ActiveSetting events, sample events, then one checkpoint (delta 0)
 * with every pool entry the chunk references, then bytes 8..67 of the header are patched.
 *
 * Pool keys: threads use the caller's ids; methods get dense ids (1 + the id map's, 1 itself being
 * the "[unknown]" placeholder) and classes dense ids by name, both stable for the writer's life;
 * stack traces are numbered by content within a chunk, symbols and packages per chunk in a key band
 * that changes with every chunk, both because the JDK keeps the previous chunk's value for a reused
 * key. A package's key is the key of its name's symbol. All keys are non-zero and below 2^31.
 *
 * Files: this one (chunks, open/close, events, the checkpoint that ends a chunk), jfr_write_out.c (output layer),
 * jfr_write_cp.c (the checkpoint's pools and the size estimates), jfr_write_trace.c (the chunk's stack traces, taken at
 * their first event and written once per content).
 */
#include "jfr/jfr_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jfr_write_int.h"
#include "util/safefile.h"

/* ---- chunks ---- */

/* jdk.ActiveRecording, then one jdk.ActiveSetting per option setting, stamped at ticks. */
static void write_recording(js_jfr_writer *w, uint64_t ticks)
{
    uint64_t at = js_jfrw_record_begin(w, js_jfrw_type(w, JS_JFR_T_ACTIVE_RECORDING));
    js_jfrw_put_var(w, js_jfrw_tick(w, ticks));
    js_jfrw_put_var(w, 1); /* recording id */
    js_jfrw_put_str(w, w->o.recording_name);
    js_jfrw_put_str(w, w->path);
    js_jfrw_put_var(w, 0); /* maxAge: none */
    js_jfrw_put_var(w, w->o.max_size);
    js_jfrw_put_var(w, w->start_ms);
    js_jfrw_put_var(w, 0); /* duration: not limited */
    js_jfrw_record_end(w, at);
    for (int i = 0; i < w->o.nsettings; i++) {
        at = js_jfrw_record_begin(w, js_jfrw_type(w, JS_JFR_T_ACTIVE_SETTING));
        js_jfrw_put_var(w, js_jfrw_tick(w, ticks));
        js_jfrw_put_var(w, js_jfrw_type(w, JS_JFR_T_ACTIVE_RECORDING)); /* recording-wide setting */
        js_jfrw_put_str(w, w->o.settings[i].name);
        js_jfrw_put_str(w, w->o.settings[i].value);
        js_jfrw_record_end(w, at);
    }
}

/* Empty every per-chunk set and the symbol table. */
static void clear_chunk_sets(js_jfr_writer *w)
{
    js_jfr_set *sets[] = CHUNK_SETS(w);
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) js_jfr_set_clear(sets[i]);
    js_jfr_strtab_clear(&w->symbols);
    js_jfrw_trace_reset(w);
    w->frame_types = 0;
}

/* Begin a chunk at the current offset: header placeholder, metadata, recording and settings. */
static void start_chunk(js_jfr_writer *w, uint64_t ticks)
{
    w->chunk_no++;
    w->st.chunks++;
    w->chunk_start = js_jfrw_pos(w);
    w->chunk_ticks = ticks;
    w->chunk_events = 0;
    w->reserve = CP_BASE;
    clear_chunk_sets(w);
    uint8_t h[JS_JFR_HEADER_SIZE];
    js_jfr_header(h, 0, 0, ticks + (uint64_t)w->clock_offset, 0, js_jfrw_tick(w, ticks), 0);
    js_jfrw_put(w, h, JS_JFR_HEADER_SIZE);
    uint64_t at = js_jfrw_record_begin(w, 0);
    js_jfrw_put_var(w, js_jfrw_tick(w, ticks));
    js_jfrw_put_var(w, 0); /* duration */
    js_jfrw_put(w, w->meta.p, w->meta.len);
    js_jfrw_record_end(w, at);
    write_recording(w, ticks);
    w->chunk_fixed = js_jfrw_pos(w) - w->chunk_start;
}

/* The chunk's last checkpoint event (its delta points to the chunk's previous one, if any): every pool its events
 * reference that is not yet written, in dependency order, so each count is known when its pool starts. */
static void write_checkpoint(js_jfr_writer *w, uint64_t ticks)
{
    uint64_t at = js_jfrw_record_begin(w, 1);
    js_jfrw_put_var(w, js_jfrw_tick(w, ticks));
    js_jfrw_put_var(w, 0);  /* duration */
    js_jfrw_put_var(w, w->last_cp ? (uint64_t)(int64_t)(w->last_cp - at) : 0); /* delta: the previous one, or none */
    js_jfrw_put_u8(w, 1);   /* type: flush */
    uint64_t count_at = js_jfrw_reserve5(w);
    int pools = js_jfrw_cp_threads(w);
    pools += js_jfrw_trace_pool(w);
    pools += js_jfrw_cp_names(w);
    js_jfrw_patch5(w, count_at, (uint64_t)pools);
    js_jfrw_record_end(w, at);
}

/* End the chunk: its last checkpoint, write everything out, patch header bytes 8..67. */
static void finish_chunk(js_jfr_writer *w, uint64_t end_ticks, int final)
{
    uint64_t cp = js_jfrw_pos(w);
    write_checkpoint(w, end_ticks);
    uint64_t size = js_jfrw_pos(w) - w->chunk_start;
    if (js_jfrw_flush(w) != 0) return;
    uint8_t h[JS_JFR_HEADER_SIZE];
    uint64_t duration = end_ticks > w->chunk_ticks ? end_ticks - w->chunk_ticks : 0;
    js_jfr_header(h, size, cp - w->chunk_start, w->chunk_ticks + (uint64_t)w->clock_offset, duration, js_jfrw_tick(w, w->chunk_ticks),
                  final);
    int e = js_jfrw_write_all(w->fd, h + 8, JS_JFR_HEADER_SIZE - 8, (int64_t)(w->chunk_start + 8));
    struct stat st;
    if (!e && fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 0) e = ENOENT; /* removed under us */
    if (e) js_jfrw_set_error(w, e);
}

/* ---- open / close ---- */

/* Copy the options with defaults applied, the recording name and settings into owned memory. */
static int copy_options(js_jfr_writer *w, const js_jfr_options *o)
{
    static const js_jfr_options none;
    w->o = o ? *o : none;
    if (!w->o.chunk_size) w->o.chunk_size = DEFAULT_CHUNK_SIZE;
    if (w->o.max_depth <= 0) w->o.max_depth = DEFAULT_DEPTH;
    if (!w->o.trace_buffer) w->o.trace_buffer = TRACE_FLUSH_BYTES;
    if (w->o.max_depth > DEPTH_LIMIT) w->o.max_depth = DEPTH_LIMIT;
    if (w->o.type_base > JS_JFR_TYPE_BASE_MAX) w->o.type_base = JS_JFR_TYPE_BASE_MAX;
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
    if (js_jfr_build_metadata(&w->meta, w->o.type_base) != 0) return -1;
    w->buf = malloc(BUF_CAP);
    w->frames = calloc((size_t)w->o.max_depth, sizeof *w->frames);
    w->tmeth = calloc((size_t)w->o.max_depth + 1, sizeof *w->tmeth);
    return w->buf && w->frames && w->tmeth ? 0 : -1;
}

/* Release a writer's memory (the file must be closed already). */
static void free_writer(js_jfr_writer *w)
{
    js_jfr_set *sets[] = CHUNK_SETS(w);
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) js_jfr_set_free(sets[i]);
    js_jfr_strtab_free(&w->symbols);
    js_jfrw_trace_free(w);
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
    js_safe_file sf; /* streamed: the path itself, so the chunks written so far are there whatever happens */
    if (js_safe_open(&sf, "JFR", path, JS_SAFE_STREAM, err, errlen) != 0) {
        free_writer(w);
        return NULL;
    }
    w->fd = sf.fd;
    int64_t real = clock_ns(CLOCK_REALTIME);
    w->clock_offset = real - clock_ns(CLOCK_MONOTONIC);
    w->start_ms = (uint64_t)(((int64_t)start_ticks + w->clock_offset) / 1000000);
    w->tick_base = start_ticks > TICK_SLACK ? start_ticks - TICK_SLACK : 0;
    if (!w->err_no) start_chunk(w, start_ticks);
    if (w->err_no || js_jfrw_flush(w) != 0) { /* report an unwritable file now, not at the first chunk end */
        js_jfrw_fail(w, err, errlen);
        if (w->fd >= 0) close(w->fd);
        free_writer(w);
        return NULL;
    }
    return w;
}

int js_jfr_execution_sample(js_jfr_writer *w, uint64_t ticks, uint32_t thread, uint64_t trace, uint32_t state,
                            uint32_t weight, char *err, size_t errlen)
{
    if (!thread || thread >= KEY_LIMIT || !trace || state >= KEY_LIMIT - 1) {
        snprintf(err, errlen, "invalid JFR sample: thread %u, trace %llu, state %u", thread, (unsigned long long)trace,
                 state);
        return -1;
    }
    if (w->err_no) return js_jfrw_fail(w, err, errlen);
    if (weight == 0) return 0;
    if (weight > MAX_WEIGHT) weight = MAX_WEIGHT;
    if (w->capped) {
        w->st.dropped_by_cap += weight;
        return 0;
    }
    js_jfrw_trace_ref ref;
    if (js_jfrw_trace_resolve(w, trace, &ref) != 0) return js_jfrw_fail(w, err, errlen); /* the only pull this chunk */
    uint8_t ev[3 + 3 * VAR_MAX + LONG_MAX_BYTES]; /* size, type (2 bytes with a type_base), ... */
    size_t n = 1;
    n += js_jfr_varint(ev + n, js_jfrw_type(w, JS_JFR_T_EXECUTION_SAMPLE));
    n += js_jfr_varint(ev + n, js_jfrw_tick(w, ticks));
    n += js_jfr_varint(ev + n, thread);
    n += js_jfr_varint(ev + n, ref.key);
    n += js_jfr_varint(ev + n, state);
    ev[0] = (uint8_t)n; /* at most 27: a one-byte size */
    if (w->o.max_size && !js_jfrw_admit(w, thread, &ref, state, (uint64_t)n * weight)) {
        w->st.dropped_by_cap += weight;
        return w->err_no ? js_jfrw_fail(w, err, errlen) : 0;
    }
    if (js_jfrw_trace_take(w, trace, &ref, ticks) != 0) return js_jfrw_fail(w, err, errlen);
    js_jfrw_ref(w, &w->threads, thread);
    js_jfrw_ref(w, &w->states, state + 1);
    for (uint32_t i = 0; i < weight; i++) js_jfrw_put(w, ev, n);
    w->st.events += weight;
    w->chunk_events += weight;
    return w->err_no ? js_jfrw_fail(w, err, errlen) : 0;
}

int js_jfr_maybe_rotate(js_jfr_writer *w, uint64_t now_ticks, char *err, size_t errlen)
{
    if (w->err_no) return js_jfrw_fail(w, err, errlen);
    int due = js_jfrw_pos(w) - w->chunk_start + w->tpend_len >= w->o.chunk_size || js_jfrw_trace_index_full(w) ||
              (w->o.chunk_time_ns && now_ticks > w->chunk_ticks && now_ticks - w->chunk_ticks >= w->o.chunk_time_ns);
    if (!due || !w->chunk_events || w->capped) return 0;
    if (w->o.max_size && js_jfrw_pos(w) + w->reserve + w->chunk_fixed + CP_BASE > w->o.max_size) {
        w->capped = 1; /* no room for another chunk: this one stays open, later events are dropped */
        return 0;
    }
    finish_chunk(w, now_ticks, 0);
    start_chunk(w, now_ticks);
    return w->err_no ? js_jfrw_fail(w, err, errlen) : 0;
}

int js_jfr_end_chunk(js_jfr_writer *w, uint64_t now_ticks, char *err, size_t errlen)
{
    if (w->err_no) return js_jfrw_fail(w, err, errlen);
    if (!w->chunk_events || w->capped) return 0;
    if (w->o.max_size && js_jfrw_pos(w) + w->reserve + w->chunk_fixed + CP_BASE > w->o.max_size) return 0;
    finish_chunk(w, now_ticks, 0);
    start_chunk(w, now_ticks);
    return w->err_no ? js_jfrw_fail(w, err, errlen) : 0;
}

int js_jfr_close(js_jfr_writer *w, uint64_t end_ticks, char *err, size_t errlen)
{
    if (!w) return 0;
    finish_chunk(w, end_ticks, 1);
    if (close(w->fd) != 0) js_jfrw_set_error(w, errno);
    int rc = w->err_no ? js_jfrw_fail(w, err, errlen) : 0;
    free_writer(w);
    return rc;
}

void js_jfr_get_stats(const js_jfr_writer *w, js_jfr_stats *st)
{
    *st = w->st;
    st->bytes = js_jfrw_pos(w);
}

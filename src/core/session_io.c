/* session_io.c - a session's outputs: the streamed JFR recording, the folded profile for text
 * formats, and what stop, dump and loop= write. */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/dump.h"
#include "core/fold.h"
#include "core/jfr_stream.h"
#include "core/jfrsync.h"
#include "core/live.h"
#include "core/methodids.h"
#include "core/names.h"
#include "session_int.h"
#include "core/stats_format.h"
#include "core/java_names.h"
#include "core/vmevents.h"
#include "engine/engine.h"
#include "sample/sampler.h"
#include "sample/stats.h"
#include "sample/trap.h"
#include "util/log.h"
#include "util/monotime.h"

/* Path of the session's JFR recording for file number seq ("" if none). -1 if too long. */
static int jfr_path(const js_args *a, unsigned seq, char *out, size_t outlen)
{
    const char *pattern = "";
    if (a->file[0] && js_args_output_format(a, a->file) == JS_OUT_JFR) pattern = a->file;
    else if (a->jfrfile[0]) pattern = a->jfrfile;
    return js_expand_path_seq(pattern, (int)getpid(), (long long)time(NULL), seq, out, outlen);
}

/* Start the JFR stream for file number seq if the session has one. */
static js_status start_jfr(unsigned seq, char *out, size_t outlen)
{
    char path[JS_PATH_MAX], err[768];
    if (jfr_path(&js_sess.args, seq, path, sizeof path) != 0) {
        snprintf(out, outlen, "JFR output path is too long after expansion");
        return JS_ERR_ARGS;
    }
    if (!path[0]) return JS_OK;
    js_sess.jfrsync_path[0] = 0;
    char stream[JS_PATH_MAX + 16];
    const char *to = path;
    const js_args *a = &js_sess.args;
    if (a->jfrsync[0]) { /* the JDK's recording first: its chunks lead the file */
        unsigned kinds = (js_kind_on(a, JS_KIND_EXEC) ? JS_JFRSYNC_CPU : 0) |
                         (js_kind_on(a, JS_KIND_ALLOC) ? JS_JFRSYNC_ALLOC : 0) | (js_kind_on(a, JS_KIND_LOCK) ? JS_JFRSYNC_LOCK : 0);
        if (js_jfrsync_start(js_sess.vm, a->jfrsync, kinds, path, err, sizeof err) != 0) {
            snprintf(out, outlen, "%s", err);
            return JS_ERR_IO;
        }
        js_jfrsync_stream_path(path, stream, sizeof stream);
        to = stream;
        snprintf(js_sess.jfrsync_path, sizeof js_sess.jfrsync_path, "%s", path);
    }
    if (js_jfr_stream_start(js_sess.vm, to, a, js_sess.stores[0], js_sess.stores[1], err, sizeof err) != 0) {
        snprintf(out, outlen, "%s", err);
        if (js_sess.jfrsync_path[0]) js_jfrsync_abort(js_sess.vm);
        js_sess.jfrsync_path[0] = 0;
        return JS_ERR_IO;
    }
    js_sess.jfr = 1;
    return JS_OK;
}

js_status js_session_open_outputs(const js_args *a, char *out, size_t outlen)
{
    js_sess.jfr = 0;
    js_sess.text_output = js_args_output_format(a, a->file) != JS_OUT_JFR;
    if (a->action != JS_ACTION_RESUME || !js_sess.retained) { /* resume adds to the last session's profiles */
        js_fold_free_profiles(js_sess.profiles);
        js_fold_init_profiles(js_sess.profiles);
        js_sess.samples_kept = 0;
    }
    js_sess.retained = 0;
    js_sess.file_started_ns = js_mono_ns();
    js_status st = start_jfr(0, out, outlen);
    if (st != JS_OK) js_error("%s", out);
    return st;
}

void js_session_close_outputs(int keep_profiles)
{
    char ignored[512];
    if (js_sess.jfr) js_jfr_stream_stop(0, ignored, sizeof ignored);
    if (js_sess.jfr && js_sess.jfrsync_path[0]) js_jfrsync_abort(js_sess.vm);
    js_sess.jfrsync_path[0] = 0;
    js_sess.jfr = 0;
    if (keep_profiles) return;
    js_fold_free_profiles(js_sess.profiles);
    js_fold_init_profiles(js_sess.profiles);
}

/* Output options of the request override the session's; names (threads, lines, sig) were fixed
 * when the samples were folded, so only where and how the profile is written can change. An in-process
 * caller's request (capture) writes where it says (its file=, else to the caller), never to the session's file. */
static js_args output_args(const js_args *req)
{
    js_args o = js_sess.args;
    o.capture = req->capture;
    if (req->capture) o.file[0] = 0;
    if (req->file[0]) snprintf(o.file, sizeof o.file, "%s", req->file);
    if (req->file[0] && req->format == JS_OUT_NONE && js_out_format_from_path(req->file) == JS_OUT_NONE)
        o.format = js_args_output_format(&js_sess.args, js_sess.args.file); /* no extension: the session's format */
    if (req->format != JS_OUT_NONE) o.format = req->format, o.flat_top = req->flat_top;
    if (req->counter != JS_COUNTER_DEFAULT) o.counter = req->counter;
    if (req->names != JS_NAMES_ASPROF) o.names = req->names;
    o.simple |= req->simple;
    o.norm |= req->norm;
    o.ann |= req->ann;
    if (req->title[0]) snprintf(o.title, sizeof o.title, "%s", req->title);
    if (req->include[0]) snprintf(o.include, sizeof o.include, "%s", req->include);
    if (req->exclude[0]) snprintf(o.exclude, sizeof o.exclude, "%s", req->exclude);
    o.reverse |= req->reverse;
    return o;
}

/* Add the weight dropped since the last file as a pseudo-frame, so totals add up (signal samples: the
 * profile of the execution event, else wall's). */
static void add_drops(js_profile profiles[JS_KINDS])
{
    js_stats_snapshot s;
    js_stats_get(&s);
    js_profile *p = &profiles[js_kind_on(&js_sess.args, JS_KIND_EXEC) ? JS_KIND_EXEC : JS_KIND_WALL];
    if (s.dropped_weight > js_sess.dropped_written) js_fold_pseudo(p, "[dropped: buffers full]", s.dropped_weight - js_sess.dropped_written);
    js_sess.dropped_written = s.dropped_weight;
}

/* With live, the allocation profile p becomes that of the samples whose objects are still alive (logged: how many
 * samples found no room to be tracked). */
static void live_alloc(js_profile *p)
{
    if (!js_sess.args.live || !js_kind_on(&js_sess.args, JS_KIND_ALLOC)) return;
    char err[256];
    if (js_live_profile(js_session_env(), &js_sess.args, p, err, sizeof err) != 0) js_error("%s", err);
    uint64_t lost = js_live_untracked();
    if (lost)
        js_warn("live: %llu allocation samples could not be tracked (more than %d alive at once); they are left out",
                (unsigned long long)lost, JS_LIVE_MAX);
}

/* Replace each %e of pattern by name (other % sequences are left for js_expand_path_seq). -1 if too long. */
static int expand_event(const char *pattern, const char *name, char *out, size_t outlen)
{
    size_t o = 0;
    for (const char *p = pattern; *p; p++) {
        const char *add = p;
        size_t n = 1;
        if (p[0] == '%' && p[1] == '%') n = 2, p++;
        else if (p[0] == '%' && p[1] == 'e') add = name, n = strlen(name), p++;
        if (o + n >= outlen) return -1;
        memcpy(out + o, add, n);
        o += n;
    }
    if (!outlen) return -1;
    out[o] = 0;
    return 0;
}

/* Write each recorded kind's profile as the session's text output with o (file expanded with the kind's
 * name for %e and seq); the messages joined into msg. -1 if any failed. */
static int write_text(js_profile profiles[JS_KINDS], const js_args *o, unsigned seq, char *msg, size_t msglen)
{
    int rc = 0;
    msg[0] = 0;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t mono = js_mono_ns(), since = mono > js_sess.file_started_ns ? mono - js_sess.file_started_ns : 0;
    int64_t real = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    for (int k = 0; k < JS_KINDS; k++) {
        js_dump_meta meta = {(js_kind)k, real - (int64_t)since, (int64_t)since, NULL};
        if (!js_kind_on(&js_sess.args, (js_kind)k)) continue;
        js_args w = *o;
        char one[1024], pattern[JS_PATH_MAX];
        if (w.file[0] && (expand_event(o->file, js_kind_name(&js_sess.args, (js_kind)k), pattern, sizeof pattern) != 0 ||
                          js_expand_path_seq(pattern, (int)getpid(), (long long)time(NULL), seq, w.file, sizeof w.file) != 0)) {
            snprintf(one, sizeof one, "output path '%s' is too long after expansion", o->file);
            rc = -1;
        } else if (js_dump_write_profile(&profiles[k], &w, &meta, one, sizeof one) != 0) {
            rc = -1;
        }
        size_t n = strlen(msg);
        snprintf(msg + n, msglen - n, "%s%s", n ? "\n" : "", one);
    }
    return rc;
}

/* Append line to out (one reply may carry several lines). */
static void append(char *out, size_t outlen, const char *line)
{
    size_t n = strlen(out);
    if (n && n + 1 < outlen) out[n++] = '\n', out[n] = 0;
    snprintf(out + n, outlen - n, "%s", line);
}

/* Log the end-of-session summary line (unless quiet). */
static void log_summary(void)
{
    if (js_sess.args.quiet) return;
    js_stats_snapshot s;
    js_stats_get(&s);
    char buf[1024];
    js_stats_format(&s, buf, sizeof buf);
    for (char *p = buf; (p = strchr(p, '\n')) != NULL;) *p = ' ';
    js_info("profiling stopped: engine=%s %s rotations=%llu", js_sess.eng.engine, buf,
            (unsigned long long)atomic_load(&js_sess.rotations));
    if (js_trap_hw_strays() > 0) /* a function event's breakpoint trap that the kernel passed on (see trap.h) */
        js_warn("%llu debug traps at a function event's hardware breakpoint reached the process in its life; each was "
                "absorbed and the function ran on", (unsigned long long)js_trap_hw_strays());
    if (s.samples == 0 && strcmp(js_sess.eng.engine, "none") != 0) { /* say why a recording holds no sample */
        char wall[64] = "";
        if (js_sess.args.wall_ns > 0)
            snprintf(wall, sizeof wall, "; the wall timer sent %llu signals", (unsigned long long)js_engine_wall_signals());
        js_warn("no samples in this session: the handler saw %llu signals while sampling (%llu throttled, %llu dropped, "
                "%llu not its own, %llu taking no sample: a wall tick already counted or outside begin/end) and %llu "
                "while not sampling; per-thread counters or timers were attached to %d threads%s",
                (unsigned long long)(s.throttled + s.dropped + s.foreign + s.unsampled),
                (unsigned long long)s.throttled, (unsigned long long)s.dropped, (unsigned long long)s.foreign,
                (unsigned long long)s.unsampled, (unsigned long long)s.unarmed, js_arming_attached(), wall);
    }
}

js_status js_session_stop_locked(const js_args *req, int from_housekeeper, char *out, size_t outlen)
{
    js_java_names_refresh(); /* threads renamed since the last refresh: their names as the output is written */
    atomic_store(&js_sess.state, JS_STATE_STOPPING);
    atomic_store(&js_sess.hk_stop, 1);
    if (js_sess.hk_started && !from_housekeeper) pthread_join(js_sess.hk, NULL);
    else if (js_sess.hk_started) pthread_detach(js_sess.hk);
    js_sess.hk_started = 0;
    js_vmevents_stop();
    int left = js_arming_stop();
    js_methodids_off(); /* no sample comes any more: classes loaded until the next start make no ids */
    js_store *active = js_sess.stores[js_sess.active]; /* folded below even if abandoned: reading it is safe */
    if (left) {
        js_warn("%d signal handler(s) still running 1 s after sampling stopped; their buffers are abandoned", left);
        js_sess.stores[0] = js_sess.stores[1] = NULL; /* never reset or reuse what a handler may still write */
        atomic_fetch_add(&js_sess.abandoned_stores, 2);
    }
    log_summary();
    out[0] = 0;
    js_status st = JS_OK;
    char msg[1024];
    if (js_sess.jfr) {
        if (js_jfr_stream_stop(left > 0, msg, sizeof msg) != 0) st = JS_ERR_IO, js_log_lines(JS_LOG_ERROR, msg);
        else js_log_lines(JS_LOG_INFO, msg);
        append(out, outlen, msg);
        if (js_sess.jfrsync_path[0]) { /* the JDK's chunks, then ours, into the output */
            if (js_jfrsync_finish(js_sess.vm, js_sess.jfrsync_path, msg, sizeof msg) != 0)
                st = JS_ERR_IO, js_log_lines(JS_LOG_ERROR, msg);
            else js_log_lines(JS_LOG_INFO, msg);
            append(out, outlen, msg);
            js_sess.jfrsync_path[0] = 0;
        }
        js_sess.jfr = 0;
    }
    js_args o = output_args(req);
    js_stats_snapshot snap;
    js_stats_get(&snap);
    js_sess.samples_kept += snap.samples;
    if (js_args_output_format(&o, o.file) != JS_OUT_JFR) {
        char err[512];
        if (active && js_fold_store(active, &js_sess.args, js_sess.profiles, err, sizeof err) != 0)
            js_error("%s", err);
        add_drops(js_sess.profiles);
        live_alloc(&js_sess.profiles[JS_KIND_ALLOC]);
        js_sess.retained = js_sess.text_output;
        /* An in-process caller's plain stop (no file=, no format, none at start) writes nothing: the profile is
         * kept for a dump, as async-profiler's API does. */
        int silent = req->capture && !o.file[0] && req->format == JS_OUT_NONE && js_sess.args.format == JS_OUT_NONE;
        if (silent) {
            append(out, outlen, "profiling stopped; the profile is kept for dump");
        } else if (write_text(js_sess.profiles, &o, js_sess.seq, msg, sizeof msg) != 0) {
            st = JS_ERR_IO, js_log_lines(JS_LOG_ERROR, msg);
            append(out, outlen, msg);
        } else {
            if (!js_sess.args.quiet) js_log_lines(JS_LOG_INFO, msg);
            append(out, outlen, msg);
        }
    }
    js_live_enable(js_session_env(), 0); /* the weak references go; a kept profile already has what was alive */
    if (!js_sess.retained) {
        js_fold_free_profiles(js_sess.profiles);
        js_fold_init_profiles(js_sess.profiles);
    }
    atomic_store(&js_sess.state, JS_STATE_IDLE);
    atomic_store(&js_sess.trim_due, 1); /* after the lock is released: js_session_trim_if_due */
    return st;
}

js_status js_session_write_retained(const js_args *req, char *out, size_t outlen)
{
    js_args o = output_args(req);
    if (js_args_output_format(&o, o.file) == JS_OUT_JFR) {
        snprintf(out, outlen, "the last session's profile is kept as text only; its JFR recording is in its file");
        return JS_ERR_ARGS;
    }
    out[0] = 0;
    if (write_text(js_sess.profiles, &o, js_sess.seq, out, outlen) != 0) {
        js_log_lines(JS_LOG_ERROR, out);
        return JS_ERR_IO;
    }
    return JS_OK;
}

js_status js_session_dump_locked(const js_args *req, char *out, size_t outlen)
{
    js_java_names_refresh();
    js_args o = output_args(req);
    if (js_args_output_format(&o, o.file) == JS_OUT_JFR) { /* the session's recording, complete up to now */
        if (!js_sess.jfr) {
            snprintf(out, outlen, "dump,jfr: no JFR recording is being written (start with file=NAME.jfr or jfrfile=)");
            return JS_ERR_ARGS;
        }
        if (js_sess.jfrsync_path[0]) {
            snprintf(out, outlen, "dump,jfr: with jfrsync the file is written whole at stop");
            return JS_ERR_ARGS;
        }
        const char *other = req->file[0] && strcmp(req->file, js_sess.args.file) != 0 ? req->file : NULL;
        if (js_jfr_stream_dump(other, out, outlen) != 0) {
            js_log_lines(JS_LOG_ERROR, out);
            return JS_ERR_IO;
        }
        return JS_OK;
    }
    char err[512];
    js_profile snap[JS_KINDS];
    js_fold_init_profiles(snap);
    int rc = 0;
    if (js_sess.text_output) { /* everything so far: rotate, then copy the folded profiles */
        if (js_session_rotate(err, sizeof err) != 0) js_warn("%s", err);
        for (int k = 0; k < JS_KINDS && rc == 0; k++) rc = js_fold_copy(&snap[k], &js_sess.profiles[k]);
        if (rc == 0) live_alloc(&snap[JS_KIND_ALLOC]);
    } else { /* a JFR session folds nothing: name what the active store holds */
        rc = js_fold_store(js_sess.stores[js_sess.active], &js_sess.args, snap, err, sizeof err);
    }
    js_status st = JS_OK;
    if (rc != 0) {
        snprintf(out, outlen, "out of memory building the profile");
        st = JS_ERR_IO;
    } else if (write_text(snap, &o, js_sess.seq, out, outlen) != 0) {
        js_log_lines(JS_LOG_ERROR, out);
        st = JS_ERR_IO;
    }
    js_fold_free_profiles(snap);
    return st;
}

/* Methods whose names are kept cached across sessions and loop= files; past it the cache is emptied (a few
 * hundred bytes a method with its line table: about 20 MB at most), and within a session those not used lately are
 * forgotten. A variable only so that tests can lower it. */
unsigned js_session_names_keep = 65536u;

#define TRIM_SLOW_NS 1000000000ULL /* a trim this long is logged */

void js_session_trim_if_due(void)
{
    /* What a session's folding and writing freed stays with the C library's arenas otherwise (a stress run's RSS grew
     * by the memory malloc held free, not by memory in use: docs/BENCHMARKS.md); give it back to the system. It runs
     * with no lock of ours held: it takes each arena's lock and madvises every free page range, which on a busy
     * virtual machine (each madvise a TLB shootdown across the vCPUs) may take seconds, and no command waits on it. */
    if (!atomic_load_explicit(&js_sess.trim_due, memory_order_relaxed) || !atomic_exchange(&js_sess.trim_due, 0))
        return; /* read first: the housekeeper asks every round, and a write would take the cache line each time */
    uint64_t t0 = js_mono_ns();
    malloc_trim(0);
    uint64_t took = js_mono_ns() - t0;
    if (took >= TRIM_SLOW_NS)
        js_warn("giving the memory malloc held free back to the system (malloc_trim) took %.1f s", took / 1e9);
    else js_debug("malloc_trim took %.1f ms", took / 1e6);
}

void js_session_trim_names(void)
{
    uint64_t forgot = js_names_trim(js_session_names_keep);
    if (forgot) js_info("method-name cache: %llu methods cached, over %u: emptied (live ones are named again)",
                        (unsigned long long)forgot, js_session_names_keep);
}

void js_session_age_names(int now)
{
    uint64_t chunks = js_jfr_stream_chunks_ended();
    int due = now || (js_sess.jfr ? chunks != js_sess.aged_chunks : js_sess.rotated_since_age);
    if (!due) return;
    js_sess.rotated_since_age = 0;
    /* Over the bound (the JFR writer may add names meanwhile: the age goes by this reading), what is yet to be folded
     * or written is touched first, so that it is not forgotten. */
    int over = js_names_cached() > js_session_names_keep;
    if (over) {
        js_names_touch_store(js_sess.stores[js_sess.active]);
        js_live_touch_names();
    }
    uint64_t forgot = js_names_age(over ? js_session_names_keep : UINT64_MAX);
    /* A chunk that ended while this ran had its names looked up in this age: the next age waits for the next chunk. */
    js_sess.aged_chunks = js_jfr_stream_chunks_ended();
    if (forgot && !js_sess.aged_logged) {
        js_sess.aged_logged = 1;
        js_info("method-name cache: over %u methods cached; %llu not sampled since the last JFR chunk or store "
                "rotation forgotten (said once a session; live ones are named again)", js_session_names_keep,
                (unsigned long long)forgot);
    }
}

void js_session_next_file(void)
{
    char msg[1024], err[512], path[JS_PATH_MAX];
    int switching = 0;
    if (js_sess.jfr) { /* the next JFR file takes the stores from the rotation below on: no sample falls between */
        if (jfr_path(&js_sess.args, js_sess.seq + 1, path, sizeof path) != 0)
            snprintf(err, sizeof err, "JFR output path is too long after expansion");
        else if (js_jfr_stream_switch(path, &js_sess.args, js_sess.gen + 1, err, sizeof err) == 0)
            switching = 1;
        if (!switching) js_error("loop: %s; the JFR recording goes on in its current file", err);
    }
    if ((js_sess.text_output || switching) && js_session_rotate(err, sizeof err) != 0) js_warn("%s", err);
    if (js_sess.text_output) {
        add_drops(js_sess.profiles);
        if (write_text(js_sess.profiles, &js_sess.args, js_sess.seq, msg, sizeof msg) != 0) js_log_lines(JS_LOG_ERROR, msg);
        else js_log_lines(JS_LOG_INFO, msg);
        js_fold_free_profiles(js_sess.profiles);
        js_fold_init_profiles(js_sess.profiles);
        js_sess.file_started_ns = js_mono_ns();
    }
    if (switching) {
        if (js_jfr_stream_end_switch(msg, sizeof msg) != 0) js_log_lines(JS_LOG_ERROR, msg);
        else js_log_lines(JS_LOG_INFO, msg);
    }
    js_sess.seq++;
    js_session_age_names(1); /* a session of loop= files may run for weeks: its cache is bounded at each file */
    atomic_store(&js_sess.trim_due, 1);
}

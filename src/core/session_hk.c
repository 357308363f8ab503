/* session_hk.c - the session's housekeeping thread and its pair of call-trace stores.
 *
 * Every TICK_MS the housekeeper resolves names of traces new in the active store (while their
 * classes are alive), swaps the stores when the active one passes half of any capacity, writes
 * loop= files when due and ends the session at timeout=. Every RESCAN_TICKS it attaches the
 * engine to threads found in /proc. It never blocks on js_cmd_lock (trylock; a command that
 * holds the lock may be waiting to join this thread).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/fold.h"
#include "core/jfr_stream.h"
#include "core/names.h"
#include "session_int.h"
#include "core/stats_format.h"
#include "sample/sampler.h"
#include "sample/stats.h"
#include "util/log.h"

#define STORE_TRACES (1u << 16)
#define STORE_FRAMES (4ull << 20) /* 64 MiB of address space per store, touched only as used */
#define STORE_PAIRS (1u << 18)
#define ROTATE_FRAMES (1ull << 20) /* swap past 16 MiB of frames: resident frames stay under ~2 x 16 MiB */
#define TICK_MS 50
#define RESCAN_TICKS 10

int js_session_stores_ready(char *err, size_t errlen)
{
    for (int i = 0; i < 2; i++) {
        if (!js_sess.stores[i] && !(js_sess.stores[i] = js_store_create(STORE_TRACES, STORE_FRAMES, STORE_PAIRS, err, errlen)))
            return -1;
        js_store_reset(js_sess.stores[i]);
    }
    js_store_set_gen(js_sess.stores[js_sess.active], ++js_sess.gen);
    js_sess.names_cursor = 0;
    return 0;
}

void js_session_reset_counters(void)
{
    atomic_store(&js_sess.rotations, 0);
    atomic_store(&js_sess.unaggregated_weight, 0);
    js_sess.dropped_written = 0;
    js_sess.throttle_logged = 0;
    js_sess.seq = 0;
}

/* 1 when the active store has passed half of a capacity (or the frame threshold). */
static int store_full(const js_store *s)
{
    js_store_fill f;
    js_store_usage(s, &f);
    return f.traces >= f.max_traces / 2 || f.frames >= ROTATE_FRAMES || f.frames >= f.max_frames / 2 ||
           f.pairs >= f.max_pairs / 2;
}

int js_session_rotate(char *err, size_t errlen)
{
    int old_i = js_sess.active, next_i = 1 - js_sess.active;
    if (!js_sess.stores[next_i] && !(js_sess.stores[next_i] = js_store_create(STORE_TRACES, STORE_FRAMES, STORE_PAIRS, err,
                                                                  errlen)))
        return -1;
    js_store *next = js_sess.stores[next_i];
    js_store_set_gen(next, ++js_sess.gen);
    js_store *old = js_sampler_swap_store(next);
    js_sess.active = next_i;
    js_sess.names_cursor = 0;
    atomic_fetch_add(&js_sess.rotations, 1);
    if (!old) {
        /* A handler is still inside it after 1 s: leave it to that handler, never reuse it. */
        js_sess.stores[old_i] = NULL;
        atomic_fetch_add(&js_sess.abandoned_stores, 1);
        snprintf(err, errlen, "a signal handler stayed inside the call-trace store for 1 s; store abandoned");
        return -1;
    }
    if (js_sess.jfr) js_jfr_stream_flush(); /* events naming the old store are written before it is emptied */
    js_store_fill f;
    js_store_usage(old, &f);
    atomic_fetch_add(&js_sess.unaggregated_weight, f.pair_dropped_weight);
    int rc = 0;
    if (js_sess.text_output) rc = js_fold_store(old, &js_sess.args, &js_sess.profile, err, errlen);
    js_store_reset(old);
    js_debug("store rotated: %u traces, %llu frames, %u pairs folded", f.traces, (unsigned long long)f.frames,
             f.pairs);
    return rc;
}

/* Resolve names of the traces published since the last look, while their classes are alive. */
static void refresh_names(void)
{
    js_names_refresh(js_sess.stores[js_sess.active]);
}

/* One housekeeping round, with js_cmd_lock held and the session running. 1 if it ended it. */
static int round_locked(void)
{
    refresh_names();
    char err[512];
    if (store_full(js_sess.stores[js_sess.active]) && js_session_rotate(err, sizeof err) != 0) js_warn("%s", err);
    js_stats_snapshot s;
    js_stats_get(&s);
    if (s.throttled && !js_sess.throttle_logged) {
        js_sess.throttle_logged = 1;
        js_warn("samples of some threads were throttled: their signal handlers took over a quarter of their time "
                "(deep stacks at a short interval); their weight goes to their next sample. Consider a longer interval "
                "or a smaller jstackdepth");
    }
    uint64_t now = js_session_now();
    if (js_sess.next_loop_ns && now >= js_sess.next_loop_ns) {
        js_session_next_file();
        js_sess.next_loop_ns += (uint64_t)js_sess.args.loop_ns;
        if (js_sess.next_loop_ns <= now) js_sess.next_loop_ns = now + (uint64_t)js_sess.args.loop_ns;
    }
    if (js_sess.deadline_ns && now >= js_sess.deadline_ns) {
        js_args none;
        js_args_defaults(&none);
        char out[2048];
        js_session_stop_locked(&none, 1, out, sizeof out);
        return 1;
    }
    return 0;
}

/* The housekeeping thread: attached to the VM (names come through JVMTI) as a daemon. */
static void *housekeeper(void *arg)
{
    JNIEnv *env = NULL;
    JavaVMAttachArgs aa = {JNI_VERSION_1_6, "jsampler housekeeper", NULL};
    int attached = js_sess.vm && (*js_sess.vm)->AttachCurrentThreadAsDaemon(js_sess.vm, (void **)&env, &aa) == JNI_OK;
    int ended = 0;
    for (unsigned tick = 0; !ended && !atomic_load(&js_sess.hk_stop); tick++) {
        for (int i = 0; i < TICK_MS / 10 && !atomic_load(&js_sess.hk_stop); i++) {
            struct timespec ts = {0, 10 * 1000000L};
            nanosleep(&ts, NULL);
        }
        if (atomic_load(&js_sess.hk_stop)) break;
        if (tick % RESCAN_TICKS == 0) js_arming_rescan();
        if (pthread_mutex_trylock(&js_cmd_lock) != 0) continue;
        if (!atomic_load(&js_sess.hk_stop) && atomic_load(&js_sess.state) == JS_STATE_RUNNING) ended = round_locked();
        pthread_mutex_unlock(&js_cmd_lock);
    }
    if (attached) (*js_sess.vm)->DetachCurrentThread(js_sess.vm);
    return NULL;
}

void js_session_start_housekeeper(void)
{
    atomic_store(&js_sess.hk_stop, 0);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    js_sess.hk_started = pthread_create(&js_sess.hk, &attr, housekeeper, NULL) == 0;
    pthread_attr_destroy(&attr);
    if (!js_sess.hk_started) js_warn("housekeeping thread not started: new threads, loop= and timeout= are not served");
}

void js_session_format_status(int running, char *out, size_t outlen)
{
    js_stats_snapshot s;
    js_stats_get(&s);
    char stats[1024] = "";
    js_stats_format(&s, stats, sizeof stats);
    char iv[32] = "-";
    double elapsed = 0, rate = 0;
    if (running) {
        js_session_format_ns(js_sess.args.interval_ns, iv, sizeof iv);
        elapsed = (double)(js_session_now() - js_sess.started_ns) / 1e9;
        rate = elapsed > 0 ? (double)s.samples / elapsed : 0;
    }
    js_store_fill f = {0};
    js_store *st = running ? js_sess.stores[js_sess.active] : NULL;
    if (st) js_store_usage(st, &f);
    snprintf(out, outlen,
             "event=%s engine=%s interval=%s elapsed_s=%.1f samples_per_s=%.1f\n"
             "store: traces=%u/%u frames=%llu/%llu pairs=%u/%u rotations=%llu not_aggregated_weight=%llu%s%s\n%s",
             running ? js_event_name(js_sess.args.event) : "-", running ? js_sess.eng.engine : "none", iv, elapsed, rate, f.traces,
             f.max_traces, (unsigned long long)f.frames, (unsigned long long)f.max_frames, f.pairs, f.max_pairs,
             (unsigned long long)atomic_load(&js_sess.rotations), (unsigned long long)atomic_load(&js_sess.unaggregated_weight),
             running && js_sess.eng.why[0] ? "\nnote: " : "", running ? js_sess.eng.why : "", stats);
}

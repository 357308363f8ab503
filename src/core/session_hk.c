/* session_hk.c - the session's housekeeping thread.
 *
 * The housekeeper resolves names of traces new in the active store while their classes are alive
 * (every 5 ms while new traces appear, every 10 ms otherwise); every 50 ms it swaps the stores when
 * the active one passes half of any capacity, writes loop= files when due and ends the session at
 * timeout=; every 500 ms it attaches the engine to threads found in /proc. It never blocks on
 * js_cmd_lock (trylock; a command that holds the lock may be waiting to join this thread).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/java_names.h"
#include "core/names.h"
#include "session_int.h"
#include "sample/stats.h"
#include "util/log.h"
#include "util/monotime.h"

#define REFRESH_MS 5       /* names refresh while new traces appear */
#define REFRESH_IDLE_MS 20 /* ... and once none appeared for IDLE_AFTER_MS */
#define IDLE_AFTER_MS 100
#define ROUND_MS 50        /* store fill, loop=, timeout=, throttle notice */
#define RESCAN_MS 500      /* threads found in /proc, when their number changed */
#define RESCAN_FULL_MS 5000 /* ... and anyway (a thread that ended and one that began keep the number) */

/* Resolve names of the traces published since the last look, while their classes are alive.
 * 1 if there were new traces. */
/* The process's number of threads, or -1: the link count of /proc/self/task is 2 + that number (a stat of the
 * directory is cheap; /proc/self/stat would add up the CPU time of every thread). */
static long thread_count(void)
{
    struct stat st;
    return stat("/proc/self/task", &st) == 0 && st.st_nlink > 2 ? (long)st.st_nlink - 2 : -1;
}

static int refresh_names(void)
{
    uint32_t before = js_sess.names_cursor;
    js_names_refresh(js_sess.stores[js_sess.active], &js_sess.names_cursor);
    return js_sess.names_cursor != before;
}

/* The slower duties, every ROUND_MS, with js_cmd_lock held and the session running. 1 if it ended it. */
static int round_locked(void)
{
    char err[512];
    if (js_session_store_full() && js_session_rotate(err, sizeof err) != 0) js_warn("%s", err);
    js_session_age_names(0);
    js_stats_snapshot s;
    js_stats_get(&s);
    if (s.throttled && !js_sess.throttle_logged) {
        js_sess.throttle_logged = 1;
        js_warn("samples of some threads were throttled: their signal handlers used over a fifth of their CPU time "
                "(deep stacks at a short interval); those samples are counted under [throttled]. Consider a longer "
                "interval or a smaller jstackdepth");
    }
    uint64_t now = js_mono_ns();
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

/* The housekeeping thread: attached to the VM (names come through JVMTI) as a daemon. It wakes every
 * REFRESH_MS while new traces keep appearing (every REFRESH_IDLE_MS after IDLE_AFTER_MS without one), so that
 * a class unloaded soon after it was sampled keeps its names; a refresh looks only at new traces. */
static void *housekeeper(void *arg)
{
    JNIEnv *env = NULL;
    JavaVMAttachArgs aa = {JNI_VERSION_1_6, "jsampler housekeeper", NULL};
    int attached = js_sess.vm && (*js_sess.vm)->AttachCurrentThreadAsDaemon(js_sess.vm, (void **)&env, &aa) == JNI_OK;
    pthread_setname_np(pthread_self(), "jsampler-hk");
    int ended = 0, nap = REFRESH_MS, since_new = 0, since_round = 0, since_rescan = RESCAN_MS, since_full = 0;
    int since_java_names = 0;
    long threads = -1;
    while (!ended && !atomic_load(&js_sess.hk_stop)) {
        struct timespec ts = {0, nap * 1000000L};
        nanosleep(&ts, NULL);
        if (atomic_load(&js_sess.hk_stop)) break;
        since_round += nap;
        since_rescan += nap;
        js_arming_refresh_native(); /* a library loaded since: about a microsecond unless one was (or unloaded) */
        since_full += nap;
        if (since_rescan >= RESCAN_MS) { /* listing thousands of threads costs: only when their number moved */
            since_rescan = 0;
            long now = thread_count();
            if (now != threads || now < 0 || since_full >= RESCAN_FULL_MS) {
                threads = now;
                since_full = 0;
                js_arming_rescan();
            }
        }
        since_java_names += nap;
        if (since_java_names >= JS_JAVA_NAMES_MS) { /* threads renamed since they started */
            since_java_names = 0;
            js_java_names_refresh();
        }
        if (pthread_mutex_trylock(&js_cmd_lock) != 0) continue;
        js_session_held_by("the session's housekeeping");
        if (!atomic_load(&js_sess.hk_stop) && atomic_load(&js_sess.state) == JS_STATE_RUNNING) {
            since_new = refresh_names() ? 0 : since_new + nap;
            if (since_round >= ROUND_MS) {
                since_round = 0;
                ended = round_locked();
            }
        }
        pthread_mutex_unlock(&js_cmd_lock);
        js_session_trim_if_due(); /* after a loop= file or the timeout's stop */
        nap = since_new >= IDLE_AFTER_MS ? REFRESH_IDLE_MS : REFRESH_MS;
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


/* arming.c - see arming.h. */
#include "core/arming.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/thread_names.h"
#include "engine/engine.h"
#include "sample/sampler.h"
#include "sample/threads.h"
#include "sample/walker.h"
#include "util/log.h"

/* Engine attachment is process-wide like the thread table it works on. The lock guards `engine`
 * and per-thread attach/detach; it is held for one thread's attach at a time, never across I/O
 * of outputs or name resolution. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const js_engine *engine;  /* running engine, NULL when idle */
static int failures;
static char first_failure[256];
static int rescan_gen;           /* rescan generation, under lock */
static const js_walker *walker;          /* the walker of the running session (set by js_arming_start) */
static const js_walker *walker_override; /* tests: replaces the walker= choice (js_arming_use_walker) */
static void *java_vm;            /* the JavaVM the walker asks for JNIEnvs (js_arming_init) */

/* Attach the running engine to one slot if not yet done. Caller holds lock. */
static void arm_thread(js_thread *t)
{
    if (!engine || !engine->per_thread) return;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&t->armed, &expected, 1)) return;
    char err[256], comm[JS_THREAD_NAME_MAX];
    int tid = atomic_load(&t->tid);
    if (engine->thread_start(tid, &t->handle, err, sizeof err) != 0) {
        atomic_store(&t->armed, 0);
        if (js_threads_comm(tid, comm, sizeof comm) != 0) js_threads_release(t); /* it ended meanwhile */
        else if (failures++ == 0) snprintf(first_failure, sizeof first_failure, "%s", err);
    }
}

/* Detach the engine from one slot. Caller holds lock. */
static void disarm_thread(js_thread *t)
{
    int expected = 1;
    if (engine && engine->per_thread && atomic_compare_exchange_strong(&t->armed, &expected, 0))
        engine->thread_stop(&t->handle);
}

static void arm_cb(js_thread *t, void *ctx)
{
    pthread_mutex_lock(&lock);
    arm_thread(t);
    pthread_mutex_unlock(&lock);
}

static void disarm_cb(js_thread *t, void *ctx)
{
    disarm_thread(t);
}

/* Release the slot of a thread that is gone. */
static void sweep_cb(js_thread *t, void *ctx)
{
    int gen = *(int *)ctx;
    if (atomic_load(&t->seen) == gen) return;
    char comm[JS_THREAD_NAME_MAX];
    int tid = atomic_load(&t->tid);
    if (tid <= 0 || js_threads_comm(tid, comm, sizeof comm) == 0) return; /* still alive */
    pthread_mutex_lock(&lock);
    if (atomic_load(&t->tid) == tid) {
        disarm_thread(t);
        js_threads_release(t);
    }
    pthread_mutex_unlock(&lock);
}

void js_arming_rescan(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    pthread_mutex_lock(&lock);
    int gen = ++rescan_gen;
    pthread_mutex_unlock(&lock);
    struct dirent *e;
    int found = 0, added = 0;
    while ((e = readdir(d)) != NULL) {
        int tid = atoi(e->d_name);
        if (tid <= 0) continue;
        char comm[JS_THREAD_NAME_MAX] = "";
        int named = js_threads_comm(tid, comm, sizeof comm) == 0;
        pthread_mutex_lock(&lock);
        int created;
        js_thread *t = js_threads_claim(tid, &created);
        if (t) {
            found++;
            added += created;
            atomic_store(&t->seen, gen);
            if (created && named) js_threads_set_name(atomic_load(&t->serial), tid, comm);
            arm_thread(t);
        }
        pthread_mutex_unlock(&lock);
    }
    closedir(d);
    js_threads_foreach(sweep_cb, &gen);
    if (added) js_debug("thread rescan: %d threads, %d new", found, added);
}

/* Try one engine: signal, handler, process-wide start. */
static int try_engine(const js_engine *e, const js_args *a, js_store *store, js_evring *ring, js_arming_info *info,
                      char *err, size_t errlen)
{
    int signo = js_sampler_install(e == &js_engine_itimer, err, errlen);
    if (signo < 0) return -1;
    /* The engine's settings are in place before the handler may read them; no thread is attached yet. */
    if (e->start(a->interval_ns, a->jitter, signo, err, errlen) != 0) return -1;
    if (js_sampler_arm(e->sample_weight, walker, store, ring, a->jstackdepth, a->interval_ns, err, errlen) != 0) {
        e->stop();
        return -1;
    }
    info->engine = e->name;
    info->description = e->description;
    info->signo = signo;
    info->shared_signal = js_sampler_shared();
    pthread_mutex_lock(&lock);
    engine = e;
    failures = 0;
    first_failure[0] = 0;
    pthread_mutex_unlock(&lock);
    return 0;
}

int js_arming_start(const js_args *a, js_store *store, js_evring *ring, js_arming_info *info, char *err,
                    size_t errlen)
{
    memset(info, 0, sizeof *info);
    char werr[256] = "";
    walker = walker_override ? walker_override : a->walker == JS_WALKER_AGCT ? &js_walker_agct : &js_walker_recover;
    if (walker->init(java_vm, werr, sizeof werr) != 0) {
        snprintf(err, errlen, "%s", werr);
        return -1;
    }
    if (werr[0]) snprintf(info->walker_note, sizeof info->walker_note, "%s", werr);
    int rc;
    if (a->event == JS_EV_CTIMER) {
        rc = try_engine(&js_engine_ctimer, a, store, ring, info, err, errlen);
    } else if (a->event == JS_EV_ITIMER) {
        rc = try_engine(&js_engine_itimer, a, store, ring, info, err, errlen);
        snprintf(info->why, sizeof info->why, "itimer chosen: process-wide, loses periods below the 4 ms tick");
    } else {
        char perr[256], cerr[256], ierr[256];
        if ((rc = try_engine(&js_engine_perf, a, store, ring, info, perr, sizeof perr)) == 0) {
        } else if ((rc = try_engine(&js_engine_ctimer, a, store, ring, info, cerr, sizeof cerr)) == 0) {
            snprintf(info->why, sizeof info->why, "perf_events refused (%s); fell back to ctimer", perr);
        } else if ((rc = try_engine(&js_engine_itimer, a, store, ring, info, ierr, sizeof ierr)) == 0) {
            snprintf(info->why, sizeof info->why, "perf_events refused (%s), ctimer failed (%s); fell back to "
                     "itimer, which is process-wide and inaccurate", perr, cerr);
        } else {
            snprintf(err, errlen, "no sampling engine could start: perf_events: %s; ctimer: %s; itimer: %s", perr,
                     cerr, ierr);
        }
    }
    if (rc != 0) return -1;
    js_arming_rescan(); /* drops slots of threads that ended while idle, attaches the live ones */
    js_threads_foreach(arm_cb, NULL);
    return 0;
}

void js_arming_stop(void)
{
    pthread_mutex_lock(&lock);
    const js_engine *e = engine;
    js_threads_foreach(disarm_cb, NULL);
    engine = NULL;
    pthread_mutex_unlock(&lock);
    if (e) e->stop();
}

void js_arming_init(void *vm)
{
    java_vm = vm;
}

void js_arming_use_walker(const js_walker *w)
{
    walker_override = w;
}

int js_arming_failures(char *first, size_t len)
{
    pthread_mutex_lock(&lock);
    int n = failures;
    snprintf(first, len, "%s", first_failure);
    pthread_mutex_unlock(&lock);
    return n;
}

void js_arming_thread_start(int tid, void *env, const char *name, int64_t java_tid)
{
    pthread_mutex_lock(&lock);
    int created;
    js_thread *t = js_threads_claim(tid, &created);
    if (t) {
        uint32_t serial = atomic_load(&t->serial);
        js_threads_set_name(serial, tid, name);
        js_threads_set_java_id(serial, java_tid);
        arm_thread(t);
    }
    pthread_mutex_unlock(&lock);
}

void js_arming_thread_end(int tid)
{
    pthread_mutex_lock(&lock);
    js_thread *t = js_threads_find(tid);
    if (t) {
        disarm_thread(t);
        js_threads_release(t);
    }
    pthread_mutex_unlock(&lock);
}

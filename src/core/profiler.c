/* profiler.c - see profiler.h. */
#include "core/profiler.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/dump.h"
#include "engine/engine.h"
#include "core/jfr_stream.h"
#include "util/log.h"
#include "core/names.h"
#include "sample/sampler.h"
#include "core/stats_format.h"
#include "sample/store.h"
#include "core/thread_names.h"
#include "sample/threads.h"
#include "sample/walker.h"

#define STORE_TRACES (1u << 16)
#define STORE_FRAMES (8ull << 20)
#define STORE_PAIRS (1u << 18)
#define HOUSEKEEPING_MS 500
#define REFRESH_MS 1
#define REFRESH_IDLE_MS 10

/* One session per process; guarded by lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    JavaVM *vm;
    int running;
    js_args args;
    const js_engine *engine;
    int signo;
    char why[256]; /* why the engine differs from the one asked for */
    js_store *store;
    int have_data;
    pthread_t hk;
    int hk_started;
    _Atomic int hk_stop;
    int attach_failures;
    char first_failure[256];
    struct timespec started;
} P;

void js_profiler_init(JavaVM *vm, jvmtiEnv *jvmti)
{
    P.vm = vm;
    js_names_init(vm, jvmti);
}

int js_profiler_running(void)
{
    pthread_mutex_lock(&lock);
    int r = P.running;
    pthread_mutex_unlock(&lock);
    return r;
}

/* Attach the engine to one thread slot if not yet done. Caller holds lock. */
static void arm_thread(js_thread *t)
{
    if (!P.running || !P.engine->per_thread) return;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&t->armed, &expected, 1)) return;
    char err[256];
    if (P.engine->thread_start(atomic_load(&t->tid), &t->handle, err, sizeof err) != 0) {
        atomic_store(&t->armed, 0);
        if (P.attach_failures++ == 0) snprintf(P.first_failure, sizeof P.first_failure, "%s", err);
    }
}

/* Detach the engine from one thread slot. Caller holds lock. */
static void disarm_thread(js_thread *t)
{
    int expected = 1;
    if (P.engine && P.engine->per_thread && atomic_compare_exchange_strong(&t->armed, &expected, 0))
        P.engine->thread_stop(&t->handle);
}

static void disarm_cb(js_thread *t, void *ctx)
{
    disarm_thread(t);
}

/* Release slots of threads that are gone. Caller holds lock. */
static void sweep_cb(js_thread *t, void *ctx)
{
    int gen = *(int *)ctx;
    if (atomic_load(&t->seen) == gen) return;
    char comm[JS_THREAD_NAME_MAX];
    if (js_threads_comm(atomic_load(&t->tid), comm, sizeof comm) == 0) return; /* still alive */
    disarm_thread(t);
    js_threads_release(t);
}

/* Register and arm every thread of the process (non-Java threads too), drop ended ones. */
static void rescan_threads(void)
{
    static int gen; /* rescan generation, only touched under lock */
    gen++;
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int tid = atoi(e->d_name);
        if (tid <= 0) continue;
        int created;
        js_thread *t = js_threads_claim(tid, &created);
        if (!t) continue;
        atomic_store(&t->seen, gen);
        if (created) {
            char comm[JS_THREAD_NAME_MAX];
            if (js_threads_comm(tid, comm, sizeof comm) == 0)
                js_threads_set_name(atomic_load(&t->serial), tid, comm);
        }
        arm_thread(t);
    }
    closedir(d);
    js_threads_foreach(sweep_cb, &gen);
}

/* Housekeeping: new/ended threads, and names resolved while their classes are alive. Names are
 * refreshed every REFRESH_MS while new traces keep appearing (every REFRESH_IDLE_MS after 100 ms
 * without one) so that a class unloaded soon after it was sampled keeps its names; a refresh is
 * cheap (only traces published since the last one are looked at) and holds no profiler lock.
 * The thread rescan runs every HOUSEKEEPING_MS. The store is not reset while this runs. */
static void *housekeeper(void *arg)
{
    JNIEnv *env = NULL;
    JavaVMAttachArgs aa = {JNI_VERSION_1_6, "jsampler housekeeper", NULL};
    int attached = P.vm && (*P.vm)->AttachCurrentThreadAsDaemon(P.vm, (void **)&env, &aa) == JNI_OK;
    uint32_t cursor = 0; /* names refresh position in this session's store */
    int since_rescan = 0, since_new = 0, nap = REFRESH_MS;
    while (!atomic_load(&P.hk_stop)) {
        struct timespec ts = {0, nap * 1000000L};
        nanosleep(&ts, NULL);
        if (atomic_load(&P.hk_stop)) break;
        uint32_t before = cursor;
        if (attached) js_names_refresh(P.store, &cursor);
        since_new = cursor != before ? 0 : since_new + nap;
        since_rescan += nap;
        nap = since_new >= 100 ? REFRESH_IDLE_MS : REFRESH_MS;
        if (since_rescan < HOUSEKEEPING_MS) continue;
        since_rescan = 0;
        pthread_mutex_lock(&lock);
        if (P.running) rescan_threads();
        pthread_mutex_unlock(&lock);
    }
    if (attached) (*P.vm)->DetachCurrentThread(P.vm);
    return NULL;
}

/* Try one engine: signal, handler, process-wide start. Caller holds lock. */
static int try_engine(const js_engine *e, const js_args *a, char *err, size_t errlen)
{
    int signo = js_sampler_install(e == &js_engine_itimer, err, errlen);
    if (signo < 0) return -1;
    if (js_sampler_arm(e->sample_weight, &js_walker_agct, P.store, js_jfr_stream_ring(), a->jstackdepth, err, errlen) != 0) return -1;
    if (e->start(a->interval_ns, signo, err, errlen) != 0) {
        js_sampler_disarm();
        return -1;
    }
    P.engine = e;
    P.signo = signo;
    return 0;
}

/* Pick the engine: explicit choice, or cpu -> ctimer -> itimer. Caller holds lock. */
static int choose_engine(const js_args *a, char *err, size_t errlen)
{
    P.why[0] = 0;
    if (a->event == JS_EV_CTIMER) return try_engine(&js_engine_ctimer, a, err, errlen);
    if (a->event == JS_EV_ITIMER) {
        snprintf(P.why, sizeof P.why, "itimer chosen: process-wide, loses periods below the 4 ms tick");
        return try_engine(&js_engine_itimer, a, err, errlen);
    }
    char perr[256], cerr[256], ierr[256];
    if (try_engine(&js_engine_perf, a, perr, sizeof perr) == 0) return 0;
    if (try_engine(&js_engine_ctimer, a, cerr, sizeof cerr) == 0) {
        snprintf(P.why, sizeof P.why, "perf_events refused (%s); fell back to ctimer", perr);
        return 0;
    }
    if (try_engine(&js_engine_itimer, a, ierr, sizeof ierr) == 0) {
        snprintf(P.why, sizeof P.why, "perf_events refused (%s), ctimer failed (%s); fell back to itimer, "
                 "which is process-wide and inaccurate", perr, cerr);
        return 0;
    }
    snprintf(err, errlen, "no sampling engine could start: perf_events: %s; ctimer: %s; itimer: %s", perr, cerr,
             ierr);
    return -1;
}

/* 1 if /proc/cpuinfo flags the CPU as virtualised ("hypervisor"); read at start, never in a handler. */
static int on_hypervisor(void)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f) return 0;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) found = strstr(line, " hypervisor") != NULL;
    fclose(f);
    return found;
}

/* "SIGPROF" etc. for logs. */
static const char *signal_name(int signo)
{
    static char buf[16];
    if (signo == SIGPROF) return "SIGPROF";
    if (signo == SIGVTALRM) return "SIGVTALRM";
    snprintf(buf, sizeof buf, "SIGRTMIN+%d", signo - SIGRTMIN);
    return buf;
}

/* "10ms", "250us" for logs. */
static void format_interval(long long ns, char *buf, size_t len)
{
    if (ns % 1000000000LL == 0) snprintf(buf, len, "%llds", ns / 1000000000LL);
    else if (ns % 1000000LL == 0) snprintf(buf, len, "%lldms", ns / 1000000LL);
    else if (ns % 1000LL == 0) snprintf(buf, len, "%lldus", ns / 1000LL);
    else snprintf(buf, len, "%lldns", ns);
}

static void arm_cb(js_thread *t, void *ctx)
{
    arm_thread(t);
}

/* Open the JFR recording if the request asks for one (file=*.jfr, jfr, jfrfile=). */
static int start_jfr(const js_args *a, char *err, size_t errlen)
{
    char path[JS_PATH_MAX];
    if (js_args_jfr_path(a, (int)getpid(), (long long)time(NULL), path, sizeof path) != 0) {
        snprintf(err, errlen, "JFR output path is too long after expansion");
        return -1;
    }
    if (!path[0]) return 0;
    return js_jfr_stream_start(P.vm, path, a, P.store, err, errlen);
}

int js_profiler_start(const js_args *a, char *out, size_t outlen)
{
    pthread_mutex_lock(&lock);
    char err[768];
    int rc = -1;
    if (P.running) {
        snprintf(out, outlen, "profiler already running");
        goto done;
    }
    if (js_walker_agct.init(P.vm, err, sizeof err) != 0) {
        snprintf(out, outlen, "%s", err);
        goto done;
    }
    if (!P.store && !(P.store = js_store_create(STORE_TRACES, STORE_FRAMES, STORE_PAIRS, err, sizeof err))) {
        snprintf(out, outlen, "%s", err);
        goto done;
    }
    js_store_reset(P.store);
    js_stats_reset();
    P.args = *a;
    P.attach_failures = 0;
    if (start_jfr(a, err, sizeof err) != 0 || choose_engine(a, err, sizeof err) != 0) {
        snprintf(out, outlen, "%s", err);
        js_error("%s", err);
        char ignored[256];
        if (js_jfr_stream_ring()) js_jfr_stream_stop(ignored, sizeof ignored);
        goto done;
    }
    P.running = 1;
    P.have_data = 1;
    clock_gettime(CLOCK_MONOTONIC, &P.started);
    if (P.engine->per_thread) {
        js_threads_foreach(arm_cb, NULL);
        rescan_threads();
    }
    atomic_store(&P.hk_stop, 0);
    P.hk_started = pthread_create(&P.hk, NULL, housekeeper, NULL) == 0;
    char iv[32];
    format_interval(a->interval_ns, iv, sizeof iv);
    snprintf(out, outlen, "profiling started: engine=%s (%s) interval=%s%s signal=%s%s%s", P.engine->name,
             P.engine->description, iv, a->interval_clamped ? " (raised to the 100us floor)" : "", signal_name(P.signo),
             P.why[0] ? "; " : "", P.why);
    if (P.why[0]) js_warn("%s", out);
    else js_info("%s", out);
    if (P.engine == &js_engine_perf && a->interval_ns < 20000000LL && on_hypervisor())
        js_info("virtualised CPU: each cpu sample is one more timer interrupt, which costs tens of microseconds under a "
                "hypervisor; event=ctimer samples on the scheduler tick instead (cheaper, coarser), see "
                "docs/BENCHMARKS.md");
    if (P.attach_failures)
        js_warn("engine %s could not attach to %d thread(s); first error: %s", P.engine->name, P.attach_failures,
                P.first_failure);
    rc = 0;
done:
    pthread_mutex_unlock(&lock);
    return rc;
}

/* Output options of the request override the session's; the rest stays the session's. */
static js_args output_args(const js_args *req)
{
    js_args o = P.args;
    if (req->file[0]) snprintf(o.file, sizeof o.file, "%s", req->file);
    if (req->format != JS_OUT_NONE) o.format = req->format, o.flat_top = req->flat_top;
    if (req->title[0]) snprintf(o.title, sizeof o.title, "%s", req->title);
    if (req->include[0]) snprintf(o.include, sizeof o.include, "%s", req->include);
    if (req->exclude[0]) snprintf(o.exclude, sizeof o.exclude, "%s", req->exclude);
    o.threads |= req->threads;
    o.lines |= req->lines;
    o.sig |= req->sig;
    o.reverse |= req->reverse;
    return o;
}

/* Stop sampling: housekeeper, engine, handler. Caller holds lock; lock released around join. */
static void halt_locked(void)
{
    atomic_store(&P.hk_stop, 1);
    if (P.hk_started) {
        pthread_mutex_unlock(&lock);
        pthread_join(P.hk, NULL);
        pthread_mutex_lock(&lock);
        P.hk_started = 0;
    }
    js_threads_foreach(disarm_cb, NULL);
    P.engine->stop();
    if (js_sampler_disarm() != 0) js_warn("a signal handler was still running after 1 s");
    P.running = 0;
}

/* Log the end-of-session summary line. */
static void log_summary(void)
{
    js_stats_snapshot s;
    js_stats_get(&s);
    char buf[1024];
    js_stats_format(&s, buf, sizeof buf);
    for (char *p = buf; (p = strchr(p, '\n')) != NULL;) *p = ' ';
    js_info("profiling stopped: engine=%s %s traces=%u", P.engine->name, buf, js_store_trace_count(P.store));
}

int js_profiler_stop(const js_args *a, char *out, size_t outlen)
{
    pthread_mutex_lock(&lock);
    int rc = -1;
    if (!P.running) {
        snprintf(out, outlen, "profiler is not running");
        goto done;
    }
    halt_locked();
    log_summary();
    rc = 0;
    if (js_jfr_stream_ring()) {
        rc = js_jfr_stream_stop(out, outlen);
        if (rc != 0) js_error("%s", out);
        else js_info("%s", out);
    }
    js_args o = output_args(a);
    if (js_args_output_format(&o, o.file) != JS_OUT_JFR) {
        int drc = js_dump_write(P.store, &o, out, outlen);
        if (drc != 0) js_error("%s", out);
        else js_info("%s", out);
        rc = rc ? rc : drc;
    }
done:
    pthread_mutex_unlock(&lock);
    return rc;
}

int js_profiler_dump(const js_args *a, char *out, size_t outlen)
{
    pthread_mutex_lock(&lock);
    int rc = -1;
    if (!P.have_data) {
        snprintf(out, outlen, "nothing to dump: the profiler has not run");
    } else {
        js_args o = output_args(a);
        rc = js_dump_write(P.store, &o, out, outlen);
        if (rc != 0) js_error("%s", out);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int js_profiler_status(char *out, size_t outlen)
{
    pthread_mutex_lock(&lock);
    js_stats_snapshot s;
    js_stats_get(&s);
    char stats[1024] = "";
    js_stats_format(&s, stats, sizeof stats);
    char iv[32] = "-";
    if (P.engine) format_interval(P.args.interval_ns, iv, sizeof iv);
    snprintf(out, outlen, "state=%s engine=%s interval=%s traces=%u store_reserved_mib=%zu%s%s\n%s",
             P.running ? "running" : "idle", P.engine ? P.engine->name : "none", iv,
             P.store ? js_store_trace_count(P.store) : 0, P.store ? js_store_reserved_bytes(P.store) >> 20 : 0,
             P.why[0] ? "\nnote: " : "", P.why, stats);
    pthread_mutex_unlock(&lock);
    return 0;
}

void js_profiler_thread_start(int tid, void *env, const char *name, int64_t java_tid)
{
    pthread_mutex_lock(&lock);
    int created;
    js_thread *t = js_threads_claim(tid, &created);
    if (t) {
        js_threads_set_name(atomic_load(&t->serial), tid, name);
        js_threads_set_java_id(atomic_load(&t->serial), java_tid);
        arm_thread(t);
    }
    pthread_mutex_unlock(&lock);
}

void js_profiler_thread_end(int tid)
{
    pthread_mutex_lock(&lock);
    js_thread *t = js_threads_find(tid);
    if (t) {
        disarm_thread(t);
        js_threads_release(t);
    }
    pthread_mutex_unlock(&lock);
}

void js_profiler_shutdown(void)
{
    if (js_profiler_running()) {
        js_args none;
        js_args_defaults(&none);
        char out[1024];
        js_profiler_stop(&none, out, sizeof out);
    }
}

/* backend.c - see backend.h: the task client's thread. One loop, one thread, every call bounded:
 * heartbeat (keepAlive, then reportInstanceProperties every 10th), task polls (async-profiler,
 * pprof), the running task's clock, uploads of what waits in taskdir. Failures back off with
 * jitter and are logged once per change of state, not per attempt. */
#include "backend/backend.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend_int.h"
#include "util/log.h"
#include "util/monotime.h"

#define HEARTBEAT_MS 30000LL
#define PROPERTIES_EVERY 10   /* heartbeats */
#define BACKOFF_MIN_MS 1000LL
#define MAX_TASKS_PER_POLL 8
#define JOIN_WAIT_MS 3000

/* Process-wide: one client per process, started by an entry point and stopped at VM death. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int started;
    volatile int stop;      /* read by in-flight calls (js_grpc_channel.cancel) */
    _Atomic int exited;
    pthread_t thread;
    js_backend_conf conf;
    js_backend_host host;
    /* loop state, owned by the thread */
    js_sw_client cli;
    int target;
    long long last_cmd_ms;
    char last_invalid[JS_TASK_ID_MAX]; /* a task without CreateTime comes back every poll: report it once */
    int polling;            /* async-profiler tasks */
    int pprof_polling;      /* pprof tasks */
    long long pprof_last_ms;
    long long next_poll, next_beat, next_upload;
    int beats;
    int down, failures, down_code;
    const char *down_what;  /* the kind of call that failed last ("heartbeat", "task poll", "upload") */
    int pending_code;      /* the reason of the last failure: a new reason while down is logged once it repeats */
    js_run run;
    js_prun prun;
    unsigned seed;
    _Atomic int tasks_run, uploads;
} B = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

/* The loop's waits are timed by the monotonic clock: one timed by the wall clock lasts the length of any
 * step back of that clock (NTP, an operator, a VM resumed). B.wake is made so once, under B.lock, before the
 * thread that waits on it exists. */
static int wake_monotonic;

static void init_wake_locked(void)
{
    pthread_condattr_t ca;
    if (wake_monotonic || pthread_condattr_init(&ca) != 0) return;
    if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0) {
        pthread_cond_destroy(&B.wake);
        wake_monotonic = pthread_cond_init(&B.wake, &ca) == 0;
        if (!wake_monotonic) pthread_cond_init(&B.wake, NULL);
    }
    pthread_condattr_destroy(&ca);
}

/* CLOCK_MONOTONIC now plus ms, for the timed waits below. */
static struct timespec mono_deadline(long long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    return ts;
}

/* ms scattered by +-20% so a restarted fleet does not call in lock-step. */
static long long jittered(long long ms)
{
    double f = 0.8 + 0.4 * ((double)rand_r(&B.seed) / RAND_MAX);
    return (long long)((double)ms * f);
}

static const char *target(void)
{
    return B.conf.targets[B.target % B.conf.ntargets];
}

/* A call of kind what succeeded: the backend is up again (one line if it was down), unless the kind of call that
 * failed last is another one and may still fail (a poll answered with garbage while heartbeats pass would
 * otherwise log two lines a period). */
static void note_ok(const char *what)
{
    if (B.down && B.down_what && strcmp(what, B.down_what) != 0) return;
    if (B.down) js_info("backend %s: reachable again after %d failed attempts", target(), B.failures);
    B.down = B.failures = B.down_code = 0;
    B.pending_code = -2;
}

/* A call failed: back off (doubling, capped at the poll period, jittered), move to the next backend,
 * one line when the state changes. code -1: err already names the status. */
static void note_failure(const char *what, int code, const char *err)
{
    /* While down, another reason is a new state only once it repeats: a server starting up may answer one call
     * half-ready (INTERNAL) between refusing connections and serving. */
    int repeated = B.down && code == B.pending_code;
    B.pending_code = code;
    B.down_what = what;
    if (!B.down || (B.down_code != code && repeated)) {
        js_warn("backend %s: %s failed: %s%s%s; retrying with backoff (logged again when this changes)", target(), what,
                code >= 0 ? js_grpc_code_name(code) : "", code >= 0 && err[0] ? ": " : "", err);
        B.down_code = code;
    }
    B.down = 1;
    B.failures++;
    long long wait = BACKOFF_MIN_MS << (B.failures < 10 ? B.failures - 1 : 9);
    if (wait > B.conf.poll_ms) wait = B.conf.poll_ms;
    long long at = js_mono_ms() + jittered(wait);
    B.next_poll = B.next_beat = B.next_upload = at;
    if (B.conf.ntargets > 1) {
        B.target = (B.target + 1) % B.conf.ntargets;
        js_sw_client_target(&B.cli, B.target);
        B.cli.ch.cancel = &B.stop;
    }
}

/* keepAlive (which makes the instance a task target in the OAP), and every tenth time the properties. */
static void heartbeat(void)
{
    char err[JS_GRPC_ERR_MAX];
    int st = js_sw_heartbeat(&B.cli, 0, err, sizeof err);
    if (st == JS_GRPC_OK && B.beats % PROPERTIES_EVERY == 0) st = js_sw_heartbeat(&B.cli, 1, err, sizeof err);
    if (st == JS_GRPC_OK) {
        note_ok("heartbeat");
        B.beats++;
        B.next_beat = js_mono_ms() + HEARTBEAT_MS;
    } else if (!B.stop) {
        note_failure("heartbeat", st, err);
    }
}

/* A task from the poll: new ones start, or are reported when they cannot. */
static void take_task(const js_sw_task *t)
{
    if (t->create_ms >= 0 && t->create_ms <= B.last_cmd_ms) return; /* already received */
    if (t->create_ms > B.last_cmd_ms) B.last_cmd_ms = t->create_ms;  /* before running: NOTIFIED once */
    if (!t->id[0]) {
        js_warn("backend %s: ignored a task without TaskId: %s", target(), t->invalid);
        return;
    }
    if (t->invalid[0]) {
        if (t->create_ms < 0 && strcmp(t->id, B.last_invalid) == 0) return;
        snprintf(B.last_invalid, sizeof B.last_invalid, "%s", t->id);
        js_run_report_error(&B.conf, t->id, t->invalid);
    } else if (B.run.active || B.prun.active) {
        char msg[JS_TASK_MSG_MAX];
        snprintf(msg, sizeof msg, "not started: task %s is profiling this instance for %lld more s; create the task "
                                  "again after it ends", B.run.active ? B.run.task.id : B.prun.task.id,
                 ((B.run.active ? B.run.end_ms : B.prun.end_ms) - js_mono_ms()) / 1000 + 1);
        js_run_report_error(&B.conf, t->id, msg);
    } else if (js_run_start(&B.run, t) == 0) {
        atomic_fetch_add(&B.tasks_run, 1);
    }
    B.next_upload = js_mono_ms(); /* an error report goes out at once */
}

/* A pprof task from the poll: new ones are served (or reported). */
static void take_pprof_task(const js_pprof_task *t)
{
    if (t->create_ms >= 0 && t->create_ms <= B.pprof_last_ms) return; /* already received */
    if (t->create_ms > B.pprof_last_ms) B.pprof_last_ms = t->create_ms; /* before serving: NOTIFIED once */
    if (!t->id[0]) {
        js_warn("backend %s: ignored a pprof task without TaskId: %s", target(), t->invalid);
        return;
    }
    if (t->create_ms < 0 && strcmp(t->id, B.last_invalid) == 0) return; /* comes back every poll: reported once */
    if (t->create_ms < 0) snprintf(B.last_invalid, sizeof B.last_invalid, "%s", t->id);
    long long left_s = (B.run.end_ms - js_mono_ms()) / 1000 + 1;
    if (js_prun_take(&B.prun, t, B.run.active ? B.run.task.id : NULL, left_s) == 0)
        atomic_fetch_add(&B.tasks_run, 1);
    B.next_upload = js_mono_ms(); /* a snapshot or an error report goes out at once */
}

/* getPprofTaskCommands; 0, or -1 after a failure (noted). */
static int poll_pprof(void)
{
    js_pprof_task tasks[MAX_TASKS_PER_POLL];
    int n = 0;
    char err[JS_GRPC_ERR_MAX];
    int st = js_sw_poll_pprof(&B.cli, B.pprof_last_ms, tasks, MAX_TASKS_PER_POLL, &n, err, sizeof err);
    if (st == JS_GRPC_UNIMPLEMENTED) {
        js_warn("backend %s does not serve pprof tasks (UNIMPLEMENTED: its receiver-pprof module is off): pprof task "
                "polling is off", target());
        B.pprof_polling = 0;
        note_ok("pprof task poll");
        return 0;
    }
    if (st != JS_GRPC_OK) {
        if (!B.stop) note_failure("pprof task poll", st, err);
        return -1;
    }
    note_ok("pprof task poll");
    for (int i = 0; i < n; i++) take_pprof_task(&tasks[i]);
    return 0;
}

static void poll_tasks(void)
{
    js_sw_task tasks[MAX_TASKS_PER_POLL];
    int n = 0;
    char err[JS_GRPC_ERR_MAX];
    int st = JS_GRPC_OK;
    if (B.polling) st = js_sw_poll(&B.cli, B.last_cmd_ms, tasks, MAX_TASKS_PER_POLL, &n, err, sizeof err);
    B.run.probe_cpu_ns = B.prun.probe_cpu_ns = js_plan_process_cpu_ns(); /* the plan's CPU reading: one poll period */
    B.run.probe_at_ns = B.prun.probe_at_ns = js_mono_ms() * 1000000LL;
    if (st == JS_GRPC_UNIMPLEMENTED) {
        js_warn("backend %s does not serve async-profiler tasks (UNIMPLEMENTED): task polling is off", target());
        B.polling = 0;
        note_ok("task poll");
    } else if (st != JS_GRPC_OK) {
        if (!B.stop) note_failure("task poll", st, err);
        return;
    } else if (B.polling) {
        note_ok("task poll");
    }
    if (B.pprof_polling && !B.stop && poll_pprof() != 0) return;
    B.next_poll = js_mono_ms() + jittered(B.conf.poll_ms);
    for (int i = 0; i < n; i++) take_task(&tasks[i]);
}

/* Upload the oldest entry waiting in taskdir, if any. */
static void upload_one(void)
{
    js_spool_entry e;
    int fd = -1;
    if (!js_spool_next(B.conf.taskdir, &e, &fd)) {
        B.next_upload = js_mono_ms() + B.conf.poll_ms;
        return;
    }
    uint64_t sent = 0;
    char err[JS_TASK_MSG_MAX + 128];
    js_upload_result r = js_sw_upload(&B.cli, &e, &sent, err, sizeof err);
    const char *what = e.kind == JS_SPOOL_PPROF ? "pprof task" : "task";
    if (r == JS_UP_DONE) {
        note_ok("upload");
        if (e.error || !sent)
            js_info("%s %s: error reported to %s: %s", what, e.id, target(), e.error ? e.message : err);
        else js_info("%s %s: uploaded %llu bytes to %s", what, e.id, (unsigned long long)sent, target());
        atomic_fetch_add(&B.uploads, 1);
        js_spool_done(&e, fd);
        B.next_upload = js_mono_ms(); /* maybe more waiting */
    } else if (r == JS_UP_OVERSIZE) {
        note_ok("upload");
        js_warn("%s %s: %s refused the %s as too large (%sTERMINATED_BY_OVERSIZE); set uploadmax= to the "
                "backend's limit", what, e.id, target(), e.kind == JS_SPOOL_PPROF ? "profile" : "recording",
                e.kind == JS_SPOOL_PPROF ? "PPROF_" : "");
        js_spool_done(&e, fd);
        B.next_upload = js_mono_ms();
    } else if (!B.stop) {
        if (js_spool_defer(fd) != 0) /* the others first: one the backend always refuses must not hold them up */
            js_warn("%s %s: cannot move it behind the other uploads waiting in %s: %s", what, e.id, B.conf.taskdir,
                    strerror(errno));
        note_failure("upload", -1, err);
    } else {
        js_spool_release(fd);
        js_info("%s %s: upload cut short by the JVM's exit; the %s waits in %s for the next agent", what, e.id,
                     e.kind == JS_SPOOL_PPROF ? "profile" : "recording", B.conf.taskdir);
    }
}

/* Sleep until the next thing to do, or until woken for shutdown. */
static void wait_next(void)
{
    long long next = B.next_beat;
    if ((B.polling || B.pprof_polling) && B.next_poll < next) next = B.next_poll;
    if (B.next_upload < next) next = B.next_upload;
    if (B.run.active && B.run.end_ms < next) next = B.run.end_ms;
    if (B.prun.active && B.prun.end_ms < next) next = B.prun.end_ms;
    if (B.run.active && js_mono_ms() + 1000 < next) next = js_mono_ms() + 1000; /* the re-plan check */
    long long ms = next - js_mono_ms();
    if (ms <= 0) return;
    struct timespec ts = mono_deadline(ms);
    pthread_mutex_lock(&B.lock);
    if (!B.stop) pthread_cond_timedwait(&B.wake, &B.lock, &ts);
    pthread_mutex_unlock(&B.lock);
}

#define SLOW_STEP_MS 5000 /* a step of the loop that takes this long is logged: the task's clock waited on it */

/* Log a step of the loop that began at t0 (js_mono_ms) if it took long. */
static void note_step(const char *what, long long t0)
{
    long long took = js_mono_ms() - t0;
    if (took >= SLOW_STEP_MS) js_warn("task client: %s took %.1f s", what, took / 1e3);
}

static void *client_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "jsampler-tasks"); /* for top -H and the idle benchmark */
    while (!B.stop) {
        long long now = js_mono_ms(), t0 = now;
        if (B.run.active && now >= B.run.end_ms) js_run_finish(&B.run, 0), B.next_upload = now;
        else if (B.run.active) js_run_check(&B.run);
        note_step("the task's stop or its rate check", t0);
        t0 = js_mono_ms();
        if (B.prun.active && now >= B.prun.end_ms) js_prun_finish(&B.prun, 0), B.next_upload = now;
        note_step("the pprof task's stop", t0);
        if (!B.stop && (t0 = js_mono_ms()) >= B.next_beat) heartbeat(), note_step("the heartbeat", t0);
        if (!B.stop && (B.polling || B.pprof_polling) && (t0 = js_mono_ms()) >= B.next_poll)
            poll_tasks(), note_step("the task poll (with the tasks it started)", t0);
        if (!B.stop && (t0 = js_mono_ms()) >= B.next_upload) upload_one(), note_step("an upload", t0);
        if (!B.stop) wait_next();
    }
    if (B.run.active) js_run_finish(&B.run, 1);
    if (B.prun.active) js_prun_finish(&B.prun, 1);
    atomic_store(&B.exited, 1);
    return NULL;
}

int js_backend_start(const js_backend_conf *c, const js_backend_host *host, char *err, size_t errlen)
{
    pthread_mutex_lock(&B.lock);
    init_wake_locked();
    int rc = -1;
    if (B.started) {
        snprintf(err, errlen, "the task client already runs (service %s, instance %s)", B.conf.service, B.conf.instance);
    } else if (js_spool_init(c->taskdir, err, errlen) == 0 && js_grpc_global_init(err, errlen) == 0) {
        B.conf = *c;
        B.host = *host;
        B.cli.conf = &B.conf;
        js_sw_client_target(&B.cli, 0);
        B.cli.ch.cancel = &B.stop;
        B.last_cmd_ms = -1;
        B.polling = B.pprof_polling = 1;
        B.pprof_last_ms = -1;
        B.seed = (unsigned)getpid() ^ (unsigned)js_mono_ms();
        B.run.conf = &B.conf;
        B.run.host = &B.host;
        B.run.mono_ms = js_mono_ms;
        B.prun.conf = &B.conf;
        B.prun.host = &B.host;
        B.prun.mono_ms = js_mono_ms;
        B.next_poll = B.next_beat = B.next_upload = js_mono_ms();
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 256 << 10);
        if (pthread_create(&B.thread, &attr, client_main, NULL) == 0) {
            B.started = 1;
            rc = 0;
        } else {
            snprintf(err, errlen, "cannot create the task client thread");
        }
        pthread_attr_destroy(&attr);
    }
    pthread_mutex_unlock(&B.lock);
    if (rc == 0)
        js_info("task client started: service %s, instance %s, backend %s%s, polling every %lld s, taskdir %s",
                c->service, c->instance, c->targets[0], c->ntargets > 1 ? " (and others in turn)" : "",
                c->poll_ms / 1000, c->taskdir);
    return rc;
}

int js_backend_running(js_backend_conf *c)
{
    pthread_mutex_lock(&B.lock);
    int started = B.started;
    if (started) *c = B.conf;
    pthread_mutex_unlock(&B.lock);
    return started;
}

int js_backend_describe(char *out, size_t outlen)
{
    if (!B.started) return -1;
    snprintf(out, outlen, "task client: service %s, instance %s, backend %s%s, %s; %d tasks run, %d uploads",
             B.conf.service, B.conf.instance, target(), B.down ? " (unreachable)" : "",
             B.polling && B.pprof_polling ? "polling async-profiler and pprof tasks"
             : B.polling                  ? "polling async-profiler tasks (pprof off)"
             : B.pprof_polling            ? "polling pprof tasks (async-profiler off)"
                                          : "polling off",
             atomic_load(&B.tasks_run), atomic_load(&B.uploads));
    return 0;
}

void js_backend_shutdown(void)
{
    pthread_mutex_lock(&B.lock);
    int started = B.started;
    B.stop = 1;
    pthread_cond_broadcast(&B.wake);
    pthread_mutex_unlock(&B.lock);
    if (!started) return;
    struct timespec ts = mono_deadline(JOIN_WAIT_MS);
    if (pthread_clockjoin_np(B.thread, NULL, CLOCK_MONOTONIC, &ts) != 0)
        js_warn("task client: its thread did not end within %d ms; leaving it", JOIN_WAIT_MS);
}

/* pprof_run.c - one pprof task: what serves its event (pprof_task.c), then a session for its duration or one
 * snapshot command at once, through the dispatcher; the profile left in taskdir for upload through PprofTask.
 * Frames carry their lines ("function:line" in the OAP's tree, as Go's profiles have them). */
#include "backend_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"

#define REPLY_MAX 4096

static long long epoch_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Queue the profile at path (written) for upload as task t's. */
static void queue(const js_backend_conf *c, const js_pprof_task *t, const char *path, long long after_ms)
{
    js_spool_entry e;
    memset(&e, 0, sizeof e);
    e.kind = JS_SPOOL_PPROF;
    snprintf(e.id, sizeof e.id, "%s", t->id);
    snprintf(e.service, sizeof e.service, "%s", c->service);
    snprintf(e.instance, sizeof e.instance, "%s", c->instance);
    snprintf(e.jfr, sizeof e.jfr, "%s", path);
    e.after_ms = after_ms;
    char err[512];
    if (js_spool_put(c->taskdir, &e, err, sizeof err) != 0)
        js_error("pprof task %s: cannot queue the upload: %s", t->id, err);
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* A snapshot (thread dump, thread starts): written now and queued, or reported. */
static int snapshot(js_prun *r, const js_pprof_task *t, const js_pprof_plan *p, const char *path)
{
    char cmd[JS_BACKEND_PATH_MAX + 300], reply[REPLY_MAX];
    snprintf(cmd, sizeof cmd, "%s,lines,file=%s", p->cmd, path);
    if (js_run_dispatch(r->host, cmd, reply, sizeof reply) != 0) {
        char msg[JS_TASK_MSG_MAX];
        snprintf(msg, sizeof msg, "%s: %s", t->events, reply);
        unlink(path);
        js_run_report(r->conf, JS_SPOOL_PPROF, t->id, msg);
        return -1;
    }
    js_info("pprof task %s: %s: %s; %s (%lld bytes)", t->id, t->events, p->note, reply, file_size(path));
    queue(r->conf, t, path, 0);
    return 0;
}

int js_prun_take(js_prun *r, const js_pprof_task *t, const char *busy, long long busy_left_s)
{
    const js_backend_conf *c = r->conf;
    char err[JS_TASK_MSG_MAX];
    js_pprof_plan p;
    if (t->invalid[0]) {
        js_run_report(c, JS_SPOOL_PPROF, t->id, t->invalid);
        return -1;
    }
    if (js_pprof_task_plan(t, &p, err, sizeof err) != 0) {
        js_run_report(c, JS_SPOOL_PPROF, t->id, err);
        return -1;
    }
    char path[JS_BACKEND_PATH_MAX];
    js_spool_pprof_path(c->taskdir, t->id, c->instance, path, sizeof path);
    if (p.snapshot) return snapshot(r, t, &p, path);
    if (r->active || busy) { /* one session at a time */
        snprintf(err, sizeof err, "not started: task %s is profiling this instance for %lld more s; create the task "
                                  "again after it ends", r->active ? r->task.id : busy,
                 r->active ? (r->end_ms - r->mono_ms()) / 1000 + 1 : busy_left_s);
        js_run_report(c, JS_SPOOL_PPROF, t->id, err);
        return -1;
    }
    char interval[64] = "", planned[160] = "";
    if (p.cpu) {
        double cpus = js_plan_busy_cpus(r->probe_cpu_ns, r->probe_at_ns, r->mono_ms() * 1000000LL), est = 0;
        long long iv = js_plan_interval_pprof(10000000LL, cpus, p.duration_ms / 1000, c->upload_max, &est);
        snprintf(interval, sizeof interval, ",interval=%lld", iv);
        snprintf(planned, sizeof planned, "; interval %.1f ms%s, about %.1f busy CPUs, %.1f MB expected of uploadmax "
                 "%.1f MB", iv / 1e6, iv != 10000000LL ? " (raised so the profile fits uploadmax)" : "", cpus,
                 est / 1e6, c->upload_max / 1e6);
    }
    char cmd[JS_BACKEND_PATH_MAX + 400], reply[REPLY_MAX];
    snprintf(cmd, sizeof cmd, "start,%s%s,lines,timeout=%lldms,file=%s", p.cmd, interval, p.duration_ms, path);
    if (js_run_dispatch(r->host, cmd, reply, sizeof reply) != 0) {
        snprintf(err, sizeof err, "%s: the profiler refused to start: %s", t->events, reply);
        js_run_report(c, JS_SPOOL_PPROF, t->id, err);
        return -1;
    }
    r->task = *t;
    snprintf(r->file, sizeof r->file, "%s", path);
    r->start_ms = r->mono_ms();
    r->end_ms = r->start_ms + p.duration_ms;
    r->active = 1;
    js_info("pprof task %s: profiling %s: %s%s", t->id, t->events, p.note, planned);
    return 0;
}

void js_prun_finish(js_prun *r, int vm_exit)
{
    if (!r->active) return;
    r->active = 0;
    long long secs = (r->mono_ms() - r->start_ms) / 1000;
    if (vm_exit) { /* the profiler's shutdown writes the profile after this thread has gone */
        js_warn("pprof task %s: the JVM exits after %lld of %lld s; the profile so far is kept for upload", r->task.id,
                secs, (r->end_ms - r->start_ms) / 1000);
        queue(r->conf, &r->task, r->file, epoch_ms() + 5000);
        return;
    }
    char reply[REPLY_MAX];
    if (js_run_stop(r->host, r->file, reply, sizeof reply) != 0) {
        char msg[JS_TASK_MSG_MAX];
        snprintf(msg, sizeof msg, "%s: the profile could not be written: %s", r->task.events, reply);
        unlink(r->file);
        js_run_report(r->conf, JS_SPOOL_PPROF, r->task.id, msg);
        return;
    }
    long long size = file_size(r->file);
    if (size < 0) {
        char msg[JS_TASK_MSG_MAX];
        snprintf(msg, sizeof msg, "%s: no profile was written (%s): %s", r->task.events, strerror(errno), reply);
        js_run_report(r->conf, JS_SPOOL_PPROF, r->task.id, msg);
        return;
    }
    js_info("pprof task %s: recorded %lld bytes of %s in %lld s%s", r->task.id, size, r->task.events, secs,
            (uint64_t)size > r->conf->upload_max ? " (more than uploadmax: the backend may refuse it)" : "");
    queue(r->conf, &r->task, r->file, 0);
}

/* task_run.c - one task's recording: plan its rate, start it through the dispatcher, re-plan it
 * when it grows faster than the plan, stop it and leave it in taskdir for upload. */
#include "backend_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"
#include "util/monotime.h"

#define REPLY_MAX 4096

static long long epoch_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#define SLOW_DISPATCH_MS 5000 /* a part of a command that takes this long is logged, to say where the task waited */

/* Log the part `what` of command cmd if it took long since t0 (mono ms); the time now. */
static long long note_slow(const char *what, const char *cmd, long long t0)
{
    long long now = js_mono_ms();
    if (now - t0 >= SLOW_DISPATCH_MS) js_warn("task client: %s for '%.40s' took %.1f s", what, cmd, (now - t0) / 1e3);
    return now;
}

int js_run_dispatch(const js_backend_host *h, const char *cmd, char *out, size_t outlen)
{
    out[0] = 0;
    long long t0 = js_mono_ms();
    int entered = strcmp(cmd, "status") != 0 && h->vm_enter ? h->vm_enter() == 0 : 0;
    t0 = note_slow("joining the VM", cmd, t0);
    int rc = h->execute(cmd, out, outlen);
    t0 = note_slow("the profiler's command", cmd, t0);
    if (entered && h->vm_leave) h->vm_leave();
    note_slow("leaving the VM", cmd, t0);
    size_t n = strlen(out);
    while (n && out[n - 1] == '\n') out[--n] = 0;
    return rc == 0 ? 0 : -1;
}

void js_run_report(const js_backend_conf *c, js_spool_kind kind, const char *id, const char *msg)
{
    js_spool_entry e;
    memset(&e, 0, sizeof e);
    e.kind = kind;
    snprintf(e.id, sizeof e.id, "%s", id);
    snprintf(e.service, sizeof e.service, "%s", c->service);
    snprintf(e.instance, sizeof e.instance, "%s", c->instance);
    e.error = 1;
    snprintf(e.message, sizeof e.message, "%s", msg);
    char err[512];
    const char *what = kind == JS_SPOOL_PPROF ? "pprof task" : "task";
    js_warn("%s %s: %s", what, id, msg);
    if (js_spool_put(c->taskdir, &e, err, sizeof err) != 0)
        js_error("%s %s: cannot keep its error report: %s", what, id, err);
}

int js_run_stop(const js_backend_host *h, const char *file, char *out, size_t outlen)
{
    if (js_run_dispatch(h, "stop", out, outlen) == 0) return 0;
    struct stat st;
    if (!strstr(out, "not running") || stat(file, &st) != 0 || st.st_size == 0) return -1;
    js_debug("stop: %s; %s was written when the session ended before (its timeout, or another entry point's stop)",
             out, file);
    return 0;
}

/* Leave an error report for task id in taskdir (uploaded like a recording). */
void js_run_report_error(const js_backend_conf *c, const char *id, const char *msg)
{
    js_run_report(c, JS_SPOOL_JFR, id, msg);
}

/* Start one segment of the recording at interval iv; 0 or -1 with the dispatcher's reply in why. */
static int start_segment(js_run *r, long long iv, uint64_t max_bytes, char *why, size_t whylen)
{
    char cmd[2048], reply[REPLY_MAX];
    size_t stem = strlen(r->jfr) - 4; /* without ".jfr" */
    snprintf(r->seg_path[r->nseg], sizeof r->seg_path[0], "%.*s.seg%d.jfr", (int)stem, r->jfr, r->nseg);
    long long left = r->end_ms - r->mono_ms();
    if (js_task_start_command(&r->opts, iv, max_bytes, left > 0 ? left : 1, r->seg_path[r->nseg], cmd,
                              sizeof cmd) != 0) {
        snprintf(why, whylen, "the start command for %s is longer than %zu bytes", r->seg_path[r->nseg], sizeof cmd);
        return -1;
    }
    if (js_run_dispatch(r->host, cmd, reply, sizeof reply) != 0) {
        snprintf(why, whylen, "the profiler refused to start: %s", reply);
        return -1;
    }
    r->interval_ns = iv;
    r->seg_start_ms = r->win_ms = r->mono_ms();
    r->win_samples = 0;
    r->rate = 0;
    r->nseg++;
    return 0;
}

int js_run_start(js_run *r, const js_sw_task *t)
{
    char err[JS_TASK_MSG_MAX];
    const js_backend_conf *c = r->conf;
    if (js_task_parse_exec(t->exec_args, &r->opts, err, sizeof err) != 0) {
        js_run_report_error(c, t->id, err);
        return -1;
    }
    r->task = *t;
    r->duration_s = t->duration_s > JS_TASK_MAX_DURATION_S ? JS_TASK_MAX_DURATION_S : t->duration_s;
    if (r->duration_s != t->duration_s)
        js_warn("task %s: duration %d s clamped to %d s", t->id, t->duration_s, JS_TASK_MAX_DURATION_S);
    js_spool_jfr_path(c->taskdir, t->id, c->instance, r->jfr, sizeof r->jfr);
    long long requested = r->opts.interval_ns ? r->opts.interval_ns : 10000000LL;
    r->cpus = js_plan_busy_cpus(r->probe_cpu_ns, r->probe_at_ns, r->mono_ms() * 1000000LL);
    double est = 0;
    long long iv = js_plan_interval(requested, r->cpus, r->duration_s, c->upload_max, &est);
    r->nseg = 0;
    r->replans = 0;
    r->stopped = 0;
    r->start_ms = r->mono_ms();
    r->end_ms = r->start_ms + r->duration_s * 1000LL; /* the first segment's timeout=: the whole duration */
    if (start_segment(r, iv, c->upload_max, err, sizeof err) != 0) {
        js_run_report_error(c, t->id, err);
        return -1;
    }
    /* The task's clock starts when the session does, as the session's own timeout= does: a start held up (a
     * perf_event_open that waited 7 s for the kernel beside five other starting JVMs) would otherwise leave the
     * task a fraction of its duration, or none. */
    r->start_ms = r->seg_start_ms;
    r->end_ms = r->start_ms + r->duration_s * 1000LL;
    js_info("task %s: profiling %s for %d s (ExecArgs '%s'), interval %.1f ms%s; about %.1f busy CPUs, "
            "%.1f MB expected of uploadmax %.1f MB%s%s", t->id, r->opts.event, r->duration_s, t->exec_args,
            iv / 1e6, iv != requested ? " (raised so the recording fits uploadmax)" : "", r->cpus, est / 1e6,
            c->upload_max / 1e6, r->opts.notes[0] ? "; " : "", r->opts.notes);
    r->active = 1;
    return 0;
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

#define GROWTH_WINDOW_MS 2000 /* growth is measured over windows this long: the last one predicts the rest */

/* Samples of the running session so far (its status), or -1. */
static long long session_samples(js_run *r)
{
    char reply[REPLY_MAX];
    if (js_run_dispatch(r->host, "status", reply, sizeof reply) != 0) return -1;
    const char *p = strstr(reply, "samples=");
    return p ? atoll(p + 8) : -1;
}

void js_run_check(js_run *r)
{
    if (!r->active || r->replans >= JS_RUN_MAX_SEGMENTS - 1) return;
    long long now = r->mono_ms(), seg_el = now - r->seg_start_ms, left = r->end_ms - now;
    if (now - r->win_ms < GROWTH_WINDOW_MS) return;
    long long samples = session_samples(r);
    if (samples < 0) return;
    r->rate = (double)(samples - r->win_samples) / (double)(now - r->win_ms);
    r->win_ms = now;
    r->win_samples = samples;
    if (seg_el < GROWTH_WINDOW_MS || left < 3000) return;
    long long done = 0;
    for (int i = 0; i < r->nseg - 1; i++) done += file_size(r->seg_path[i]);
    double budget = (double)r->conf->upload_max * JS_PLAN_BUDGET;
    double cur = JS_PLAN_FIXED_BYTES / 2 + (double)samples * JS_PLAN_BYTES_PER_SAMPLE;
    double rest = r->rate * (double)left * JS_PLAN_BYTES_PER_SAMPLE; /* at today's interval */
    double projected = (double)done + cur + rest;
    if (projected <= budget || rest <= 0) return;
    /* growing faster than planned: the rest gets a longer interval, in a new segment */
    double room = budget - (double)done - cur;
    if (room < rest * 0.05) room = rest * 0.05;
    long long iv = (long long)((double)r->interval_ns * rest / room * 1.1);
    iv = (iv + 99999) / 100000 * 100000;
    char reply[REPLY_MAX], err[JS_TASK_MSG_MAX];
    if (js_run_dispatch(r->host, "stop", reply, sizeof reply) != 0) {
        js_warn("task %s: re-planning the rate failed at stop: %s", r->task.id, reply);
        r->replans = JS_RUN_MAX_SEGMENTS; /* keep what runs */
        return;
    }
    long long written = done + file_size(r->seg_path[r->nseg - 1]);
    uint64_t max_left = r->conf->upload_max > (uint64_t)written + 131072 ? r->conf->upload_max - (uint64_t)written : 131072;
    long long old = r->interval_ns;
    r->replans++;
    if (start_segment(r, iv, max_left < 65536 ? 65536 : max_left, err, sizeof err) != 0) {
        js_warn("task %s: %s; the recording ends early, after %lld s", r->task.id, err, (now - r->start_ms) / 1000);
        r->end_ms = now; /* finish with what was recorded */
        r->stopped = 1;
        return;
    }
    js_info("task %s: the recording grows faster than planned (%.2f MB projected for uploadmax %.2f MB): "
            "interval %.1f ms -> %.1f ms for the remaining %lld s", r->task.id, projected / 1e6,
            r->conf->upload_max / 1e6, old / 1e6, iv / 1e6, left / 1000);
}

/* Append the segments into the task's recording (JFR chunks concatenate); 0 or -1 with err. */
static int join_segments(js_run *r, char *err, size_t errlen)
{
    int out = open(r->jfr, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0) {
        snprintf(err, errlen, "cannot create %s: %s", r->jfr, strerror(errno));
        return -1;
    }
    int rc = 0;
    char buf[65536];
    for (int i = 0; i < r->nseg && rc == 0; i++) {
        int in = open(r->seg_path[i], O_RDONLY | O_CLOEXEC);
        if (in < 0) continue; /* a segment that wrote nothing */
        ssize_t n;
        while (rc == 0 && (n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n) {
                snprintf(err, errlen, "writing %s: %s", r->jfr, strerror(errno));
                rc = -1;
            }
        close(in);
    }
    if (close(out) != 0 && rc == 0) {
        snprintf(err, errlen, "writing %s: %s", r->jfr, strerror(errno));
        rc = -1;
    }
    for (int i = 0; i < r->nseg; i++) unlink(r->seg_path[i]);
    if (rc != 0) unlink(r->jfr);
    return rc;
}

void js_run_finish(js_run *r, int vm_exit)
{
    if (!r->active) return;
    r->active = 0;
    const js_backend_conf *c = r->conf;
    js_spool_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.id, sizeof e.id, "%s", r->task.id);
    snprintf(e.service, sizeof e.service, "%s", c->service);
    snprintf(e.instance, sizeof e.instance, "%s", c->instance);
    char reply[REPLY_MAX] = "", err[JS_TASK_MSG_MAX];
    if (vm_exit) {
        /* the profiler's own shutdown writes the last segment after this thread has gone */
        snprintf(e.jfr, sizeof e.jfr, "%s", r->seg_path[r->nseg - 1]);
        e.after_ms = epoch_ms() + 5000;
        js_warn("task %s: the JVM exits after %lld of %d s; the recording so far is kept for upload%s", r->task.id,
                (r->mono_ms() - r->start_ms) / 1000, r->duration_s,
                r->nseg > 1 ? " (its last segment only: the one at the re-planned interval)" : "");
        for (int i = 0; i < r->nseg - 1; i++) unlink(r->seg_path[i]);
    } else if (!r->stopped && js_run_stop(r->host, r->seg_path[r->nseg - 1], reply, sizeof reply) != 0) {
        js_run_report_error(c, r->task.id, reply);
        for (int i = 0; i < r->nseg; i++) unlink(r->seg_path[i]);
        return;
    } else if (r->nseg == 1 ? rename(r->seg_path[0], r->jfr) != 0 : join_segments(r, err, sizeof err) != 0) {
        if (r->nseg == 1) snprintf(err, sizeof err, "cannot keep %s: %s", r->jfr, strerror(errno));
        js_run_report_error(c, r->task.id, err);
        return;
    } else {
        snprintf(e.jfr, sizeof e.jfr, "%s", r->jfr);
        js_info("task %s: recorded %lld bytes in %lld s (%d segment%s, last interval %.1f ms)", r->task.id,
                file_size(r->jfr), (r->mono_ms() - r->start_ms) / 1000, r->nseg, r->nseg > 1 ? "s" : "",
                r->interval_ns / 1e6);
    }
    if (js_spool_put(c->taskdir, &e, err, sizeof err) != 0) js_error("task %s: cannot queue the upload: %s", e.id, err);
}

/* session.c - see profiler.h: the session state machine and the commands that drive it. */
#include "core/profiler.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/arming.h"
#include "core/java_names.h"
#include "core/jfr_stream.h"
#include "core/live.h"
#include "core/methodids.h"
#include "core/names.h"
#include "core/snapshot.h"
#include "core/thread_names.h"
#include "core/vmevents.h"
#include "session_int.h"
#include "sample/sampler.h"
#include "sample/stats.h"
#include "util/log.h"
#include "util/monotime.h"

static const char *const state_names[] = {"idle", "running", "stopping", "dead"};

/* Commands wait this long for one that holds the session before they are refused (a start held up in the kernel:
 * perf_event_open waiting out an RCU grace period on a starved machine took 45 s). The JVM's exit waits less:
 * JS_SHUTDOWN_WAIT_MS. */
#define CMD_WAIT_MS 30000
static _Atomic int cmd_wait_ms = CMD_WAIT_MS; /* process-wide like the lock; tests shorten it */

void js_session_set_cmd_wait(int ms)
{
    atomic_store(&cmd_wait_ms, ms > 0 ? ms : CMD_WAIT_MS);
}

/* js_session_lock for a command: refused (out, logged) after cmd_wait_ms. */
static int cmd_enter(const char *what, char *out, size_t outlen)
{
    if (js_session_lock(what, atomic_load(&cmd_wait_ms), out, outlen) == 0) return 0;
    size_t n = strlen(out);
    if (n < outlen) snprintf(out + n, outlen - n, ": %s not run, try again", what);
    js_warn("%s", out);
    return -1;
}

void js_profiler_init(JavaVM *vm, jvmtiEnv *jvmti)
{
    js_sess.vm = vm;
    js_names_init(vm, jvmti);
    js_java_names_init(vm, jvmti);
    js_vmevents_init(vm, jvmti);
    js_snapshot_init(vm, jvmti);
    js_methodids_init(vm, jvmti);
    js_arming_init(vm);
}

int js_profiler_running(void)
{
    return atomic_load(&js_sess.state) == JS_STATE_RUNNING;
}

/* "SIGPROF" etc. for logs; "none" for a session that takes no signal (alloc, lock). */
static void signal_name(int signo, char *buf, size_t len)
{
    if (signo <= 0) snprintf(buf, len, "none");
    else if (signo == SIGPROF) snprintf(buf, len, "SIGPROF");
    else if (signo == SIGVTALRM) snprintf(buf, len, "SIGVTALRM");
    else snprintf(buf, len, "SIGRTMIN+%d", signo - SIGRTMIN);
}

/* 1 if /proc/cpuinfo flags the CPU as virtualised ("hypervisor"). */
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

/* The reply and log lines of a successful start. */
static void report_start(const js_args *a, char *out, size_t outlen)
{
    char iv[32], sig[24], extra[96] = "";
    if (js_event_is_count(a->event)) snprintf(iv, sizeof iv, "%lld events", a->interval_ns);
    else if (js_kind_on(a, JS_KIND_EXEC)) js_session_format_ns(a->interval_ns, iv, sizeof iv);
    else if (a->wall_ns) js_session_format_ns(a->wall_ns, iv, sizeof iv);
    else snprintf(iv, sizeof iv, "-");
    signal_name(js_sess.eng.signo, sig, sizeof sig);
    if (a->timeout_ns) js_session_format_ns(a->timeout_ns, extra, sizeof extra);
    char loop[32] = "";
    if (a->loop_ns) js_session_format_ns(a->loop_ns, loop, sizeof loop);
    snprintf(out, outlen, "profiling started: engine=%s (%s) interval=%s%s signal=%s%s%s%s%s%s%s%s", js_sess.eng.engine,
             js_sess.eng.description, iv, a->interval_clamped ? " (raised to the 100us floor)" : "", sig,
             js_sess.eng.shared_signal ? " (shared with the handler installed before)" : "", a->timeout_ns ? " timeout=" : "",
             extra, a->loop_ns ? " loop=" : "", loop, js_sess.eng.why[0] ? "; " : "", js_sess.eng.why);
    if (js_sess.eng.why[0]) js_warn("%s", out);
    else if (!a->quiet) js_info("%s", out);
    if (js_sess.eng.walker_note[0]) js_warn("%s", js_sess.eng.walker_note);
    if (js_sess.eng.native_note[0]) js_info("%s", js_sess.eng.native_note);
    if (js_sess.vm_note[0]) js_warn("%s", js_sess.vm_note);
    if (a->wall_ns || a->alloc_bytes || a->lock_ns >= 0) {
        char line[384] = "", v[32];
        if (a->wall_ns) {
            js_session_format_ns(a->wall_ns, v, sizeof v);
            snprintf(line + strlen(line), sizeof line - strlen(line), " wall every %s;", v);
        }
        if (a->alloc_bytes && a->tlab && !a->alloc_set)
            snprintf(line + strlen(line), sizeof line - strlen(line), " alloc by TLAB events, each new TLAB and each "
                     "allocation outside one (the JDK's own Flight Recorder gets no allocation events meanwhile);");
        else if (a->alloc_bytes)
            snprintf(line + strlen(line), sizeof line - strlen(line), " alloc every %llu bytes allocated%s;",
                     (unsigned long long)a->alloc_bytes, a->tlab ? " by TLAB events (the JDK's own Flight Recorder "
                     "gets no allocation events meanwhile)" : "");
        if (a->lock_ns >= 0) {
            js_session_format_ns(a->lock_ns, v, sizeof v);
            snprintf(line + strlen(line), sizeof line - strlen(line), " lock waits of %s and longer;", v);
        }
        line[strlen(line) - 1] = 0;
        js_info("also recording:%s", line);
    }
    if (strcmp(js_sess.eng.engine, "cpu") == 0 && a->interval_ns < 20000000LL && on_hypervisor())
        js_info("virtualised CPU: each cpu sample is one more timer interrupt, which costs tens of microseconds under a "
                "hypervisor; event=ctimer samples on the scheduler tick instead (cheaper, coarser), see "
                "docs/BENCHMARKS.md");
    char first[256];
    int failures = js_arming_failures(first, sizeof first);
    if (failures)
        js_warn("engine %s could not attach to %d thread(s); first error: %s", js_sess.eng.engine, failures, first);
}

/* Several kinds written as text need one file each: 0, or -1 with the reply in out. */
static int check_kinds(const js_args *a, char *out, size_t outlen)
{
    int n;
    js_kinds(a, &n);
    if (n < 2 || js_args_output_format(a, a->file) == JS_OUT_JFR || strstr(a->file, "%e")) return 0;
    char names[64] = "";
    for (int k = 0; k < JS_KINDS; k++)
        if (js_kind_on(a, (js_kind)k))
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", names[0] ? ", " : "",
                     js_kind_name(a, (js_kind)k));
    snprintf(out, outlen, "several events (%s) write one text file each: put %%e in file= (e.g. "
             "file=profile-%%e.html), or record them all in one .jfr file", names);
    return -1;
}

/* Undo a start that failed once its outputs were opened. A failed resume keeps the last session's profile, request
 * (kept) and file number (kept_seq, for %n) as they were, for a dump or another resume. */
static void abandon_start(int resuming, const js_args *kept, unsigned kept_seq)
{
    js_session_close_outputs(resuming);
    if (!resuming) return;
    js_sess.args = *kept;
    js_sess.seq = kept_seq;
    js_sess.retained = 1;
}

/* Start, with js_cmd_lock held and the session idle. */
static js_status start_locked(const js_args *a, char *out, size_t outlen)
{
    char err[768];
    if (check_kinds(a, out, outlen) != 0) return JS_ERR_ARGS;
    if (js_session_stores_ready(err, sizeof err) != 0) {
        snprintf(out, outlen, "%s", err);
        return JS_ERR_ENGINE;
    }
    int resuming = a->action == JS_ACTION_RESUME && js_sess.retained;
    js_args kept = js_sess.args;
    unsigned kept_seq = js_sess.seq;
    js_stats_reset();
    js_session_reset_counters();
    js_session_trim_names();
    js_sess.args = *a;
    js_sess.args.capture = NULL; /* the caller's stream lives for this call only */
    js_status st = js_session_open_outputs(a, out, outlen);
    if (st != JS_OK) {
        abandon_start(resuming, &kept, kept_seq);
        return st;
    }
    js_methodids_on(); /* before the first signal: AsyncGetCallTrace names only methods that have ids */
    if (js_arming_start(a, js_sess.stores[js_sess.active], js_jfr_stream_ring(), &js_sess.eng, err, sizeof err) != 0) {
        snprintf(out, outlen, "%s", err);
        js_error("%s", err);
        js_methodids_off();
        abandon_start(resuming, &kept, kept_seq);
        return JS_ERR_ENGINE;
    }
    js_live_enable(js_session_env(), a->live);
    if (a->live && !js_sess.text_output)
        js_warn("live: the JFR recording keeps every allocation sample; only text outputs are limited to live objects");
    if (js_vmevents_start(a, js_sess.vm_note, sizeof js_sess.vm_note, err, sizeof err) != 0) {
        snprintf(out, outlen, "%s", err);
        js_error("%s", err);
        if (js_arming_stop()) js_sess.stores[0] = js_sess.stores[1] = NULL; /* never reuse what a handler may write */
        js_methodids_off();
        abandon_start(resuming, &kept, kept_seq);
        return JS_ERR_ENGINE;
    }
    js_sess.started_ns = js_mono_ns();
    js_sess.deadline_ns = a->timeout_ns ? js_sess.started_ns + (uint64_t)a->timeout_ns : 0;
    js_sess.next_loop_ns = a->loop_ns ? js_sess.started_ns + (uint64_t)a->loop_ns : 0;
    atomic_store(&js_sess.state, JS_STATE_RUNNING);
    js_session_start_housekeeper();
    report_start(a, out, outlen);
    js_debug("start: jstackdepth=%d threads=%d lines=%d file='%s' jfrfile='%s'", a->jstackdepth, a->threads, a->lines,
             a->file, a->jfrfile);
    return JS_OK;
}

js_status js_profiler_start(const js_args *a, char *out, size_t outlen)
{
    if (cmd_enter("start", out, outlen) != 0) return JS_ERR_STATE;
    js_status st;
    int s = atomic_load(&js_sess.state);
    if (s != JS_STATE_IDLE) {
        snprintf(out, outlen, s == JS_STATE_DEAD ? "the JVM is shutting down: profiling cannot start"
                                                 : "profiler already running (stop it first)");
        st = JS_ERR_STATE;
    } else {
        st = start_locked(a, out, outlen);
    }
    pthread_mutex_unlock(&js_cmd_lock);
    return st;
}

/* The refusal for a command that needs a running session; JS_OK if it runs. */
static js_status need_running(const char *what, char *out, size_t outlen)
{
    int s = atomic_load(&js_sess.state);
    if (s == JS_STATE_RUNNING) return JS_OK;
    snprintf(out, outlen, "%s: %s", what,
             s == JS_STATE_DEAD ? "the JVM is shutting down" : "profiler is not running");
    return JS_ERR_STATE;
}

/* 1 if a stop or dump that finds the session ended writes the last session's profile again: there is one, and the
 * request says where or how (a dump always does). */
static int rewrite_retained(const js_args *a)
{
    return atomic_load(&js_sess.state) == JS_STATE_IDLE && js_sess.retained &&
           (a->action == JS_ACTION_DUMP || a->file[0] || a->format != JS_OUT_NONE);
}

js_status js_profiler_stop(const js_args *a, char *out, size_t outlen)
{
    if (cmd_enter("stop", out, outlen) != 0) return JS_ERR_STATE;
    js_status st;
    if (rewrite_retained(a)) st = js_session_write_retained(a, out, outlen);
    else if ((st = need_running("stop", out, outlen)) == JS_OK) st = js_session_stop_locked(a, 0, out, outlen);
    pthread_mutex_unlock(&js_cmd_lock);
    js_session_trim_if_due();
    return st;
}

js_status js_profiler_dump(const js_args *a, char *out, size_t outlen)
{
    if (cmd_enter("dump", out, outlen) != 0) return JS_ERR_STATE;
    js_status st;
    if (rewrite_retained(a)) st = js_session_write_retained(a, out, outlen);
    else if ((st = need_running("dump", out, outlen)) == JS_OK) st = js_session_dump_locked(a, out, outlen);
    pthread_mutex_unlock(&js_cmd_lock);
    return st;
}

int js_profiler_filter_thread(int tid, int64_t java_tid, int add)
{
    return js_arming_filter_thread(tid, java_tid, add);
}

uint64_t js_profiler_samples(void)
{
    js_stats_snapshot s;
    js_stats_get(&s);
    return js_sess.samples_kept + (atomic_load(&js_sess.state) == JS_STATE_RUNNING ? s.samples : 0);
}

js_status js_profiler_status(char *out, size_t outlen)
{
    /* No lock: status must answer even while a long dump holds js_cmd_lock. Fields read here are
     * atomics or settled while running. */
    int s = atomic_load(&js_sess.state);
    char body[3072];
    js_session_format_status(s == JS_STATE_RUNNING, body, sizeof body);
    snprintf(out, outlen, "state=%s %s", state_names[s], body);
    return JS_OK;
}

void js_profiler_thread_start(int tid, void *env, const char *name, int64_t java_tid)
{
    if (atomic_load(&js_sess.state) == JS_STATE_DEAD) return;
    js_arming_thread_start(tid, env, name, java_tid);
}

void js_profiler_thread_end(int tid, const char *name)
{
    if (atomic_load(&js_sess.state) == JS_STATE_DEAD) return;
    js_threads_rename_tid(tid, name); /* its last name: it may have been renamed since the last refresh */
    js_arming_thread_end(tid);
}

void js_profiler_shutdown(void)
{
    (void)js_profiler_shutdown_wait(JS_SHUTDOWN_WAIT_MS);
}

int js_profiler_shutdown_wait(int wait_ms)
{
    char why[256];
    if (js_session_lock("the JVM's exit", wait_ms, why, sizeof why) != 0) {
        js_warn("%s: the JVM exits without waiting longer, and a session that command started writes no output", why);
        return -1;
    }
    if (atomic_load(&js_sess.state) == JS_STATE_RUNNING) {
        js_args none;
        js_args_defaults(&none);
        char out[2048];
        js_session_stop_locked(&none, 0, out, sizeof out);
    }
    atomic_store(&js_sess.state, JS_STATE_DEAD);
    pthread_mutex_unlock(&js_cmd_lock);
    return 0;
}

/* pprof_task.c - see backend_int.h: PprofTaskQuery arguments, read as the OAP writes them (Duration in minutes,
 * DumpPeriod for block and mutex), and what a JVM serves for each of Go's profile kinds. Pure. */
#include "backend_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"

/* How an event is recorded: a session of the task's Duration (required, 1..15 minutes), a session of Duration or
 * JS_PPROF_DEFAULT_MINUTES (the UI sends none), or one command at once. */
enum { TIMED, WINDOW, SNAPSHOT };

/* What the JVM gives for each of Go's profiles. serve: the session's event options or the snapshot command; NULL
 * when the JVM cannot serve it, and then how says why (reported as EXECUTION_TASK_ERROR). */
static const struct {
    const char *name;
    int mode;
    const char *serve;
    const char *how;
} events[JS_PPE_COUNT] = {
    [JS_PPE_CPU] = {"cpu", TIMED, "event=cpu", "CPU samples of every thread"},
    /* Live objects: the window's allocation samples whose objects are still reachable when it ends (core/live.h). */
    [JS_PPE_HEAP] = {"heap", WINDOW, "event=alloc,live",
                     "sampled allocations of the task's window whose objects are still reachable at its end (as "
                     "of the last GC), objects and bytes in use"},
    [JS_PPE_BLOCK] = {"block", TIMED, "event=lock",
                      "time blocked entering contended synchronized monitors and parked in LockSupport.park "
                      "(java.util.concurrent locks, conditions, queues), waits of DumpPeriod ns and longer"},
    /* Go's mutex profile is lock contention; a JVM reports the waiter's stack (Go the releaser's), and parking
     * cannot be told apart from waiting on a condition or a queue, so monitors only. */
    [JS_PPE_MUTEX] = {"mutex", TIMED, "event=lock,lock=0,exclude=jdk.internal.misc.Unsafe.park",
                      "contended synchronized monitors (every contention, DumpPeriod's fraction not applied), the "
                      "stack of the thread that waited (Go gives the one that released), weighted by the wait"},
    [JS_PPE_GOROUTINE] = {"goroutine", SNAPSHOT, "threaddump", "one sample per live Java thread, at once"},
    [JS_PPE_THREADCREATE] = {"threadcreate", SNAPSHOT, "threadstarts",
                             "the stacks that started threads (Thread.start) since the JVM started"},
    [JS_PPE_ALLOCS] = {"allocs", WINDOW, "event=alloc",
                       "sampled allocations (objects and bytes) from the task's arrival: a JVM keeps no allocation "
                       "history"},
};

const char *js_pprof_event_name(int e)
{
    return e >= 0 && e < JS_PPE_COUNT ? events[e].name : "?";
}

/* The checks of the Go agent and the OAP: Duration for timed events, DumpPeriod for block and mutex. */
static int check_args(js_pprof_task *t, char *err, size_t errlen)
{
    int mode = events[t->event].mode;
    if (mode == TIMED && (t->duration_min < 1 || t->duration_min > JS_PPROF_MAX_MINUTES)) {
        snprintf(err, errlen, "task %s (%s): Duration must be 1 to %d minutes, not %lld", t->id, t->events,
                 JS_PPROF_MAX_MINUTES, t->duration_min);
        return -1;
    }
    if ((t->event == JS_PPE_BLOCK || t->event == JS_PPE_MUTEX) && t->dump_period <= 0) {
        snprintf(err, errlen, "task %s (%s): DumpPeriod must be greater than 0, not %lld", t->id, t->events,
                 t->dump_period);
        return -1;
    }
    return 0;
}

int js_pprof_task_from_args(const char *const *keys, const char *const *vals, size_t n, js_pprof_task *t, char *err,
                            size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->create_ms = t->duration_min = t->dump_period = -1;
    t->event = -1;
    int bad_duration = 0, bad_period = 0, long_id = 0;
    for (size_t i = 0; i < n; i++) {
        const char *k = keys[i], *v = vals[i] ? vals[i] : "";
        long long x;
        if (strcmp(k, "SerialNumber") == 0) {
            snprintf(t->serial, sizeof t->serial, "%s", v);
        } else if (strcmp(k, "TaskId") == 0) {
            if (strlen(v) >= sizeof t->id) long_id = 1;
            else snprintf(t->id, sizeof t->id, "%s", v);
        } else if (strcmp(k, "Events") == 0) {
            snprintf(t->events, sizeof t->events, "%.*s", (int)sizeof t->events - 1, v);
            for (int e = 0; e < JS_PPE_COUNT; e++)
                if (strcmp(v, events[e].name) == 0) t->event = e;
        } else if (strcmp(k, "Duration") == 0) {
            if (js_parse_ll(v, &x) != 0 || x < 0 || x > 1000000) bad_duration = 1;
            else t->duration_min = x;
        } else if (strcmp(k, "DumpPeriod") == 0) {
            if (js_parse_ll(v, &x) != 0 || x < 0 || x > 1000000000000LL) bad_period = 1;
            else t->dump_period = x;
        } else if (strcmp(k, "CreateTime") == 0) {
            if (js_parse_ll(v, &x) == 0 && x >= 0) t->create_ms = x;
        }
    }
    if (!t->id[0]) {
        snprintf(err, errlen, long_id ? "TaskId longer than %zu characters" : "the task has no TaskId",
                 sizeof t->id - 1);
        return -1;
    }
    if (t->create_ms < 0) {
        snprintf(err, errlen, "task %s has no CreateTime", t->id);
        return -1;
    }
    if (t->event < 0) {
        snprintf(err, errlen, "task %s: Events '%s' is not a pprof event (cpu, heap, block, mutex, goroutine, "
                              "threadcreate, allocs)", t->id, t->events);
        return -1;
    }
    if (bad_duration || bad_period) {
        snprintf(err, errlen, "task %s (%s): %s is not a number", t->id, t->events,
                 bad_duration ? "Duration" : "DumpPeriod");
        return -1;
    }
    return check_args(t, err, errlen);
}

int js_pprof_task_plan(const js_pprof_task *t, js_pprof_plan *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    if (t->event < 0 || t->event >= JS_PPE_COUNT) {
        snprintf(err, errlen, "task %s: Events '%s' is not a pprof event", t->id, t->events);
        return -1;
    }
    const char *serve = events[t->event].serve;
    if (!serve) {
        snprintf(err, errlen, "%s", events[t->event].how);
        return -1;
    }
    int mode = events[t->event].mode;
    p->snapshot = mode == SNAPSHOT;
    p->cpu = t->event == JS_PPE_CPU;
    if (t->event == JS_PPE_BLOCK) snprintf(p->cmd, sizeof p->cmd, "%s,lock=%lld", serve, t->dump_period);
    else snprintf(p->cmd, sizeof p->cmd, "%s", serve);
    long long minutes = t->duration_min;
    if (mode == WINDOW && minutes <= 0) minutes = JS_PPROF_DEFAULT_MINUTES;
    if (minutes > JS_PPROF_MAX_MINUTES) minutes = JS_PPROF_MAX_MINUTES;
    p->duration_ms = mode == SNAPSHOT ? 0 : minutes * 60000;
    if (mode == SNAPSHOT)
        snprintf(p->note, sizeof p->note, "%s", events[t->event].how);
    else
        snprintf(p->note, sizeof p->note, "%s, for %lld minute%s%s", events[t->event].how, minutes,
                 minutes == 1 ? "" : "s",
                 minutes != t->duration_min ? (t->duration_min <= 0 ? " (the task gives no Duration)"
                                                                    : " (Duration clamped)") : "");
    return 0;
}

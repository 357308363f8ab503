/* engine.h - sampling engines behind one small interface.
 *
 * An engine makes the kernel deliver a profiling signal to the thread that burned CPU.
 * start/stop and thread_start/thread_stop run on normal threads; sample_weight runs in the
 * signal handler and must be async-signal-safe: it rejects foreign or stale signals
 * (returns 0) and otherwise returns the sample's weight in periods.
 */
#ifndef JS_ENGINE_H
#define JS_ENGINE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>

#include "sample/threads.h"

typedef struct {
    const char *name;        /* "cpu", "ctimer", "itimer", "wall" */
    const char *description; /* for logs: "perf_events cpu-clock" */
    int per_thread;          /* 1 if thread_start/thread_stop must be called for each thread */
    /* Process-wide setup for a mean period of interval_ns, randomised per period when jitter is set
     * (see jitter.h): 0, or -1 with the reason in err (the caller may fall back). */
    int (*start)(long long interval_ns, int jitter, int signo, char *err, size_t errlen);
    /* Process-wide teardown. */
    void (*stop)(void);
    /* Attach to thread tid, publishing the per-thread handle (perf fd, timer id) in *handle before
     * the first signal can be raised; 0, or -1 with reason (and *handle left -1). */
    int (*thread_start)(int tid, _Atomic intptr_t *handle, char *err, size_t errlen);
    /* Optional: stop the thread's counter or timer raising signals, the handle staying valid (a handler still
     * running may use it); thread_stop follows once no handler can. */
    void (*thread_pause)(_Atomic intptr_t *handle);
    /* Detach: take the handle out of *handle (-1 after), then release it. */
    void (*thread_stop)(_Atomic intptr_t *handle);
    /* Signal-safe: weight of this signal for thread t (NULL if the thread is unknown; its handle is t->handle),
     * 0 if the signal is not ours. For a signal of its own, an engine with jitter may set the thread's next period
     * here, keeping its own per-thread state in t->engine_countdown. */
    uint64_t (*sample_weight)(const siginfo_t *si, js_thread *t);
    /* Signal-safe, optional: the kernel frames (leaf first) of the event that raised this thread's last signal,
     * into ips[0..max); their number. */
    int (*kernel_stack)(intptr_t handle, uintptr_t *ips, int max);
} js_engine;

extern const js_engine js_engine_perf;
extern const js_engine js_engine_wall;
/* The perf_events counter js_engine_perf opens from its next start (PERF_TYPE_*, config, a name for
 * messages); cpu-clock until chosen. Process-wide, like the engine. */
void js_engine_perf_select(uint32_t type, uint64_t config, const char *name);
/* perf_events counters js_engine_perf holds open now (0 between sessions). */
long long js_engine_perf_counters_open(void);
/* Closes every counter still open (disabled first), each of which no thread slot holds once a stop has closed the
 * slots' own, and lists their threads' tids in tids (comma-separated, cut to len). Call only then, with no handler
 * inside the sampler. Returns how many it closed: 0 unless a counter escaped its slot. */
int js_engine_perf_close_escaped(char *tids, size_t len);
/* Record kernel call chains from the next start (where kernel events are allowed). */
void js_engine_perf_kernel_stacks(int on);
/* From the next start: counters count only while their thread runs on CPU target_cpu (-1: on every CPU;
 * target-cpu=), and only in user mode when user_only (alluser). */
void js_engine_perf_scope(int target_cpu, int user_only);
/* Signals the wall engine's timer thread sent since its last start. */
uint64_t js_engine_wall_signals(void);
extern const js_engine js_engine_ctimer;
extern const js_engine js_engine_itimer;

#endif

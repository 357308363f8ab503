/* arming.h - which sampling engine runs, and attaching it to every thread of the process.
 *
 * Chooses the engine (cpu -> ctimer -> itimer fallback, with the reason when it differs from the
 * request), installs the signal handler, arms the sampler, and attaches the engine to each thread:
 * those the JVM reports (ThreadStart/ThreadEnd) and those found in /proc/self/task (threads that
 * existed before the agent, JVM-internal and native threads). Its lock is short and never held
 * across file I/O, a dump or JVMTI calls for names: a JVMTI thread callback never waits behind a
 * command. Normal threads only.
 */
#ifndef JS_ARMING_H
#define JS_ARMING_H

#include <stddef.h>
#include <stdint.h>
#include "core/args.h"
#include "sample/evring.h"
#include "sample/store.h"
#include "sample/walker.h"

typedef struct {
    const char *engine;      /* "cpu", "ctimer", "itimer", a perf event's name, "wall", "none" */
    const char *description; /* "perf_events cpu-clock" */
    char desc_buf[160];      /* description when it names the chosen perf event */
    char engine_buf[JS_TRACEPOINT_MAX]; /* engine when it names a tracepoint */
    int signo;
    int shared_signal;       /* 1 if the signal is shared with a handler installed before ours */
    char why[512];           /* why the engine differs from the one asked for, or "" */
    char walker_note[256];   /* why the stack walker runs degraded (e.g. no stack recovery), or "" */
    char native_note[160];   /* what the native walker (cstack=dwarf) prepared, or "" */
} js_arming_info;

/* Remember the JavaVM (the stack walker gets each thread's JNIEnv from it). */
void js_arming_init(void *vm);
/* Pick and start an engine for a, arming the sampler into store (and ring); attach it to every
 * thread. 0, or -1 with one line in err. */
int js_arming_start(const js_args *a, js_store *store, js_evring *ring, js_arming_info *info, char *err,
                    size_t errlen);
/* Stop sampling, in the order that keeps every handler's handle valid while it runs: no new signal is raised (the
 * wall timer ends, each thread's counter or timer is paused), the sampler is disarmed (waiting, bounded, for the
 * handlers inside), and only then are the per-thread handles released. Returns the handlers still inside after the
 * wait (0 normally): the handles are then left open, forgotten (one might still be used), and the caller must
 * abandon the stores and ring they may write. */
int js_arming_stop(void);
/* Register and attach threads found in /proc/self/task, release those that are gone. */
void js_arming_rescan(void);
/* Let the running session's native walker (cstack=) see libraries loaded since it started. Not for handlers. */
void js_arming_refresh_native(void);
/* Threads the engine could not attach to since start, and the first error; 0 if none. */
int js_arming_failures(char *first, size_t len);
/* Threads a per-thread engine (cpu, ctimer) was attached to since the last start, those gone since included. */
int js_arming_attached(void);
/* Walk stacks with w from the next start (NULL: AsyncGetCallTrace, the default). For tests. */
void js_arming_use_walker(const js_walker *w);
/* VM hooks: a Java thread started (its name and java.lang.Thread id; env is not kept: the walker asks the
 * VM for the sampled thread's JNIEnv) / ended. */
void js_arming_thread_start(int tid, void *env, const char *name, int64_t java_tid);
void js_arming_thread_end(int tid);
/* The Java API's thread filter (filter without a value): add (or remove) the thread tid, or, when tid is 0, the
 * thread whose java.lang.Thread id is java_tid. While a session with that filter runs, only added threads are
 * sampled; the set starts empty with each session (a resume keeps it). 0, or -1 if the thread is not known or the
 * set (4096 threads) is full. */
int js_arming_filter_thread(int tid, int64_t java_tid, int add);

#endif

/* profiler.h - the profiler core: one session at a time, driven only by the dispatcher
 * (agent/cmd.h) and by thread lifecycle hooks from the VM layer.
 *
 * One state machine: idle -> running -> stopping -> idle, and dead after VM death. start, stop,
 * dump and status may arrive at any time from any thread; each is answered (text + status). A
 * start while running, a stop or dump while idle, or any command after VM death is refused with
 * one clear line and JS_ERR_STATE. Commands are serialised by one lock that no JVMTI callback
 * takes: thread start/end go to the arming module's short lock. A command waits for that lock at most 30 s (a start
 * held up in the kernel must not hold every other entry point): then it is refused, JS_ERR_STATE, naming the command
 * that holds it. status takes no lock.
 *
 * Bounded for weeks: samples go to one of two call-trace stores; the housekeeping thread swaps
 * them when the active one fills up (and at every loop= file), folds the full one into the
 * session's named profile (text outputs) after the JFR stream has taken its events, and empties
 * it. Memory a handler may touch is reset or freed only after every handler is proven out of it.
 * Process-wide state: one agent per process.
 */
#ifndef JS_PROFILER_H
#define JS_PROFILER_H

#include <jni.h>
#include <jvmti.h>
#include <stddef.h>
#include <stdint.h>
#include "core/args.h"
#include "core/status.h"

/* Hand the core the VM (needed to attach its housekeeping thread and resolve names). */
void js_profiler_init(JavaVM *vm, jvmtiEnv *jvmti);
/* Start a session with args; out gets one line. A resume (action JS_ACTION_RESUME) adds to the last session's text
 * profiles instead of starting from empty ones. */
js_status js_profiler_start(const js_args *a, char *out, size_t outlen);
/* Stop the session and write its output (a's output options override the session's). The text profiles stay until
 * the next start: a stop after the session ended (timeout=, an earlier stop) that names a file or a format writes
 * them again. */
js_status js_profiler_stop(const js_args *a, char *out, size_t outlen);
/* Write the output of the running session without stopping (or, after it ended, its kept text profiles). */
js_status js_profiler_dump(const js_args *a, char *out, size_t outlen);
/* The Java API's thread filter: see js_arming_filter_thread. */
int js_profiler_filter_thread(int tid, int64_t java_tid, int add);
/* Samples taken by the running session and the ones a resume carried on from (after a stop: those of the last). */
uint64_t js_profiler_samples(void);
/* Multi-line status: state, engine, interval, elapsed, counters, store fill, handler timings. */
js_status js_profiler_status(char *out, size_t outlen);
/* 1 while a session runs. */
int js_profiler_running(void);
/* VM layer hooks: a Java thread started (env = its JNIEnv, java_tid its Thread id) / ended (name: its name
 * then, or NULL). */
void js_profiler_thread_start(int tid, void *env, const char *name, int64_t java_tid);
void js_profiler_thread_end(int tid, const char *name);
/* VM death: stop a running session, writing its output; later commands are refused. A command that holds the session
 * (a start or stop on another thread) is waited for at most JS_SHUTDOWN_WAIT_MS: a start held up in the kernel (a
 * perf_event_open waiting out an RCU grace period on a starved machine, seen for 45 s) must not hold the JVM's exit.
 * Past it the JVM exits without that session's output, as the warning says. */
#define JS_SHUTDOWN_WAIT_MS 10000
void js_profiler_shutdown(void);
/* The same with the wait given: 0, or -1 if it gave up (nothing changed; logged). */
int js_profiler_shutdown_wait(int wait_ms);

#endif

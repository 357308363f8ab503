/* profiler.h - the profiler core: one session at a time, driven only by the dispatcher
 * (cmd.h) and by thread lifecycle hooks from the VM layer.
 *
 * Owns the engine choice (cpu -> ctimer -> itimer fallback, one log line saying which and
 * why), the call-trace store, the per-thread engine attachment and the housekeeping thread
 * (new/ended threads, name refresh). All functions run on normal threads and are serialised
 * by one mutex. Process-wide state: one agent per process.
 */
#ifndef JS_PROFILER_H
#define JS_PROFILER_H

#include <jni.h>
#include <jvmti.h>
#include <stddef.h>
#include <stdint.h>
#include "core/args.h"

/* Hand the core the VM (needed to attach its housekeeping thread and resolve names). */
void js_profiler_init(JavaVM *vm, jvmtiEnv *jvmti);
/* Start a session with args; out gets one line. 0 or -1. */
int js_profiler_start(const js_args *a, char *out, size_t outlen);
/* Stop the session and write its output (a's output options override the session's). */
int js_profiler_stop(const js_args *a, char *out, size_t outlen);
/* Write the output of the running (or last) session without stopping. */
int js_profiler_dump(const js_args *a, char *out, size_t outlen);
/* Multi-line status: state, engine, counters, handler timings. */
int js_profiler_status(char *out, size_t outlen);
/* 1 while a session runs. */
int js_profiler_running(void);
/* VM layer hooks: a Java thread started (env = its JNIEnv, java_tid its Thread id) / ended. */
void js_profiler_thread_start(int tid, void *env, const char *name, int64_t java_tid);
void js_profiler_thread_end(int tid);
/* VM death: stop a running session, writing its output; releases everything. */
void js_profiler_shutdown(void);

#endif

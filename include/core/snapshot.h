/* snapshot.h - thread profiles written by one command, without a session.
 *
 *   threaddump    one sample per live Java thread, its stack as it is now (JVMTI GetAllStackTraces: one
 *                 safepoint, as jstack). The agent's own attached threads (named "jsampler ...") are left out.
 *   threadstarts  one sample per platform thread started since the JVM started, the stack that called
 *                 Thread.start (as Go's threadcreate profile): a wrapper of Thread.start0, bound when the VM binds
 *                 it at start-up (vmevents.h), records the caller's stack after each successful start. Distinct
 *                 stacks are kept with their counts in a capped table; a thread started before the live phase
 *                 (the VM's own) or past the caps is counted under a pseudo-frame.
 *
 * Both write like a session's dump (dump.h): any text format or pprof, not JFR; unit threads, pprof sample type
 * threads/count, one Sample per thread. Normal threads only (the caller is attached to the VM).
 */
#ifndef JS_SNAPSHOT_H
#define JS_SNAPSHOT_H

#include <jni.h>
#include <jvmti.h>
#include <stddef.h>

#include "core/args.h"
#include "core/status.h"

#define JS_STARTS_MAX_STACKS 4096        /* distinct stacks that started threads */
#define JS_STARTS_MAX_FRAMES (256u << 10) /* frames of all of them */
#define JS_STARTS_DEPTH 512              /* frames recorded per stack (deeper ones are cut and marked) */

/* Remember the VM and JVMTI environment. */
void js_snapshot_init(JavaVM *vm, jvmtiEnv *jvmti);
/* threaddump: write a's output; out gets one line. */
js_status js_snapshot_threads(const js_args *a, char *out, size_t outlen);
/* threadstarts: write a's output; out gets one line (JS_ERR_UNSUPPORTED when starts are not traced). */
js_status js_snapshot_thread_starts(const js_args *a, char *out, size_t outlen);

/* Thread starts are traced from now on (the wrapper is bound). */
void js_snapshot_starts_traced(void);
/* The current thread has just started a thread: record its stack. From the Thread.start0 wrapper. */
void js_snapshot_thread_started(void);

#endif

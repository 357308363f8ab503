/* sampler.h - the profiling signal handler: engine check -> stack walk -> store.
 *
 * The handler is async-signal-safe: no malloc, no locks that block, no stdio, no JVMTI/JNI;
 * errno is preserved. It writes only into memory prepared by js_sampler_arm. Its settings
 * are process-wide because a signal handler has no context argument.
 */
#ifndef JS_SAMPLER_H
#define JS_SAMPLER_H

#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include "sample/evring.h"
#include "sample/store.h"
#include "sample/threads.h"
#include "sample/walker.h"

/* Pick a free profiling signal (SIGPROF unless a foreign handler owns it; itimer needs SIGPROF)
 * and install the handler. Returns the signal, or -1 with err. Idempotent. */
int js_sampler_install(int want_sigprof_only, char *err, size_t errlen);
/* Signal-safe: the weight of a signal for the thread whose engine handle is given (-1 if the
 * thread is unknown), 0 if the signal is not ours. Supplied by the sampling engine. */
typedef uint64_t (*js_weight_fn)(const siginfo_t *si, intptr_t handle);

/* Begin accepting samples weighed by weight, walked by walker, into store, walking up to depth frames; each stored
 * sample is also appended to ring when it is not NULL (streamed outputs). */
int js_sampler_arm(js_weight_fn weight, const js_walker *w, js_store *s, js_evring *ring, int depth, char *err,
                   size_t errlen);
/* Stop accepting samples and wait (bounded) until no handler is inside; returns handlers still
 * inside after the wait (0 normally). */
int js_sampler_disarm(void);
/* Restore the previous signal disposition (agent unload). */
void js_sampler_uninstall(void);

#endif

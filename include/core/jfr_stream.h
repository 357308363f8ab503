/* jfr_stream.h - the agent's JFR recording: samples streamed from the handler into a file.
 *
 * The signal handler appends (time, trace, thread, weight) to the stream's event ring
 * (evring.h: signal-safe, preallocated). A writer thread attached to the VM drains the ring
 * every few milliseconds into the JFR writer (jfr_write.h), which at each chunk end pulls
 * stack traces from the call-trace store and names from the name cache and thread registry.
 * Stopping drains the ring and finishes the last chunk, so the file is a complete recording
 * whenever stop returns. A write failure (disk full, cap reached) is logged once and stops
 * the recording, never the profiler. One recording per process; normal threads only.
 */
#ifndef JS_JFR_STREAM_H
#define JS_JFR_STREAM_H

#include <jni.h>
#include <stddef.h>
#include "core/args.h"
#include "sample/evring.h"
#include "sample/store.h"

/* Open path and start the writer thread; the options in a are recorded as settings in the file.
 * Events name their trace as (store generation << JS_SAMPLER_GEN_SHIFT | id) in s0 or s1, the
 * session's two stores. Chunks end after chunktime= (default 60 s) or chunksize=. 0, or -1 with
 * one line in err. */
int js_jfr_stream_start(JavaVM *vm, const char *path, const js_args *a, const js_store *s0, const js_store *s1,
                        char *err, size_t errlen);
/* Write every event buffered so far (before a store they name is reset). */
void js_jfr_stream_flush(void);
/* The ring handlers append to while the stream runs (NULL when none). */
js_evring *js_jfr_stream_ring(void);
/* Drain, finish the file and stop the writer thread. No handler may still be appending, unless
 * abandon_ring is set: then the ring is left to the handler (not drained, replaced next time).
 * msg gets "wrote JFR recording ... to PATH" or the error line. 0 or -1. */
int js_jfr_stream_stop(int abandon_ring, char *msg, size_t msglen);

#endif

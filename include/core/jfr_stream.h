/* jfr_stream.h - the agent's JFR recording: samples streamed from the handler into a file.
 *
 * The signal handler appends (time, trace, thread, weight) to the stream's event ring
 * (evring.h: signal-safe, preallocated). A writer thread attached to the VM drains the ring
 * every few milliseconds into the JFR writer (jfr_write.h): an event's stack is named by the
 * store's hash of its frames, so the writer identifies it by content, whatever store generation
 * or slot it came from; its frames are pulled from the store the first time a chunk sees it,
 * names from the name cache and thread registry at chunk end. Stopping drains the ring and
 * finishes the last chunk, so the file is a complete recording whenever stop returns. A write
 * failure (disk full, cap reached) is logged once and stops the recording, never the profiler.
 * One recording per process; normal threads only.
 */
#ifndef JS_JFR_STREAM_H
#define JS_JFR_STREAM_H

#include <jni.h>
#include <stddef.h>
#include "core/args.h"
#include "sample/evring.h"
#include "sample/store.h"

/* Open path and start the writer thread; the options in a are recorded as settings in the file.
 * Events name their trace as (store generation << JS_SAMPLER_GEN_SHIFT | id) and the store's full
 * generation, in s0 or s1, the session's two stores. Chunks end after chunktime= (default 60 s) or
 * chunksize=. 0, or -1 with one line in err. */
int js_jfr_stream_start(JavaVM *vm, const char *path, const js_args *a, const js_store *s0, const js_store *s1,
                        char *err, size_t errlen);
/* The session's stores changed (one created, one abandoned): events name traces in s0 or s1 from
 * now on; an event of a store no longer named is counted, not written. Call before handlers may
 * write to a new store, and after the events of an abandoned one were flushed. */
void js_jfr_stream_stores(const js_store *s0, const js_store *s1);
/* Write every event buffered so far (before a store they name is reset); waits up to 1 s for a
 * handler inside the ring. */
void js_jfr_stream_flush(void);
/* dump: everything buffered written, and the chunk ended, so the file is complete up to now (its path in msg). file:
 * NULL, or a path that must be the recording's own. 0, or -1 with msg. */
int js_jfr_stream_dump(const char *file, char *msg, size_t msglen);
/* The ring handlers append to while the stream runs (NULL when none). */
js_evring *js_jfr_stream_ring(void);
/* Chunks ended so far by any recording of this process (each wrote the names of the methods its events use): the
 * session ages the method-name cache when it changes (js_names_age). */
uint64_t js_jfr_stream_chunks_ended(void);
/* loop=: begin the next file at path (options of a): events of stores from generation `boundary`
 * on go there, those of older stores still to the current file, until js_jfr_stream_end_switch
 * closes it. Nothing is dropped between the two files. 0, or -1 with err (the current file goes on). */
int js_jfr_stream_switch(const char *path, const js_args *a, uint32_t boundary, char *err, size_t errlen);
/* Write what is buffered and close the file before the switch; msg as for js_jfr_stream_stop. 0 or -1. */
int js_jfr_stream_end_switch(char *msg, size_t msglen);
/* Drain, finish the file and stop the writer thread. No handler may still be appending, unless
 * abandon_ring is set: then what no handler holds is drained and the ring is left to the handler
 * (never drained or reused again; a new one is made next time); a ring a handler still holds
 * after 1 s is left so too. msg gets "wrote JFR recording ... to PATH" (with the events lost
 * to full buffers during this file) or the error line. 0 or -1. */
int js_jfr_stream_stop(int abandon_ring, char *msg, size_t msglen);

#endif

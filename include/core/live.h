/* live.h - live: which sampled allocations are still alive when a text profile is written.
 *
 * With live, every allocation sample also keeps a JNI weak reference to its object and a copy of its stack in a
 * bounded table (JS_LIVE_MAX samples). When the session's allocation profile is written, it is rebuilt from the
 * samples whose object the garbage collector has not freed yet: what the heap still holds of what was sampled (an
 * object unreachable but not yet collected still counts). A full table first drops the samples whose objects are
 * gone (at most every 256 samples: see live.c); samples that still find no room are counted and named in the log. JVMTI callbacks and normal threads only.
 */
#ifndef JS_LIVE_H
#define JS_LIVE_H

#include <jni.h>
#include <stdint.h>
#include "core/args.h"
#include "output/profile.h"
#include "sample/store.h"

#define JS_LIVE_MAX 4096       /* samples tracked at once */
#define JS_LIVE_MAX_FRAMES 256 /* frames kept of each (leaf first; a deeper stack keeps its top) */

/* Start tracking (on) or stop and forget every sample (off: the weak references are deleted). */
void js_live_enable(JNIEnv *jni, int on);
/* An allocation sample (SampledObjectAlloc, on the allocating thread): object, its stack (n raw frames, leaf first:
 * the class frame, then the methods), the thread's serial and the bytes it stands for. */
void js_live_track(JNIEnv *jni, jobject object, const js_raw_frame *frames, int n, uint32_t thread, uint64_t weight);
/* Replace p's stacks by those of the tracked samples whose objects are alive, named as a asks. 0, or -1 (out of
 * memory, or no JNIEnv on this thread) with err; p is left as it was on failure. */
int js_live_profile(JNIEnv *jni, const js_args *a, js_profile *p, char *err, size_t errlen);
/* Count the methods of every kept stack as looked up now, before the name cache ages (names.h): a stack kept for
 * hours is named only when the profile is written. */
void js_live_touch_names(void);
/* Samples that found no room in the table since tracking started. */
uint64_t js_live_untracked(void);

#endif

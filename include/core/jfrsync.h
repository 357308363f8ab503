/* jfrsync.h - jfrsync[=CONFIG]: a JDK Flight Recording beside jsampler's, one file at the end.
 *
 * At start a jdk.jfr.Recording is made from CONFIG (a configuration name such as "default" or "profile", or a .jfc
 * file's path), with the JDK's own events of what jsampler records switched off (its execution, allocation and lock
 * samples), and started; it writes itself, when stopped (by us, or by the JDK's shutdown hook at exit), into a
 * private directory made beside the output. At the end the output is written whole (by the rules of safefile.h): the
 * JDK's chunks first, then jsampler's recording, which was streamed beside it meanwhile. Readers of JFR read the
 * chunks one after the other (the JDK's jfr, async-profiler's converter). Normal threads only; the calling thread
 * is attached to the VM for the JNI calls if it is not.
 */
#ifndef JS_JFRSYNC_H
#define JS_JFRSYNC_H

#include <jni.h>
#include <stddef.h>

/* Kinds of samples jsampler records, whose JDK events are switched off in the JDK's recording. */
#define JS_JFRSYNC_CPU 1
#define JS_JFRSYNC_ALLOC 2
#define JS_JFRSYNC_LOCK 4

/* Start the JDK's recording for the output at path (its chunks are kept in a private directory beside it). 0, or
 * -1 with err (no jdk.jfr module, an unknown configuration, a directory that cannot be written). */
int js_jfrsync_start(JavaVM *vm, const char *config, unsigned kinds, const char *path, char *err, size_t errlen);
/* The path jsampler's own recording is streamed to meanwhile (beside path). */
void js_jfrsync_stream_path(const char *path, char *out, size_t outlen);
/* Stop the JDK's recording and write path: its chunks, then those of jsampler's recording at stream_path (removed
 * after). 0 with one line in msg, or -1 with msg. */
int js_jfrsync_finish(JavaVM *vm, const char *path, char *msg, size_t msglen);
/* Stop the JDK's recording and remove what was made (a session that failed to start). */
void js_jfrsync_abort(JavaVM *vm);

#endif

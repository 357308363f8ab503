/* jfr_export.h - write a resolved js_profile as a JFR recording of jdk.ExecutionSample events.
 *
 * Used by `jsampler convert ... out.jfr`: the profile's stacks become stack traces, its frame names become
 * methods and classes again, and each unit of a stack's weight becomes one event, so the JDK's `jfr` tool, JDK
 * Mission Control and the SkyWalking OAP read a converted profile like a recording the agent made. Only sample
 * profiles (unit "samples") can be written: bytes or nanoseconds have no ExecutionSample equivalent; and at most
 * JS_JFR_EXPORT_MAX_EVENTS samples (checked before anything is written).
 *
 * Names are split back the way jfr_read.h joins them, so JFR -> collapsed -> JFR -> collapsed is stable:
 *   - a Java frame (interpreted, JIT, inlined, C1) "pkg.Class.method" is class "pkg/Class", method "method";
 *     a trailing ":LINE" (from --lines) becomes the frame's line number;
 *   - any other frame (native, C++, kernel, error) is a method with no class, named by the whole name;
 *   - a thread root (type JS_FT_THREAD: "[name tid=N]" or "[tid=N]") becomes the event's thread (Java and OS
 *     name `name`, OS thread id N); stacks without one share a thread named "unknown";
 *   - a stack with no frame but its thread root gets one "[unknown]" frame.
 * Events carry no real time (the profile has none): they are stamped one nanosecond apart from the moment of
 * writing. Not for signal context; allocates; errors: -1 and one line in err.
 */
#ifndef JS_JFR_EXPORT_H
#define JS_JFR_EXPORT_H

#include <stddef.h>
#include "output/profile.h"

/* Most samples written (one event each, ~12 bytes: about 12 GB); larger profiles are refused. */
#define JS_JFR_EXPORT_MAX_EVENTS 1000000000ULL

/* Write p to path as JFR (truncating it); source names the input in jdk.ActiveSetting (may be NULL). The
 * number of events written goes to *events if non-NULL. 0, or -1 with one line in err. */
int js_jfr_export(const char *path, const js_profile *p, const char *source, uint64_t *events, char *err,
                  size_t errlen);

#endif

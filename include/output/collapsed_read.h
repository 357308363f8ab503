/* collapsed_read.h - read collapsed stacks ("frame;frame;frame weight", as flamegraph.pl, async-profiler and
 * js_write_collapsed write them) into a js_profile.
 *
 * Streaming, line by line; a line may be at most JS_COLLAPSED_LINE_MAX bytes (newline excluded). The weight is
 * the last token, after the last space or tab, and must be a decimal integer that fits in 64 bits. Blank lines
 * are skipped; '\r' before '\n' is dropped. Anything else malformed (no weight, a bad weight, no frames, a NUL
 * byte, an over-long line) stops the read with one line "NAME:LINE: why" in err.
 *
 * Frame types are guessed, simply:
 *   - an async-profiler suffix is honoured and stripped: "_[j]" JIT, "_[i]" inlined, "_[k]" kernel,
 *     "_[0]" interpreted, "_[1]" C1;
 *   - else a name in brackets is a thread when it is the first frame and ends in "tid=N]" ("[main tid=12]",
 *     "[tid=7]", as the agent and the JFR reader write thread roots), an error frame otherwise ("[unknown_Java]",
 *     also as the only frame of a stack: "[deopt] 3");
 *   - else JIT when the name contains '.' and no "::" (looks like a Java method), native otherwise.
 */
#ifndef JS_COLLAPSED_READ_H
#define JS_COLLAPSED_READ_H

#include <stddef.h>
#include <stdio.h>
#include "output/profile.h"

#define JS_COLLAPSED_LINE_MAX (1024 * 1024) /* 1 MiB */

/* Appends every stack read from f to p (name is used in messages only); 0, or -1 with one line in err. */
int js_collapsed_read(FILE *f, const char *name, js_profile *p, char *err, size_t errlen);

/* Guesses the type of one frame name as read (rules above), stripping a recognised suffix from name in place;
 * first = the frame is the root of its stack. */
js_frame_type js_collapsed_frame_type(char *name, int first);

#endif

/* dump.h - write a profile where the user asked, in the format asked.
 *
 * Outputs are created as util/safefile.h says: never through a symbolic link, mode 0600, an existing path
 * replaced only when it is this user's regular file, by a temporary file renamed over it once complete
 * (a failed write leaves the previous profile). Normal threads only, never from a handler.
 */
#ifndef JS_DUMP_H
#define JS_DUMP_H

#include <stddef.h>
#include <stdint.h>
#include "core/args.h"
#include "output/profile.h"

/* Check, when a command is accepted, that the output pattern (%p and %t expanded) can be written: its
 * directory exists and is writable by this process, and what is at the path (if anything) may be
 * replaced: not a symbolic link, a directory, a FIFO or another user's file. Creates nothing. A
 * character device (e.g. /dev/full) passes: it cannot be checked without writing to it, so a full
 * device fails when the output is written, with one line. "" (stdout) passes. 0, or -1 with one line
 * naming the path. */
int js_dump_check_output(const char *pattern, char *err, size_t errlen);
/* What a profile is, for the formats that say it (pprof: sample types, period, time). */
typedef struct {
    js_kind kind;        /* the session's kind the profile holds */
    int64_t start_ns;    /* when its samples began, ns since the epoch; 0 = not known */
    int64_t duration_ns; /* 0 = not known */
    const char *snapshot; /* NULL: a session's profile; else the title of a thread snapshot (one sample per thread:
                           * unit "threads", pprof sample type threads/count) */
} js_dump_meta;

/* Write a copy of profile p (titled, filtered by a's include/exclude, merged, sorted) as a->file
 * (expanded; stdout if none) in the chosen format; m describes p (NULL: an execution profile of unknown
 * time). On success msg says what was written; on failure msg holds one line naming the path. */
int js_dump_write_profile(const js_profile *p, const js_args *a, const js_dump_meta *m, char *msg, size_t msglen);

#endif

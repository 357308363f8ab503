/* dump.h - write a profile where the user asked, in the format asked.
 *
 * Normal threads only, never from a handler.
 */
#ifndef JS_DUMP_H
#define JS_DUMP_H

#include <stddef.h>
#include "core/args.h"
#include "output/profile.h"

/* Write a copy of profile p (titled, filtered by a's include/exclude, merged, sorted) as a->file
 * (expanded; stdout if none) in the chosen format. On success msg says what was written; on failure
 * msg holds one line naming the path. */
int js_dump_write_profile(const js_profile *p, const js_args *a, char *msg, size_t msglen);

#endif

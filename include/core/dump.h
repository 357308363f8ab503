/* dump.h - build a js_profile from the call-trace store and write it where the user asked.
 *
 * Runs on a normal thread that may call JVMTI (names are resolved here). Never from a handler.
 */
#ifndef JS_DUMP_H
#define JS_DUMP_H

#include <stddef.h>
#include "core/args.h"
#include "output/profile.h"
#include "sample/store.h"

/* Fill p (initialised by the caller) with the store's samples, named, filtered, normalised. */
int js_dump_profile(const js_store *s, const js_args *a, js_profile *p, char *err, size_t errlen);
/* Write the store as a->file (expanded; stdout if none) in the chosen format. On success msg
 * says what was written; on failure msg holds one line naming the path. */
int js_dump_write(const js_store *s, const js_args *a, char *msg, size_t msglen);

#endif

/* fold.h - turn the raw samples of a call-trace store into a named profile, outside the handler.
 *
 * Each (trace, thread) pair of the store becomes a stack of names (root first, a "[name tid=N]"
 * root with threads, ":LINE" with lines, signatures with sig), added to a profile that may
 * already hold earlier folds; identical stacks are then merged, so the profile grows with the
 * distinct named stacks, not with time. Runs on a normal thread that may call JVMTI.
 */
#ifndef JS_FOLD_H
#define JS_FOLD_H

#include <stddef.h>
#include <stdint.h>
#include "core/args.h"
#include "output/profile.h"
#include "sample/sampler.h"
#include "sample/store.h"

/* Add every sample of s to profiles[kind] (one profile per js_kind: a pair's kind is in its thread key,
 * see sampler.h), named per a (threads, lines, sig, jstackdepth). 0, or -1 with err. */
int js_fold_store(const js_store *s, const js_args *a, js_profile profiles[JS_KINDS], char *err, size_t errlen);
/* Add one stack of raw frames (n, leaf first) of thread serial to p as js_fold_store names it, with weight and
 * count (events). 0, or -1 on allocation failure. */
int js_fold_frames(const js_raw_frame *f, int n, uint32_t thread, uint64_t weight, uint64_t count, const js_args *a,
                   js_profile *p);
/* Empty profiles, one per kind, each with its unit ("samples", "bytes" for alloc, "ns" for lock). */
void js_fold_init_profiles(js_profile profiles[JS_KINDS]);
void js_fold_free_profiles(js_profile profiles[JS_KINDS]);
/* Add weight as a one-frame stack named frame (e.g. "[dropped: store full]"); no-op for weight 0. */
int js_fold_pseudo(js_profile *p, const char *frame, uint64_t weight);
/* Append a copy of every stack of src to dst (names re-interned). 0, or -1 on allocation failure. */
int js_fold_copy(js_profile *dst, const js_profile *src);

#endif

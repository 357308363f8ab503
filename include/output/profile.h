/* profile.h - the resolved profile: interned frames and weighted stacks.
 *
 * The one data model every output reads (collapsed, flat, tree, HTML) and every producer
 * fills (the agent at dump time, the JFR reader in the CLI). Plain heap memory: never used
 * from a signal handler. Stacks are stored root first. Frame names are copied and owned. Sums of weights
 * (totals, merged stacks) saturate at UINT64_MAX.
 */
#ifndef JS_PROFILE_H
#define JS_PROFILE_H

/* Root-most pseudo-frame of a stack cut at jstackdepth (JFR: the trace's truncated flag). */
#define JS_TRUNCATED_FRAME "[truncated]"

#include <stddef.h>
#include <stdint.h>

/* Frame kinds; the first seven values match JFR's FrameType keys. */
typedef enum {
    JS_FT_INTERPRETED = 0,
    JS_FT_JIT = 1,
    JS_FT_INLINED = 2,
    JS_FT_NATIVE = 3,
    JS_FT_CPP = 4,
    JS_FT_KERNEL = 5,
    JS_FT_C1 = 6,
    JS_FT_THREAD = 7, /* synthetic per-thread root */
    JS_FT_ERROR = 8,  /* synthetic frame naming a stack-walk failure */
    JS_FT_COUNT
} js_frame_type;

const char *js_frame_type_name(js_frame_type t);

/* a + b for weights: saturates at UINT64_MAX (a crafted input's weights must not wrap a total round to a small
 * number); every sum of weights in the model and the writers goes through it. */
static inline uint64_t js_weight_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

typedef struct {
    char *name;
    uint8_t type;
} js_pframe;

typedef struct {
    uint32_t *frames; /* root first, indexes into js_profile.frames */
    uint32_t depth;
    uint64_t weight;
    uint64_t count;   /* events (samples, allocations, contentions) behind the weight; 0 = not known */
} js_pstack;

typedef struct {
    js_pframe *frames;
    size_t nframes, cap_frames;
    js_pstack *stacks;
    size_t nstacks, cap_stacks;
    uint64_t total; /* sum of stack weights */
    uint32_t *index; /* open-addressing interning table over frames */
    size_t index_cap;
    char title[256];
    char unit[32]; /* "samples", "bytes", "ns" */
} js_profile;

/* Initialise an empty profile. */
void js_profile_init(js_profile *p);
/* Release everything the profile owns. */
void js_profile_free(js_profile *p);
/* Intern (name, type); returns its index, or UINT32_MAX on allocation failure. */
uint32_t js_profile_frame(js_profile *p, const char *name, js_frame_type type);
/* Append a stack (root first) with its weight, its event count not known; 0 on success, -1 on allocation failure. */
int js_profile_add(js_profile *p, const uint32_t *frames, uint32_t depth, uint64_t weight);
/* js_profile_add with the number of events behind the weight (0 = not known). */
int js_profile_add_n(js_profile *p, const uint32_t *frames, uint32_t depth, uint64_t weight, uint64_t count);
/* Merge stacks with identical frame lists (sums weights and counts) and sort them lexically by names. */
int js_profile_normalize(js_profile *p);
/* Glob match with '*' (any run) and '?' (one char): used for include=/exclude=. */
int js_glob_match(const char *pattern, const char *s);
/* Keep only stacks that have a frame matching any include pattern (if any are given) and no frame
 * matching an exclude pattern. Patterns are separated by '|'. A frame matches by its whole name or by
 * its name without the ":LINE" and "(signature)" that lines/sig add. Recomputes total. */
void js_profile_filter(js_profile *p, const char *include, const char *exclude);

#endif

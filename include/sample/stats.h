/* stats.h - profiler counters: samples, drops, stack-walk errors, handler time histogram.
 *
 * All js_stats_* recorders are async-signal-safe (relaxed atomics on static memory). The one
 * global instance is process-wide because signal handlers cannot be handed a context pointer.
 */
#ifndef JS_STATS_H
#define JS_STATS_H

#include <stddef.h>
#include <stdint.h>

#define JS_WALK_ERR_KINDS 12
#define JS_STATS_OVER UINT64_MAX /* a handler-time quantile beyond the histogram's top */ /* index = -error code, 0..11 (see walker.h) */

/* What the recovering walker did with a sample AsyncGetCallTrace could not walk. */
typedef enum {
    JS_RECOVERED_STUB = 0,      /* stepped out of a stub */
    JS_RECOVERED_PROLOGUE,      /* out of a compiled method's prologue */
    JS_RECOVERED_EPILOGUE,      /* out of a compiled method's epilogue */
    JS_RECOVERED_NATIVE,        /* out of VM code called from Java (frame pointers) */
    JS_RECOVERED_BODY,          /* out of a compiled body by its frame size */
    JS_RECOVERED_ANCHOR,        /* VM code whose frame anchor lacked its pc (allocation's slow path) */
    JS_RECOVER_NOT_CODE,        /* failed: pc outside the code cache */
    JS_RECOVER_BAD_BLOB,        /* failed: the blob could not be read consistently */
    JS_RECOVER_INTERPRETER,     /* failed: pc in the interpreter */
    JS_RECOVER_NO_UNWIND,       /* failed: instructions or stack slots not recognised */
    JS_RECOVER_NO_STACK,        /* failed: the thread's stack bounds are unknown */
    JS_RECOVER_RETRY_FAILED,    /* failed: AsyncGetCallTrace refused the caller too */
    JS_RECOVER_KINDS
} js_recover_kind;

/* 1 if k is a failed recovery (every kind after the successes). */
#define JS_RECOVER_FAILED(k) ((k) > JS_RECOVERED_ANCHOR)

/* Events reported by VM callbacks (alloc, lock), counted by their kind (JS_SK_*, below this bound). */
#define JS_STATS_VM_KINDS 4

/* Forget all counts (between runs; no handler may be running). */
void js_stats_reset(void);
/* Signal-safe recorders. */
void js_stats_sample(uint64_t weight);
void js_stats_dropped(uint64_t weight);
/* An event of a VM callback (kind JS_SK_ALLOC, JS_SK_LOCK) stored with its weight, or dropped (stored 0). */
void js_stats_event(int kind, int stored, uint64_t weight);
void js_stats_walk_error(int code);
void js_stats_foreign_signal(void);
/* A signal of ours that took no sample: a wall signal whose weight an earlier one took, or one outside begin/end. */
void js_stats_unsampled_signal(void);
/* A signal that reached the handler while the sampler was not armed (between sessions, or late after a stop). */
void js_stats_unarmed_signal(void);
/* A sample not walked because its thread's handlers used too much of its CPU time (kept as "[throttled]"). */
void js_stats_throttled(uint64_t weight);
void js_stats_handler_ns(uint64_t ns);
void js_stats_recovery(js_recover_kind k);
/* Where a recovery failed (HotSpot's name of the code blob, a static string of libjvm; the first
 * JS_FAIL_SITES names seen are counted, for the stop line). */
#define JS_FAIL_SITES 4
void js_stats_failed_in(const char *site);
/* A stack cut at jstackdepth, counted by its weight. */
void js_stats_truncated(uint64_t weight);
/* Short name of a recovery outcome ("stub", "prologue", ..., "retry_failed"). */
const char *js_recover_name(js_recover_kind k);

typedef struct {
    uint64_t samples, weight, dropped, dropped_weight, foreign, throttled, throttled_weight;
    uint64_t unsampled, unarmed;
    uint64_t walk_errors[JS_WALK_ERR_KINDS];
    uint64_t recovery[JS_RECOVER_KINDS];
    uint64_t truncated;
    const char *fail_name[JS_FAIL_SITES];
    uint64_t fail_count[JS_FAIL_SITES];
    uint64_t vm_events[JS_STATS_VM_KINDS], vm_weight[JS_STATS_VM_KINDS], vm_dropped[JS_STATS_VM_KINDS];
    uint64_t handler_count;
    uint64_t handler_min_ns, handler_median_ns, handler_p99_ns, handler_max_ns; /* quantiles are bucket midpoints */
    uint64_t handler_hist_top_ns; /* a quantile past this is JS_STATS_OVER (min and max are exact) */
} js_stats_snapshot;

/* Consistent-enough copy for reporting. */
void js_stats_get(js_stats_snapshot *out);

#endif

/* evring.h - per-stripe event buffers filled by signal handlers, drained by a writer thread.
 *
 * Each sample event (time, trace id, thread serial, weight, kind and its details) is appended to one of a fixed
 * number of stripes claimed with a non-blocking try-lock; a handler that finds every stripe
 * busy or full counts a drop and returns. Memory is reserved once (js_evring_create); nothing
 * allocates afterwards. js_evring_put is async-signal-safe; js_evring_drain runs on a normal
 * thread: it waits a bounded time for a stripe a producer holds, then leaves that stripe for later
 * and says so (a producer stuck inside js_evring_put must never stall the drain).
 */
#ifndef JS_EVRING_H
#define JS_EVRING_H

#include <stddef.h>
#include <stdint.h>

/* What a sample is about (the same values as the session's js_kind). */
enum { JS_SK_EXEC = 0, JS_SK_WALL = 1, JS_SK_ALLOC = 2, JS_SK_LOCK = 3, JS_SK_COUNT = 4 };
/* A wall sample's thread state as its handler saw it; refined by the leaf frame when written. */
enum { JS_WS_RUNNING = 1, JS_WS_SYSCALL = 2 };
/* An allocation event's origin: a JVMTI sample, or (tlab) a new TLAB or an allocation outside any TLAB. */
enum { JS_ALLOC_SAMPLED = 0, JS_ALLOC_NEW_TLAB = 1, JS_ALLOC_OUTSIDE = 2 };
/* A lock event's origin. */
enum { JS_LOCK_MONITOR = 0, JS_LOCK_PARK = 1 };

typedef struct {
    uint64_t ticks;  /* CLOCK_MONOTONIC ns */
    uint64_t weight; /* exec and wall: periods this sample stands for; alloc: bytes; lock: ns waited */
    uint64_t value;  /* alloc: the object's size; lock, park: the timeout in ns (0 none) */
    uint32_t trace;  /* store trace id: (gen mod 64) << JS_SAMPLER_GEN_SHIFT | slot (sampler.h) */
    uint32_t thread; /* thread serial */
    uint32_t gen;    /* the full generation of the store the trace is in; 0 if the producer did not say */
    uint32_t cls;    /* alloc, lock: class id (0 none) */
    uint16_t state;  /* wall: JS_WS_*; park: 1 if value is a deadline (ms since the epoch) */
    uint8_t kind;    /* JS_SK_* */
    uint8_t sub;     /* alloc: JS_ALLOC_*; lock: JS_LOCK_* */
} js_ring_event;

typedef struct js_evring js_evring;

/* Reserve stripes * per_stripe events; NULL with err on failure. */
js_evring *js_evring_create(unsigned stripes, unsigned per_stripe, char *err, size_t errlen);
void js_evring_destroy(js_evring *r);
/* Signal-safe append; 0, or -1 if dropped (counted). */
int js_evring_put(js_evring *r, int hint, const js_ring_event *e);
/* Hand every buffered event to fn (in per-stripe order); returns how many were drained. A stripe a producer
 * holds is waited for, up to wait_ns in all for the call; a stripe still held then is left as it is (its events
 * stay for a later drain) and counted in *held (may be NULL). */
size_t js_evring_drain(js_evring *r, void (*fn)(const js_ring_event *e, void *ctx), void *ctx, uint64_t wait_ns,
                       unsigned *held);
/* Events dropped because every stripe was busy or full. */
uint64_t js_evring_dropped(const js_evring *r);

#endif

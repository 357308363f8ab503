/* evring.h - per-stripe event buffers filled by signal handlers, drained by a writer thread.
 *
 * Each sample event (time, trace id, thread serial, weight) is appended to one of a fixed
 * number of stripes claimed with a non-blocking try-lock; a handler that finds every stripe
 * busy or full counts a drop and returns. Memory is reserved once (js_evring_create); nothing
 * allocates afterwards. js_evring_put is async-signal-safe; js_evring_drain runs on a normal
 * thread (it may spin briefly on a stripe a handler holds).
 */
#ifndef JS_EVRING_H
#define JS_EVRING_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t ticks;  /* CLOCK_MONOTONIC ns */
    uint32_t trace;  /* store trace id */
    uint32_t thread; /* thread serial */
    uint32_t weight; /* periods this sample stands for */
    uint32_t state;  /* thread state key */
} js_ring_event;

typedef struct js_evring js_evring;

/* Reserve stripes * per_stripe events; NULL with err on failure. */
js_evring *js_evring_create(unsigned stripes, unsigned per_stripe, char *err, size_t errlen);
void js_evring_destroy(js_evring *r);
/* Signal-safe append; 0, or -1 if dropped (counted). */
int js_evring_put(js_evring *r, int hint, const js_ring_event *e);
/* Hand every buffered event to fn (in per-stripe order); returns how many were drained. */
size_t js_evring_drain(js_evring *r, void (*fn)(const js_ring_event *e, void *ctx), void *ctx);
/* Events dropped because every stripe was busy or full. */
uint64_t js_evring_dropped(const js_evring *r);

#endif

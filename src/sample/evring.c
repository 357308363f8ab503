/* evring.c - see evring.h. One mmap: stripe headers then event arrays. */
#include "sample/evring.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "sample/safe_fmt.h"
#include "util/monotime.h"

typedef struct {
    _Atomic int busy;
    uint32_t count;
    char pad[56]; /* one cache line per stripe header */
} stripe;

struct js_evring {
    size_t map_bytes;
    unsigned nstripes, per_stripe;
    _Atomic uint64_t dropped;
    stripe *stripes;
    js_ring_event *events;
};

js_evring *js_evring_create(unsigned stripes, unsigned per_stripe, char *err, size_t errlen)
{
    size_t bytes = sizeof(js_evring) + 64 + (size_t)stripes * sizeof(stripe) +
                   (size_t)stripes * per_stripe * sizeof(js_ring_event);
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        js_safe_fmt(err, errlen, "cannot reserve %zu bytes of event buffers: %s", bytes, js_safe_errstr(errno));
        return NULL;
    }
    js_evring *r = m;
    r->map_bytes = bytes;
    r->nstripes = stripes;
    r->per_stripe = per_stripe;
    uintptr_t s = ((uintptr_t)(r + 1) + 63) & ~(uintptr_t)63;
    r->stripes = (stripe *)s;
    r->events = (js_ring_event *)(r->stripes + stripes);
    return r;
}

void js_evring_destroy(js_evring *r)
{
    if (r) munmap(r, r->map_bytes);
}

int js_evring_put(js_evring *r, int hint, const js_ring_event *e)
{
    for (unsigned i = 0; i < r->nstripes; i++) {
        unsigned k = ((unsigned)hint + i) % r->nstripes;
        stripe *s = &r->stripes[k];
        int expected = 0;
        if (!atomic_compare_exchange_strong_explicit(&s->busy, &expected, 1, memory_order_acquire,
                                                     memory_order_relaxed))
            continue;
        int ok = s->count < r->per_stripe;
        if (ok) r->events[(size_t)k * r->per_stripe + s->count++] = *e;
        atomic_store_explicit(&s->busy, 0, memory_order_release);
        if (ok) return 0;
    }
    atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
    return -1;
}

/* Claim stripe s for draining, yielding while a producer holds it, until deadline (0: not yet computed, taken
 * from wait_ns at the first wait). 1 if claimed. */
static int claim(stripe *s, uint64_t wait_ns, uint64_t *deadline)
{
    for (;;) {
        int expected = 0;
        if (atomic_compare_exchange_weak_explicit(&s->busy, &expected, 1, memory_order_acquire, memory_order_relaxed))
            return 1;
        if (expected == 0) continue; /* a spurious failure of the weak exchange */
        uint64_t now = js_mono_ns();
        if (!*deadline) *deadline = now + wait_ns;
        if (now >= *deadline) return 0;
        sched_yield();
    }
}

size_t js_evring_drain(js_evring *r, void (*fn)(const js_ring_event *e, void *ctx), void *ctx, uint64_t wait_ns,
                       unsigned *held)
{
    size_t total = 0;
    uint64_t deadline = 0;
    unsigned left = 0;
    for (unsigned k = 0; k < r->nstripes; k++) {
        stripe *s = &r->stripes[k];
        if (!claim(s, wait_ns, &deadline)) {
            left++;
            continue;
        }
        const js_ring_event *ev = &r->events[(size_t)k * r->per_stripe];
        for (uint32_t i = 0; i < s->count; i++) fn(&ev[i], ctx);
        total += s->count;
        s->count = 0;
        atomic_store_explicit(&s->busy, 0, memory_order_release);
    }
    if (held) *held = left;
    return total;
}

uint64_t js_evring_dropped(const js_evring *r)
{
    return atomic_load(&((js_evring *)r)->dropped);
}

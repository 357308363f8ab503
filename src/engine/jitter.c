/* jitter.c - see jitter.h. */
#include "engine/jitter.h"

#include <stdatomic.h>

/* One process-wide sequence: any thread's handler may draw from it (a handler has no context). */
static _Atomic uint64_t seq = 0x9E3779B97F4A7C15ULL;

/* splitmix64 of the next sequence value: uniform 64-bit numbers from one atomic add. */
static uint64_t next_random(void)
{
    uint64_t z = atomic_fetch_add_explicit(&seq, 0x9E3779B97F4A7C15ULL, memory_order_relaxed);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

uint64_t js_jitter_next(uint64_t mean_ns, int jitter)
{
    if (!jitter || mean_ns < 2) return mean_ns;
    /* mean/2 + uniform [0, mean): the top 53 bits as a fraction avoid modulo bias. */
    double u = (double)(next_random() >> 11) * (1.0 / 9007199254740992.0);
    return mean_ns / 2 + (uint64_t)(u * (double)mean_ns);
}

/* stats.c - see stats.h. */
#include "sample/stats.h"

#include <stdatomic.h>
#include <string.h>

/* Handler time histogram: 25 ns buckets up to 20 us, then one overflow bucket. */
#define HIST_STEP_NS 25
#define HIST_BUCKETS 800

/* Process-wide: signal handlers have no context argument to carry a pointer. */
static struct {
    _Atomic uint64_t samples, weight, dropped, dropped_weight, foreign, throttled, throttled_weight;
    _Atomic uint64_t walk_errors[JS_WALK_ERR_KINDS];
    _Atomic uint64_t hist[HIST_BUCKETS + 1];
    _Atomic uint64_t min_ns, max_ns;
} st;

#define RELAXED memory_order_relaxed

/* Zero every counter; min starts at "infinity". */
void js_stats_reset(void)
{
    atomic_store(&st.samples, 0);
    atomic_store(&st.weight, 0);
    atomic_store(&st.dropped, 0);
    atomic_store(&st.dropped_weight, 0);
    atomic_store(&st.foreign, 0);
    atomic_store(&st.throttled, 0);
    atomic_store(&st.throttled_weight, 0);
    for (int i = 0; i < JS_WALK_ERR_KINDS; i++) atomic_store(&st.walk_errors[i], 0);
    for (int i = 0; i <= HIST_BUCKETS; i++) atomic_store(&st.hist[i], 0);
    atomic_store(&st.min_ns, UINT64_MAX);
    atomic_store(&st.max_ns, 0);
}

void js_stats_sample(uint64_t weight)
{
    atomic_fetch_add_explicit(&st.samples, 1, RELAXED);
    atomic_fetch_add_explicit(&st.weight, weight, RELAXED);
}

void js_stats_dropped(uint64_t weight)
{
    atomic_fetch_add_explicit(&st.dropped, 1, RELAXED);
    atomic_fetch_add_explicit(&st.dropped_weight, weight, RELAXED);
}

/* code is 0 or negative (walker.h); out-of-range codes land in the last slot. */
void js_stats_walk_error(int code)
{
    int i = -code;
    if (i < 0 || i >= JS_WALK_ERR_KINDS) i = JS_WALK_ERR_KINDS - 1;
    atomic_fetch_add_explicit(&st.walk_errors[i], 1, RELAXED);
}

void js_stats_throttled(uint64_t weight)
{
    atomic_fetch_add_explicit(&st.throttled, 1, RELAXED);
    atomic_fetch_add_explicit(&st.throttled_weight, weight, RELAXED);
}

void js_stats_foreign_signal(void)
{
    atomic_fetch_add_explicit(&st.foreign, 1, RELAXED);
}

/* Record one handler duration; min/max by CAS loops (bounded by contention, lock-free). */
void js_stats_handler_ns(uint64_t ns)
{
    uint64_t b = ns / HIST_STEP_NS;
    if (b > HIST_BUCKETS) b = HIST_BUCKETS;
    atomic_fetch_add_explicit(&st.hist[b], 1, RELAXED);
    uint64_t cur = atomic_load_explicit(&st.min_ns, RELAXED);
    while (ns < cur && !atomic_compare_exchange_weak_explicit(&st.min_ns, &cur, ns, RELAXED, RELAXED)) {
    }
    cur = atomic_load_explicit(&st.max_ns, RELAXED);
    while (ns > cur && !atomic_compare_exchange_weak_explicit(&st.max_ns, &cur, ns, RELAXED, RELAXED)) {
    }
}

/* Value at quantile q (0..1) of the histogram, as the bucket's midpoint. */
static uint64_t hist_quantile(const uint64_t *h, uint64_t n, double q)
{
    if (n == 0) return 0;
    uint64_t want = (uint64_t)(q * (double)(n - 1)) + 1, seen = 0;
    for (int i = 0; i <= HIST_BUCKETS; i++) {
        seen += h[i];
        if (seen >= want) return (uint64_t)i * HIST_STEP_NS + HIST_STEP_NS / 2;
    }
    return (uint64_t)HIST_BUCKETS * HIST_STEP_NS;
}

void js_stats_get(js_stats_snapshot *o)
{
    memset(o, 0, sizeof *o);
    o->samples = atomic_load(&st.samples);
    o->weight = atomic_load(&st.weight);
    o->dropped = atomic_load(&st.dropped);
    o->dropped_weight = atomic_load(&st.dropped_weight);
    o->foreign = atomic_load(&st.foreign);
    o->throttled = atomic_load(&st.throttled);
    o->throttled_weight = atomic_load(&st.throttled_weight);
    for (int i = 0; i < JS_WALK_ERR_KINDS; i++) o->walk_errors[i] = atomic_load(&st.walk_errors[i]);
    uint64_t n = 0;
    uint64_t local[HIST_BUCKETS + 1];
    for (int i = 0; i <= HIST_BUCKETS; i++) n += (local[i] = atomic_load(&st.hist[i]));
    o->handler_count = n;
    o->handler_min_ns = n ? atomic_load(&st.min_ns) : 0;
    o->handler_max_ns = atomic_load(&st.max_ns);
    o->handler_median_ns = hist_quantile(local, n, 0.5);
    o->handler_p99_ns = hist_quantile(local, n, 0.99);
}

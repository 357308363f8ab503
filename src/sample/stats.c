/* stats.c - see stats.h. */
#include "sample/stats.h"

#include <stdatomic.h>
#include <string.h>

/* Handler time histogram: 25 ns buckets up to 20 us, then 8 buckets per doubling up to 20 us * 2^20
 * (about 21 s), then one overflow bucket (index HIST_BUCKETS). */
#define HIST_STEP_NS 25
#define LIN_BUCKETS 800
#define LIN_LIMIT_NS (HIST_STEP_NS * LIN_BUCKETS)
#define LOG_SUB 8
#define LOG_OCTAVES 20
#define HIST_BUCKETS (LIN_BUCKETS + LOG_SUB * LOG_OCTAVES)

/* Process-wide: signal handlers have no context argument to carry a pointer. */
static struct {
    _Atomic uint64_t samples, weight, dropped, dropped_weight, foreign, throttled, throttled_weight;
    _Atomic uint64_t unsampled, unarmed;
    _Atomic uint64_t vm_events[JS_STATS_VM_KINDS], vm_weight[JS_STATS_VM_KINDS], vm_dropped[JS_STATS_VM_KINDS];
    _Atomic uint64_t walk_errors[JS_WALK_ERR_KINDS];
    _Atomic uint64_t recovery[JS_RECOVER_KINDS];
    _Atomic uint64_t truncated;
    _Atomic(const char *) fail_name[JS_FAIL_SITES]; /* where recoveries failed: the first sites seen, kept */
    _Atomic uint64_t fail_count[JS_FAIL_SITES];
    _Atomic uint64_t hist[HIST_BUCKETS + 1];
    _Atomic uint64_t min_ns, max_ns;
} st;

#define RELAXED memory_order_relaxed

/* Zero every counter; min starts at "infinity". */
void js_stats_reset(void)
{
    for (int i = 0; i < JS_FAIL_SITES; i++) {
        atomic_store(&st.fail_name[i], NULL);
        atomic_store(&st.fail_count[i], 0);
    }
    atomic_store(&st.samples, 0);
    atomic_store(&st.weight, 0);
    atomic_store(&st.dropped, 0);
    atomic_store(&st.dropped_weight, 0);
    atomic_store(&st.foreign, 0);
    atomic_store(&st.unsampled, 0);
    atomic_store(&st.unarmed, 0);
    atomic_store(&st.throttled, 0);
    atomic_store(&st.throttled_weight, 0);
    for (int i = 0; i < JS_WALK_ERR_KINDS; i++) atomic_store(&st.walk_errors[i], 0);
    for (int i = 0; i < JS_RECOVER_KINDS; i++) atomic_store(&st.recovery[i], 0);
    atomic_store(&st.truncated, 0);
    for (int i = 0; i < JS_STATS_VM_KINDS; i++) {
        atomic_store(&st.vm_events[i], 0);
        atomic_store(&st.vm_weight[i], 0);
        atomic_store(&st.vm_dropped[i], 0);
    }
    for (int i = 0; i <= HIST_BUCKETS; i++) atomic_store(&st.hist[i], 0);
    atomic_store(&st.min_ns, UINT64_MAX);
    atomic_store(&st.max_ns, 0);
}

void js_stats_sample(uint64_t weight)
{
    atomic_fetch_add_explicit(&st.samples, 1, RELAXED);
    atomic_fetch_add_explicit(&st.weight, weight, RELAXED);
}

void js_stats_event(int kind, int stored, uint64_t weight)
{
    if (kind < 0 || kind >= JS_STATS_VM_KINDS) return;
    if (!stored) {
        atomic_fetch_add_explicit(&st.vm_dropped[kind], 1, RELAXED);
        return;
    }
    atomic_fetch_add_explicit(&st.vm_events[kind], 1, RELAXED);
    atomic_fetch_add_explicit(&st.vm_weight[kind], weight, RELAXED);
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

void js_stats_recovery(js_recover_kind k)
{
    if ((unsigned)k < JS_RECOVER_KINDS) atomic_fetch_add_explicit(&st.recovery[k], 1, RELAXED);
}

void js_stats_failed_in(const char *site)
{
    if (!site) return;
    for (int i = 0; i < JS_FAIL_SITES; i++) {
        const char *cur = atomic_load_explicit(&st.fail_name[i], RELAXED);
        if (!cur && atomic_compare_exchange_strong(&st.fail_name[i], &cur, site)) cur = site;
        if (cur == site) {
            atomic_fetch_add_explicit(&st.fail_count[i], 1, RELAXED);
            return;
        }
    }
}

void js_stats_truncated(uint64_t weight)
{
    atomic_fetch_add_explicit(&st.truncated, weight, RELAXED);
}

const char *js_recover_name(js_recover_kind k)
{
    static const char *const names[JS_RECOVER_KINDS] = {"stub", "prologue", "epilogue", "native", "body", "anchor", "not_code", "bad_blob",
                                                        "interpreter", "no_unwind", "no_stack", "retry_failed"};
    return (unsigned)k < JS_RECOVER_KINDS ? names[k] : "?";
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

void js_stats_unsampled_signal(void)
{
    atomic_fetch_add_explicit(&st.unsampled, 1, RELAXED);
}

void js_stats_unarmed_signal(void)
{
    atomic_fetch_add_explicit(&st.unarmed, 1, RELAXED);
}

/* Bucket of a duration: linear below LIN_LIMIT_NS, then logarithmic; HIST_BUCKETS past the top. */
static unsigned bucket_of(uint64_t ns)
{
    if (ns < LIN_LIMIT_NS) return (unsigned)(ns / HIST_STEP_NS);
    int oct = 63 - __builtin_clzll(ns / LIN_LIMIT_NS);
    if (oct >= LOG_OCTAVES) return HIST_BUCKETS;
    uint64_t base = (uint64_t)LIN_LIMIT_NS << oct;
    return LIN_BUCKETS + (unsigned)oct * LOG_SUB + (unsigned)((ns - base) * LOG_SUB / base);
}

/* Midpoint of bucket b (b < HIST_BUCKETS). */
static uint64_t bucket_mid(unsigned b)
{
    if (b < LIN_BUCKETS) return (uint64_t)b * HIST_STEP_NS + HIST_STEP_NS / 2;
    unsigned oct = (b - LIN_BUCKETS) / LOG_SUB, sub = (b - LIN_BUCKETS) % LOG_SUB;
    uint64_t base = (uint64_t)LIN_LIMIT_NS << oct, width = base / LOG_SUB;
    return base + sub * width + width / 2;
}

/* Record one handler duration; min/max by CAS loops (bounded by contention, lock-free). */
void js_stats_handler_ns(uint64_t ns)
{
    unsigned b = bucket_of(ns);
    atomic_fetch_add_explicit(&st.hist[b], 1, RELAXED);
    uint64_t cur = atomic_load_explicit(&st.min_ns, RELAXED);
    while (ns < cur && !atomic_compare_exchange_weak_explicit(&st.min_ns, &cur, ns, RELAXED, RELAXED)) {
    }
    cur = atomic_load_explicit(&st.max_ns, RELAXED);
    while (ns > cur && !atomic_compare_exchange_weak_explicit(&st.max_ns, &cur, ns, RELAXED, RELAXED)) {
    }
}

/* Value at quantile q (0..1) of the histogram, as the bucket's midpoint; JS_STATS_OVER if it lies past the top. */
static uint64_t hist_quantile(const uint64_t *h, uint64_t n, double q)
{
    if (n == 0) return 0;
    uint64_t want = (uint64_t)(q * (double)(n - 1)) + 1, seen = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        seen += h[i];
        if (seen >= want) return bucket_mid(i);
    }
    return JS_STATS_OVER;
}

void js_stats_get(js_stats_snapshot *o)
{
    memset(o, 0, sizeof *o);
    o->samples = atomic_load(&st.samples);
    o->weight = atomic_load(&st.weight);
    o->dropped = atomic_load(&st.dropped);
    o->dropped_weight = atomic_load(&st.dropped_weight);
    for (int i = 0; i < JS_STATS_VM_KINDS; i++) {
        o->vm_events[i] = atomic_load(&st.vm_events[i]);
        o->vm_weight[i] = atomic_load(&st.vm_weight[i]);
        o->vm_dropped[i] = atomic_load(&st.vm_dropped[i]);
    }
    o->foreign = atomic_load(&st.foreign);
    o->unsampled = atomic_load(&st.unsampled);
    o->unarmed = atomic_load(&st.unarmed);
    o->throttled = atomic_load(&st.throttled);
    o->throttled_weight = atomic_load(&st.throttled_weight);
    for (int i = 0; i < JS_WALK_ERR_KINDS; i++) o->walk_errors[i] = atomic_load(&st.walk_errors[i]);
    for (int i = 0; i < JS_RECOVER_KINDS; i++) o->recovery[i] = atomic_load(&st.recovery[i]);
    o->truncated = atomic_load(&st.truncated);
    for (int i = 0; i < JS_FAIL_SITES; i++) {
        o->fail_name[i] = atomic_load(&st.fail_name[i]);
        o->fail_count[i] = atomic_load(&st.fail_count[i]);
    }
    uint64_t n = 0;
    uint64_t local[HIST_BUCKETS + 1];
    for (int i = 0; i <= HIST_BUCKETS; i++) n += (local[i] = atomic_load(&st.hist[i]));
    o->handler_count = n;
    o->handler_min_ns = n ? atomic_load(&st.min_ns) : 0;
    o->handler_max_ns = atomic_load(&st.max_ns);
    o->handler_median_ns = hist_quantile(local, n, 0.5);
    o->handler_p99_ns = hist_quantile(local, n, 0.99);
    o->handler_hist_top_ns = (uint64_t)LIN_LIMIT_NS << LOG_OCTAVES;
}

/* stats_format.c - see stats_format.h. */
#include "core/stats_format.h"

#include <stdio.h>

#include "sample/walker.h"

/* A quantile as text: its value, or ">TOP" when it lies past the histogram's top. */
static const char *quantile(uint64_t v, uint64_t top, char *buf, size_t len)
{
    if (v == JS_STATS_OVER) snprintf(buf, len, ">%llu", (unsigned long long)top);
    else snprintf(buf, len, "%llu", (unsigned long long)v);
    return buf;
}

/* Human summary: one "key=value" line per group. */
int js_stats_format(const js_stats_snapshot *s, char *buf, size_t len)
{
    size_t off = 0;
    char med[32], p99[32];
    int n = snprintf(buf, len,
                     "samples=%llu weight=%llu dropped=%llu throttled=%llu foreign_signals=%llu\n"
                     "handler_ns: min=%llu median=%s p99=%s max=%llu (n=%llu)\n"
                     "walk_errors:",
                     (unsigned long long)s->samples, (unsigned long long)s->weight, (unsigned long long)s->dropped,
                     (unsigned long long)s->throttled, (unsigned long long)s->foreign,
                     (unsigned long long)s->handler_min_ns,
                     quantile(s->handler_median_ns, s->handler_hist_top_ns, med, sizeof med),
                     quantile(s->handler_p99_ns, s->handler_hist_top_ns, p99, sizeof p99),
                     (unsigned long long)s->handler_max_ns, (unsigned long long)s->handler_count);
    if (n < 0 || (size_t)n >= len) return -1;
    off = (size_t)n;
    uint64_t failed = 0;
    for (int i = 0; i < JS_WALK_ERR_KINDS; i++) failed += s->walk_errors[i];

    for (int i = 0; i < JS_WALK_ERR_KINDS; i++) {
        if (!s->walk_errors[i]) continue;
        n = snprintf(buf + off, len - off, " %s=%llu (%.2f%%)", js_walk_error_name(-i),
                     (unsigned long long)s->walk_errors[i], s->samples ? 100.0 * (double)s->walk_errors[i] / (double)s->samples : 0.0);
        if (n < 0 || (size_t)n >= len - off) return -1;
        off += (size_t)n;
    }
    if (!failed) {
        n = snprintf(buf + off, len - off, " none");
        if (n < 0 || (size_t)n >= len - off) return -1;
        off += (size_t)n;
    }
    uint64_t tried = 0;
    for (int i = 0; i < JS_RECOVER_KINDS; i++) tried += s->recovery[i];
    if (tried) {
        n = snprintf(buf + off, len - off, "\nrecovered_walks:");
        if (n < 0 || (size_t)n >= len - off) return -1;
        off += (size_t)n;
        for (int i = 0; i < JS_RECOVER_KINDS; i++) {
            if (!s->recovery[i]) continue;
            n = snprintf(buf + off, len - off, " %s%s=%llu", JS_RECOVER_FAILED(i) ? "failed_" : "",
                         js_recover_name((js_recover_kind)i), (unsigned long long)s->recovery[i]);
            if (n < 0 || (size_t)n >= len - off) return -1;
            off += (size_t)n;
        }
        for (int i = 0; i < JS_FAIL_SITES && s->fail_name[i]; i++) {
            n = snprintf(buf + off, len - off, "%s'%.60s'=%llu", i ? ", " : " (failed in: ", s->fail_name[i],
                         (unsigned long long)s->fail_count[i]);
            if (n < 0 || (size_t)n >= len - off) return -1;
            off += (size_t)n;
        }
        if (s->fail_name[0]) {
            n = snprintf(buf + off, len - off, ")");
            if (n < 0 || (size_t)n >= len - off) return -1;
            off += (size_t)n;
        }
    }
    if (s->truncated) {
        n = snprintf(buf + off, len - off, "\ntruncated_stacks=%llu (cut at jstackdepth)", (unsigned long long)s->truncated);
        if (n < 0 || (size_t)n >= len - off) return -1;
        off += (size_t)n;
    }
    static const char *const vm_names[JS_STATS_VM_KINDS] = {NULL, NULL, "alloc", "lock"};
    static const char *const vm_units[JS_STATS_VM_KINDS] = {NULL, NULL, "bytes", "ns"};
    for (int k = 0; k < JS_STATS_VM_KINDS; k++) { /* events the VM reported: allocations, lock waits */
        if (!vm_names[k] || !(s->vm_events[k] | s->vm_dropped[k])) continue;
        n = snprintf(buf + off, len - off, "\n%s: events=%llu %s=%llu dropped=%llu", vm_names[k],
                     (unsigned long long)s->vm_events[k], vm_units[k], (unsigned long long)s->vm_weight[k],
                     (unsigned long long)s->vm_dropped[k]);
        if (n < 0 || (size_t)n >= len - off) return -1;
        off += (size_t)n;
    }
    return 0;
}

/* jitter.h - randomised sampling periods, so a periodic workload cannot alias with the sampler.
 *
 * A sampler that fires at exact multiples of its period sees the same phase of a periodic workload
 * again and again. Each period is drawn uniformly from [mean/2, 3*mean/2): the mean is kept, so over
 * a CPU-second a thread still gets 1e9/mean samples on average (renewal theory) and a sample still
 * stands for one mean period. js_jitter_next is async-signal-safe and lock-free (one atomic add).
 */
#ifndef JS_JITTER_H
#define JS_JITTER_H

#include <stdatomic.h>
#include <stdint.h>

/* Samples a thread's period drawn at random is kept for (cpu) or its phase (ctimer, whose kernel timer repeats the
 * mean in between): setting a perf counter's period restarts its kernel timer, a hypervisor exit (about 11 us on
 * these VMs), and a ctimer's draw is two timer system calls (about 10 us on a slow one), so a draw is paid once per
 * run of samples. */
#ifndef JS_JITTER_RUN
#define JS_JITTER_RUN 8
#endif

/* Signal-safe: 1 if this signal of a thread draws its next period, counting down *countdown (the thread's own
 * counter, touched only by its handlers): every JS_JITTER_RUN-th signal, the first one included. */
static inline int js_jitter_due(_Atomic uint32_t *countdown)
{
    uint32_t left = atomic_load_explicit(countdown, memory_order_relaxed);
    int due = left == 0;
    atomic_store_explicit(countdown, (due ? JS_JITTER_RUN : left) - 1, memory_order_relaxed);
    return due;
}

/* The next period for a mean of mean_ns (mean_ns itself when jitter is off). Signal-safe. */
uint64_t js_jitter_next(uint64_t mean_ns, int jitter);

#endif

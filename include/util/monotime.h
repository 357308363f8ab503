/* monotime.h - the monotonic clock every layer stamps and times with.
 *
 * clock_gettime(CLOCK_MONOTONIC) is a vDSO call: safe in a signal handler, no lock, no allocation. The handler's
 * event stamps, the JFR chunk times and the task client's deadlines all read this one clock, so they compare.
 */
#ifndef JS_MONOTIME_H
#define JS_MONOTIME_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns. */
static inline uint64_t js_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in ms. */
static inline long long js_mono_ms(void)
{
    return (long long)(js_mono_ns() / 1000000ULL);
}

#endif

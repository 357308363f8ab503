/* engine_itimer.c - "itimer": setitimer(ITIMER_PROF), one timer for the whole process.
 * The kernel gives SIGPROF to whichever thread its tick found running; periods shorter than
 * the tick are lost without trace. Last resort; the profiler says so when it is in use. A SIGPROF is
 * taken as ours only if the kernel raised it (SI_KERNEL) while our timer runs.
 */
#include "engine/engine.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/time.h>

/* 1 while our ITIMER_PROF runs (read by the handler): a SIGPROF from the kernel is ours only then. */
static _Atomic int running;

static int itimer_start(long long interval_ns, int jitter, int signo, char *err, size_t errlen)
{
    if (signo != SIGPROF) {
        snprintf(err, errlen, "itimer needs SIGPROF, which another handler owns");
        return -1;
    }
    struct itimerval v;
    v.it_interval.tv_sec = v.it_value.tv_sec = (time_t)(interval_ns / 1000000000LL);
    v.it_interval.tv_usec = v.it_value.tv_usec = (suseconds_t)(interval_ns % 1000000000LL / 1000);
    if (setitimer(ITIMER_PROF, &v, NULL) != 0) {
        snprintf(err, errlen, "setitimer(ITIMER_PROF): %s", strerror(errno));
        return -1;
    }
    atomic_store(&running, 1);
    return 0;
}

static void itimer_stop(void)
{
    atomic_store(&running, 0);
    struct itimerval v;
    memset(&v, 0, sizeof v);
    setitimer(ITIMER_PROF, &v, NULL);
}

static uint64_t itimer_weight(const siginfo_t *si, js_thread *t)
{
    return si->si_signo == SIGPROF && si->si_code == SI_KERNEL && atomic_load_explicit(&running, memory_order_relaxed)
               ? 1
               : 0;
}

const js_engine js_engine_itimer = {
    .name = "itimer",
    .description = "setitimer(ITIMER_PROF), process-wide",
    .per_thread = 0,
    .start = itimer_start,
    .stop = itimer_stop,
    .thread_start = NULL,
    .thread_stop = NULL,
    .sample_weight = itimer_weight,
};

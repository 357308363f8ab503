/* engine_ctimer.c - "ctimer": a POSIX timer per thread on that thread's CPU-time clock,
 * delivered to that thread (SIGEV_THREAD_ID). The kernel checks CPU timers once per tick, so
 * below the tick one signal stands for 1 + si_overrun periods: that is the sample's weight.
 */
#include "engine/engine.h"
#include "engine/jitter.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Settings of the running engine (one per process). */
static _Atomic long long period_ns; /* read by handlers: atomic */
static _Atomic int jitter_on;
static int sig;

/* The kernel's per-thread CPU clock id for tid (CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED). */
static clockid_t thread_cpu_clock(int tid)
{
    return (clockid_t)((~(unsigned)tid << 3) | 6);
}

static int ctimer_start(long long interval_ns, int jitter, int signo, char *err, size_t errlen)
{
    period_ns = interval_ns;
    /* Not randomised: re-arming from the handler adds the kernel's tick delay to every period (CPU timers are
     * checked once per tick), which lowers the rate by about a sixth; the tick already blurs the phase. */
    jitter_on = 0;
    sig = signo;
    return 0;
}

static void ctimer_stop(void)
{
}

static int ctimer_thread_start(int tid, _Atomic intptr_t *handle, char *err, size_t errlen)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = sig;
    sev._sigev_un._tid = tid;
    int timerid = -1;
    if (syscall(SYS_timer_create, thread_cpu_clock(tid), &sev, &timerid) != 0) {
        snprintf(err, errlen, "timer_create(tid %d): %s", tid, strerror(errno));
        return -1;
    }
    atomic_store(handle, timerid);
    struct itimerspec its;
    its.it_interval.tv_sec = its.it_value.tv_sec = (time_t)(period_ns / 1000000000LL);
    its.it_interval.tv_nsec = its.it_value.tv_nsec = (long)(period_ns % 1000000000LL);
    if (syscall(SYS_timer_settime, timerid, 0, &its, NULL) != 0) {
        snprintf(err, errlen, "timer_settime(tid %d): %s", tid, strerror(errno));
        atomic_store(handle, -1);
        syscall(SYS_timer_delete, timerid);
        return -1;
    }
    return 0;
}

/* Delete always (the timer outlives its thread and holds a sigpending charge). */
static void ctimer_thread_stop(_Atomic intptr_t *handle)
{
    int timerid = (int)atomic_exchange(handle, -1);
    if (timerid >= 0) syscall(SYS_timer_delete, timerid);
}

static uint64_t ctimer_weight(const siginfo_t *si, intptr_t handle)
{
    if (si->si_code != SI_TIMER || handle < 0) return 0;
    if (si->si_timerid != (int)handle) return 0;
    if (jitter_on) { /* the next expiry, and the interval after it if a signal is lost */
        uint64_t next = js_jitter_next((uint64_t)period_ns, 1);
        struct itimerspec its;
        its.it_value.tv_sec = its.it_interval.tv_sec = (time_t)(next / 1000000000ULL);
        its.it_value.tv_nsec = its.it_interval.tv_nsec = (long)(next % 1000000000ULL);
        syscall(SYS_timer_settime, (int)handle, 0, &its, NULL);
    }
    return 1 + (uint64_t)(si->si_overrun > 0 ? si->si_overrun : 0);
}

const js_engine js_engine_ctimer = {
    .name = "ctimer",
    .description = "per-thread CPU-time POSIX timer",
    .per_thread = 1,
    .start = ctimer_start,
    .stop = ctimer_stop,
    .thread_start = ctimer_thread_start,
    .thread_stop = ctimer_thread_stop,
    .sample_weight = ctimer_weight,
};

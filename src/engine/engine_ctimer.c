/* engine_ctimer.c - "ctimer": a POSIX timer per thread on that thread's CPU-time clock,
 * delivered to that thread (SIGEV_THREAD_ID). The kernel checks CPU timers once per tick, so
 * below the tick one signal stands for 1 + si_overrun periods: that is the sample's weight.
 *
 * With jitter, the handler sets the next period once per JS_JITTER_RUN signals of a thread (two timer system
 * calls: half a short handler on these VMs); in between the kernel repeats the mean interval, so each draw moves
 * the phase of the samples that follow it. The signal comes up to a tick after the expiry,
 * and the timer (periodic, it_interval) has already been advanced past that expiry: what it has
 * left of its interval tells how far the thread ran beyond the expiry. The next expiry is set that
 * much sooner, so periods are counted from the expiries, not from the late signals, and the mean
 * rate is kept.
 */
#include "engine/engine.h"
#include "engine/jitter.h"
#include "engine_int.h"

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

static uint64_t ts_ns(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)ts->tv_nsec;
}

static struct timespec ns_ts(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)};
    return ts;
}

void js_ctimer_setup(long long interval_ns, int jitter, int signo)
{
    period_ns = interval_ns;
    jitter_on = jitter;
    sig = signo;
}

static int ctimer_start(long long interval_ns, int jitter, int signo, char *err, size_t errlen)
{
    js_ctimer_setup(interval_ns, jitter, signo);
    return 0;
}

static void ctimer_stop(void)
{
}

int js_ctimer_attach(int tid, _Atomic intptr_t *handle, intptr_t tag, char *err, size_t errlen)
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
    atomic_store(handle, timerid | tag);
    /* With jitter the first expiry is drawn too (a random phase); the handler sets the periods after it. */
    uint64_t period = (uint64_t)period_ns, first = js_jitter_next(period, jitter_on);
    struct itimerspec its = {.it_interval = ns_ts(period), .it_value = ns_ts(first > 0 ? first : 1)};
    if (syscall(SYS_timer_settime, timerid, 0, &its, NULL) != 0) {
        snprintf(err, errlen, "timer_settime(tid %d): %s", tid, strerror(errno));
        atomic_store(handle, -1);
        syscall(SYS_timer_delete, timerid);
        return -1;
    }
    return 0;
}

static int ctimer_thread_start(int tid, _Atomic intptr_t *handle, char *err, size_t errlen)
{
    return js_ctimer_attach(tid, handle, 0, err, errlen);
}

/* Disarm: no more expiries; the id stays valid for a handler still running. */
void js_ctimer_pause(_Atomic intptr_t *handle, intptr_t tag)
{
    intptr_t h = atomic_load(handle);
    struct itimerspec off;
    memset(&off, 0, sizeof off);
    if (h >= 0) syscall(SYS_timer_settime, (int)(h & ~tag), 0, &off, NULL);
}

static void ctimer_thread_pause(_Atomic intptr_t *handle)
{
    js_ctimer_pause(handle, 0);
}

/* Delete always (the timer outlives its thread and holds a sigpending charge). */
void js_ctimer_detach(_Atomic intptr_t *handle, intptr_t tag)
{
    intptr_t h = atomic_exchange(handle, -1);
    if (h >= 0) syscall(SYS_timer_delete, (int)(h & ~tag));
}

static void ctimer_thread_stop(_Atomic intptr_t *handle)
{
    js_ctimer_detach(handle, 0);
}

/* Signal-safe: draw the next period of timer id, counted from the last expiry rather than from this signal,
 * and return how many drawn periods had already run out (expiries this signal stands for as well).
 *
 * The kernel advanced the timer past the present by whole intervals when it dequeued the signal (those are
 * si_overrun), so interval - remaining is the CPU time run since the last expiry: the tick's delay and the
 * handler so far. The next expiry is a fresh draw after that expiry; when the thread already ran past it (a
 * short draw after a late signal), it is counted here and the draw after it is taken. it_interval is the mean
 * period: the periods the kernel repeats by itself (below the tick, and if a signal is lost) keep the mean
 * exact, whereas repeating a short draw would count 1/draw per unit of CPU, about a tenth too many. */
static uint64_t rearm(int id)
{
    struct itimerspec cur;
    if (syscall(SYS_timer_gettime, id, &cur) != 0) return 0; /* deleted under us: nothing to arm */
    uint64_t interval = ts_ns(&cur.it_interval), remaining = ts_ns(&cur.it_value);
    uint64_t late = remaining > 0 && remaining < interval ? interval - remaining : 0;
    uint64_t mean = (uint64_t)period_ns, next = js_jitter_next(mean, 1), passed = 0;
    while (next <= late && passed < 64) { /* a draw is at least mean / 2, and late below one interval */
        late -= next;
        passed++;
        next = js_jitter_next(mean, 1);
    }
    struct itimerspec its = {.it_interval = ns_ts(mean), .it_value = ns_ts(next > late ? next - late : 1)};
    syscall(SYS_timer_settime, id, 0, &its, NULL);
    return passed;
}

uint64_t js_ctimer_weight(const siginfo_t *si, int timerid, _Atomic uint32_t *countdown)
{
    if (si->si_code != SI_TIMER || timerid < 0) return 0;
    if (si->si_timerid != timerid) return 0;
    uint64_t w = 1 + (uint64_t)(si->si_overrun > 0 ? si->si_overrun : 0);
    if (jitter_on && js_jitter_due(countdown)) w += rearm(timerid);
    return w;
}

static uint64_t ctimer_weight(const siginfo_t *si, js_thread *t)
{
    intptr_t handle = t ? atomic_load_explicit(&t->handle, memory_order_relaxed) : -1;
    return handle < 0 ? 0 : js_ctimer_weight(si, (int)handle, &t->engine_countdown);
}

const js_engine js_engine_ctimer = {
    .name = "ctimer",
    .description = "per-thread CPU-time POSIX timer",
    .per_thread = 1,
    .start = ctimer_start,
    .stop = ctimer_stop,
    .thread_start = ctimer_thread_start,
    .thread_pause = ctimer_thread_pause,
    .thread_stop = ctimer_thread_stop,
    .sample_weight = ctimer_weight,
};

/* test_engines.c - each sampling engine's weight function (engine.h) on crafted signals: ours only when the kernel
 * raised it for the thread's own counter or timer, with the timer's overruns as weight; the randomised periods
 * (jitter.h): mean kept, spread within +-50%; and a real ctimer on this thread: the rate kept with and without
 * jitter, the periods varied only with it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "engine/engine.h"
#include "engine/jitter.h"
#include "sample/threads.h"

#define UNUSED __attribute__((unused))

static siginfo_t sig(int signo, int code)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = signo;
    si.si_code = code;
    return si;
}

/* A thread slot whose engine handle is h (NULL for -2: a thread the table does not know). */
static js_thread *slot(intptr_t h)
{
    static js_thread t;
    if (h == -2) return NULL;
    memset(&t, 0, sizeof t);
    atomic_store(&t.handle, h);
    return &t;
}

/* perf: the kernel's overflow signal (si_code > 0, POLL_IN) for the thread's own fd; nothing else. */
static void test_perf_weight(void **state UNUSED)
{
    siginfo_t si = sig(SIGPROF, POLL_IN);
    si.si_fd = 17;
    assert_int_equal(js_engine_perf.sample_weight(&si, slot(17)), 1);
    assert_int_equal(js_engine_perf.sample_weight(&si, slot(18)), 0); /* another thread's counter */
    assert_int_equal(js_engine_perf.sample_weight(&si, slot(-1)), 0); /* released */
    assert_int_equal(js_engine_perf.sample_weight(&si, slot(-2)), 0); /* thread unknown */
    si = sig(SIGPROF, SI_USER);
    si.si_fd = 17;
    assert_int_equal(js_engine_perf.sample_weight(&si, slot(17)), 0);
    si = sig(SIGPROF, SI_TKILL);
    assert_int_equal(js_engine_perf.sample_weight(&si, slot(17)), 0);
}

/* perf with jitter: a thread draws its next period (a costly ioctl) once every JS_JITTER_RUN samples, counted in its
 * own slot: two threads' counts do not mix. */
static void test_perf_jitter_run(void **state UNUSED)
{
    char err[256];
    if (js_engine_perf.start(1000000LL, 1, SIGPROF, err, sizeof err) != 0) skip(); /* perf_events refused here */
    static js_thread a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    atomic_store(&a.handle, 17);
    atomic_store(&b.handle, 18);
    siginfo_t sa = sig(SIGPROF, POLL_IN), sb = sig(SIGPROF, POLL_IN);
    sa.si_fd = 17;
    sb.si_fd = 18;
    assert_int_equal(js_engine_perf.sample_weight(&sa, &a), 1); /* the first sample draws */
    assert_int_equal(atomic_load(&a.engine_countdown), JS_JITTER_RUN - 1);
    for (int i = 1; i < JS_JITTER_RUN; i++) {
        assert_int_equal(js_engine_perf.sample_weight(&sa, &a), 1);
        assert_int_equal(atomic_load(&a.engine_countdown), (uint32_t)(JS_JITTER_RUN - 1 - i));
    }
    assert_int_equal(atomic_load(&b.engine_countdown), 0);
    assert_int_equal(js_engine_perf.sample_weight(&sb, &b), 1);
    assert_int_equal(atomic_load(&b.engine_countdown), JS_JITTER_RUN - 1);
    assert_int_equal(js_engine_perf.sample_weight(&sa, &a), 1); /* a's run is over: it draws again */
    assert_int_equal(atomic_load(&a.engine_countdown), JS_JITTER_RUN - 1);
    js_engine_perf.stop();
    js_engine_perf.start(1000000LL, 0, SIGPROF, err, sizeof err);
    atomic_store(&a.engine_countdown, 0);
    assert_int_equal(js_engine_perf.sample_weight(&sa, &a), 1); /* no jitter: no draws, nothing counted */
    assert_int_equal(atomic_load(&a.engine_countdown), 0);
    js_engine_perf.stop();
}

/* A counter that no slot holds any more (its handle lost without a stop) is found by js_engine_perf_close_escaped,
 * closed and named by its thread; one stopped properly is not closed twice. */
static void test_perf_close_escaped(void **state UNUSED)
{
    char err[256], tids[64];
    if (js_engine_perf.start(1000000LL, 0, SIGPROF, err, sizeof err) != 0) skip(); /* perf_events refused here */
    int tid = (int)syscall(SYS_gettid);
    _Atomic intptr_t kept = -1, lost = -1;
    assert_int_equal(js_engine_perf.thread_start(tid, &kept, err, sizeof err), 0);
    assert_int_equal(js_engine_perf.thread_start(tid, &lost, err, sizeof err), 0);
    assert_int_equal(js_engine_perf_counters_open(), 2);
    int fd = (int)atomic_load(&lost);
    js_engine_perf.thread_pause(&lost);
    atomic_store(&lost, -1); /* the slot forgets it: escaped */
    js_engine_perf.thread_stop(&kept);
    assert_int_equal(js_engine_perf_counters_open(), 1);
    assert_int_equal(js_engine_perf_close_escaped(tids, sizeof tids), 1);
    char want[16];
    snprintf(want, sizeof want, "%d", tid);
    assert_string_equal(tids, want);
    assert_int_equal(js_engine_perf_counters_open(), 0);
    assert_int_equal(fcntl(fd, F_GETFD), -1); /* the file is closed */
    assert_int_equal(js_engine_perf_close_escaped(tids, sizeof tids), 0);
    js_engine_perf.stop();
}

/* ctimer: SI_TIMER for the thread's own timer weighs 1 + overruns (periods the tick folded into one signal). */
static void test_ctimer_weight(void **state UNUSED)
{
    siginfo_t si = sig(SIGPROF, SI_TIMER);
    si.si_timerid = 3;
    si.si_overrun = 0;
    assert_int_equal(js_engine_ctimer.sample_weight(&si, slot(3)), 1);
    si.si_overrun = 4;
    assert_int_equal(js_engine_ctimer.sample_weight(&si, slot(3)), 5);
    si.si_overrun = -2;
    assert_int_equal(js_engine_ctimer.sample_weight(&si, slot(3)), 1);
    assert_int_equal(js_engine_ctimer.sample_weight(&si, slot(4)), 0);
    assert_int_equal(js_engine_ctimer.sample_weight(&si, slot(-1)), 0);
    si = sig(SIGPROF, SI_USER);
    assert_int_equal(js_engine_ctimer.sample_weight(&si, slot(3)), 0);
}

/* itimer: a kernel SIGPROF counts only while the engine's timer runs. */
static void test_itimer_weight(void **state UNUSED)
{
    siginfo_t si = sig(SIGPROF, SI_KERNEL);
    assert_int_equal(js_engine_itimer.sample_weight(&si, NULL), 0); /* not started */
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPROF, &ign, &old);
    char err[256];
    assert_int_equal(js_engine_itimer.start(100000000LL, 0, SIGPROF, err, sizeof err), 0);
    assert_int_equal(js_engine_itimer.sample_weight(&si, NULL), 1);
    siginfo_t user = sig(SIGPROF, SI_USER);
    assert_int_equal(js_engine_itimer.sample_weight(&user, NULL), 0);
    js_engine_itimer.stop();
    assert_int_equal(js_engine_itimer.sample_weight(&si, NULL), 0);
    sigaction(SIGPROF, &old, NULL);
}

/* Jitter keeps the mean and spreads periods uniformly over [mean/2, 3*mean/2); off, the period is exact. */
static void test_jitter_distribution(void **state UNUSED)
{
    const uint64_t mean = 10000000; /* 10 ms */
    const int n = 200000;
    double sum = 0, sumsq = 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    int quarter[4] = {0, 0, 0, 0};
    for (int i = 0; i < n; i++) {
        uint64_t p = js_jitter_next(mean, 1);
        sum += (double)p;
        sumsq += (double)p * (double)p;
        if (p < lo) lo = p;
        if (p > hi) hi = p;
        quarter[(p - mean / 2) * 4 / mean]++;
    }
    double m = sum / n, sd = sqrt(sumsq / n - m * m);
    /* Uniform over a width of mean: sd = mean / sqrt(12) = 0.2887 mean. The sample mean's error is sd/sqrt(n):
     * 6.5e-4 of the mean, so 0.5% is over 7 sigma. */
    assert_true(fabs(m - (double)mean) < 0.005 * (double)mean);
    assert_true(fabs(sd / (double)mean - 0.2887) < 0.01);
    assert_true(lo >= mean / 2 && hi < mean + mean / 2);
    for (int q = 0; q < 4; q++) assert_true(quarter[q] > n / 4 - n / 40 && quarter[q] < n / 4 + n / 40);
    assert_int_equal(js_jitter_next(mean, 0), mean);
}

/* ---- a real ctimer on this thread ---- */

#define CT_MAX 4096
static struct {
    _Atomic intptr_t handle;
    _Atomic int n;                /* signals of ours */
    _Atomic int told;             /* of which told their period (period_ns[i] != 0) */
    _Atomic uint64_t weight;      /* their total weight */
    uint64_t cpu_ns[CT_MAX];      /* thread CPU time at each signal */
    uint64_t period_ns[CT_MAX];   /* the period that follows the expiry the signal reports */
    uint64_t start_ns;            /* thread CPU time when the timer started */
    int keep;                     /* 1: the signals share one thread slot (its draw countdown), as in the agent */
    _Atomic int anew;             /* of the told signals, those after which the timer was set anew (a draw) */
    js_thread slot;               /* that slot */
} ct;

/* Periods of interval_ns in the thread CPU time from the timer's start to its last signal: what the weights can
 * account for (the CPU run after the last signal is not signalled yet; on a loaded machine a signal below the tick
 * stands for tens of periods, so the truth is taken at the last signal, not at the end of the run). */
static uint64_t signalled_periods(uint64_t interval_ns)
{
    int n = atomic_load(&ct.n);
    if (n > CT_MAX) n = CT_MAX;
    return n ? (ct.cpu_ns[n - 1] - ct.start_ns) / interval_ns : 0;
}

static uint64_t ns(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)ts->tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ns(&ts);
}

/* Counts the engine's signals and weights. The timer read before and after the engine's handler gives the next
 * period as the engine set it: the CPU time run since the expiry (interval - remaining: the kernel has already
 * moved a periodic timer on by its interval) plus what remains after, short by the CPU time between the two reads
 * (a few microseconds). A signal whose reads were more than DISTURBED_NS of CPU apart (a vCPU stalled there, which
 * a loaded CI machine does) tells no period. */
#define DISTURBED_NS 50000
static void ct_handler(int signo, siginfo_t *si, void *uc)
{
    int id = (int)atomic_load(&ct.handle);
    struct itimerspec before, after;
    uint64_t read0 = thread_cpu_ns();
    int ok = syscall(SYS_timer_gettime, id, &before) == 0;
    js_thread fresh, *t = ct.keep ? &ct.slot : &fresh;
    if (!ct.keep) memset(&fresh, 0, sizeof fresh);
    atomic_store(&t->handle, id);
    uint64_t w = js_engine_ctimer.sample_weight(si, t);
    if (!w) return;
    ok = ok && syscall(SYS_timer_gettime, id, &after) == 0;
    uint64_t read1 = thread_cpu_ns();
    int i = atomic_load(&ct.n);
    if (i < CT_MAX) {
        ct.cpu_ns[i] = read1;
        /* Only a signal that stands for one period tells its period this way: one delayed past a whole interval
         * (a busy machine) had the timer moved on by more than one interval, and is left out (0). */
        ct.period_ns[i] = ok && w == 1 && read1 - read0 < DISTURBED_NS
                              ? ns(&before.it_interval) - ns(&before.it_value) + ns(&after.it_value)
                              : 0;
        if (ct.period_ns[i]) atomic_fetch_add(&ct.told, 1);
        /* left alone, the timer only ran down by the CPU time between the reads; set anew, it holds a fresh draw */
        uint64_t b = ns(&before.it_value), a = ns(&after.it_value);
        if (ct.period_ns[i] && (a > b || b - a > DISTURBED_NS)) atomic_fetch_add(&ct.anew, 1);
    }
    atomic_store(&ct.n, i + 1);
    atomic_fetch_add(&ct.weight, w);
}

static volatile uint64_t sink;


/* Runs a ctimer on this thread at interval_ns for cpu_ns of this thread's CPU time, and on until min_told signals
 * told their periods (a loaded machine folds many periods into one signal; at most 2 * cpu_ns); returns the total
 * weight. */
static uint64_t run_ctimer(long long interval_ns, int jitter, uint64_t cpu_ns, int min_told)
{
    struct sigaction old;
    tu_install(SIGPROF, ct_handler, &old);
    atomic_store(&ct.n, 0);
    atomic_store(&ct.told, 0);
    atomic_store(&ct.weight, 0);
    atomic_store(&ct.handle, -1);
    atomic_store(&ct.anew, 0);
    memset(&ct.slot, 0, sizeof ct.slot);
    char err[256];
    assert_int_equal(js_engine_ctimer.start(interval_ns, jitter, SIGPROF, err, sizeof err), 0);
    uint64_t t0 = thread_cpu_ns();
    ct.start_ns = t0;
    assert_int_equal(js_engine_ctimer.thread_start((int)syscall(SYS_gettid), &ct.handle, err, sizeof err), 0);
    uint64_t x = 1;
    while ((thread_cpu_ns() - t0 < cpu_ns || atomic_load(&ct.told) < min_told) && thread_cpu_ns() - t0 < 2 * cpu_ns)
        for (int i = 0; i < 10000; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    sink = x;
    js_engine_ctimer.thread_stop(&ct.handle);
    js_engine_ctimer.stop();
    sigaction(SIGPROF, &old, NULL);
    return atomic_load(&ct.weight);
}

typedef struct {
    uint64_t gap_lo, gap_hi; /* thread CPU time between consecutive signals */
    uint64_t per_lo, per_hi; /* the periods set after each signal's expiry */
    int periods, short_periods; /* periods told, and those below the floor given to spread() */
} ct_spread;

/* floor_ns: a period below it counts as short. The low end is read through the CPU time that passes between the
 * handler's two timer reads, which a stalled vCPU can stretch once in a while: tests bound the share of short
 * periods, not the single lowest. */
static ct_spread spread(uint64_t floor_ns)
{
    ct_spread r = {UINT64_MAX, 0, UINT64_MAX, 0, 0, 0};
    int n = atomic_load(&ct.n);
    if (n > CT_MAX) n = CT_MAX;
    for (int i = 0; i < n; i++) {
        if (ct.period_ns[i] && ct.period_ns[i] < r.per_lo) r.per_lo = ct.period_ns[i];
        if (ct.period_ns[i] > r.per_hi) r.per_hi = ct.period_ns[i];
        r.periods += ct.period_ns[i] != 0;
        r.short_periods += ct.period_ns[i] && ct.period_ns[i] < floor_ns;
        if (i == 0) continue;
        uint64_t gap = ct.cpu_ns[i] - ct.cpu_ns[i - 1];
        if (gap < r.gap_lo) r.gap_lo = gap;
        if (gap > r.gap_hi) r.gap_hi = gap;
    }
    return r;
}

/* The thread's CPU up to the last signal weighs one per 10 ms with or without jitter: the kernel signals CPU timers on the tick,
 * up to a tick after the expiry, and the handler counts the next period from the expiry, not from the signal.
 * With jitter each period is drawn from [5, 15) ms and the signals come unevenly; without, the period is exact and
 * only the tick moves the signals (which it does by up to a tick: the gaps alone cannot tell the two apart, the
 * periods set can). The renewal count's spread over n periods is about 0.3 sqrt(n) (4 at 200): 6% is over 3 sigma. */
/* 1 if at least 50 signals told their period. The kernel checks a thread's CPU timers on the ticks that find it
 * running: with more runnable threads than CPUs a thread often runs its whole slice between two ticks, and one
 * signal comes for many periods (its weight says how many, which is still judged), so periods cannot be told;
 * that is said, not judged. */
static int told_enough(ct_spread s)
{
    if (s.periods >= 50) return 1;
    printf("  (periods not judged: %d signals told their period; this machine is too busy for that measure)\n",
           s.periods);
    return 0;
}

static void test_ctimer_jitter_keeps_rate(void **state UNUSED)
{
    const uint64_t ms = 1000000, slack = ms / 10; /* over the CPU time between the timer reads (DISTURBED_NS) */
    uint64_t fixed = run_ctimer(10 * (long long)ms, 0, 2000 * ms, 100);
    uint64_t fixed_truth = signalled_periods(10 * ms);
    ct_spread f = spread(10 * ms - slack);
    printf("ctimer 10 ms, nojitter: weight %llu over %llu periods of CPU to the last signal, in %d signals; gaps "
           "%.2f-%.2f ms; %d of %d periods short of 10 ms by more than the slack, longest %.3f ms\n",
           (unsigned long long)fixed, (unsigned long long)fixed_truth, atomic_load(&ct.n), f.gap_lo / 1e6,
           f.gap_hi / 1e6, f.short_periods, f.periods, f.per_hi / 1e6);
    assert_true(fixed_truth >= 50 && fixed * 100 >= fixed_truth * 94 && fixed * 100 <= fixed_truth * 106);
    /* nojitter: the timer is left alone (a period set anew would show in every signal, not in one of fifty) */
    if (told_enough(f)) assert_true(f.short_periods * 50 <= f.periods && f.per_hi <= 10 * ms);

    uint64_t w = run_ctimer(10 * (long long)ms, 1, 2000 * ms, 100);
    uint64_t truth = signalled_periods(10 * ms);
    ct_spread j = spread(5 * ms - slack);
    printf("ctimer 10 ms, jitter: weight %llu over %llu periods of CPU to the last signal, in %d signals; gaps "
           "%.2f-%.2f ms, %d periods %.2f-%.2f ms\n", (unsigned long long)w, (unsigned long long)truth,
           atomic_load(&ct.n), j.gap_lo / 1e6, j.gap_hi / 1e6, j.periods, j.per_lo / 1e6, j.per_hi / 1e6);
    assert_true(truth >= 50 && w * 100 >= truth * 94 && w * 100 <= truth * 106);
    if (!told_enough(j)) return;
    /* each period within +-50% of the mean */
    assert_true(j.short_periods * 50 <= j.periods && j.per_hi < 15 * ms + slack);
    assert_true(j.per_lo < 7 * ms && j.per_hi > 13 * ms);          /* and spread over that range */
    assert_true(j.gap_hi - j.gap_lo > 2 * ms);                     /* the signals are not evenly spaced */
}

/* In the agent a thread's signals share its slot: with jitter the timer gets a fresh draw once per JS_JITTER_RUN
 * signals (two timer system calls each), the kernel repeating the mean in between, and the rate stays the mean's.
 * Before, every signal drew, which the test counts as set-anew on about every told signal. */
static void test_ctimer_draws_once_per_run(void **state UNUSED)
{
    const uint64_t ms = 1000000;
    ct.keep = 1;
    uint64_t w = run_ctimer(10 * (long long)ms, 1, 2000 * ms, 100);
    ct.keep = 0;
    uint64_t truth = signalled_periods(10 * ms);
    int told = atomic_load(&ct.told), anew = atomic_load(&ct.anew);
    printf("ctimer 10 ms, jitter, one slot: weight %llu over %llu periods of CPU to the last signal, in %d signals; "
           "%d told their period, %d of them after a fresh draw (one in %d expected)\n", (unsigned long long)w,
           (unsigned long long)truth, atomic_load(&ct.n), told, anew, JS_JITTER_RUN);
    assert_true(truth >= 50 && w * 100 >= truth * 94 && w * 100 <= truth * 106);
    if (!told_enough(spread(0))) return;
    assert_true(anew >= 1 && anew * JS_JITTER_RUN <= 2 * told && 2 * anew * JS_JITTER_RUN >= told);
}

/* Below the tick one signal stands for several periods: the kernel repeats the timer's interval, which is the mean
 * (repeating the last draw would count 1/draw periods per unit of CPU, 10% too many at +-50%), and draws that ran
 * out before the signal came are counted in its weight (not pushed past it: 1-4% too few). 1 s at 1 ms: 1000. */
static void test_ctimer_jitter_below_tick(void **state UNUSED)
{
    const uint64_t ms = 1000000;
    uint64_t w = run_ctimer((long long)ms, 1, 1000 * ms, 0);
    uint64_t truth = signalled_periods(ms);
    printf("ctimer 1 ms, jitter: weight %llu over 1 s of CPU in %d signals; %llu periods of CPU up to the last\n",
           (unsigned long long)w, atomic_load(&ct.n), (unsigned long long)truth);
    assert_true(truth >= 500 && w * 100 >= truth * 97 && w * 100 <= truth * 103);
}

static _Atomic int rt_delivered, rt_go, rt_ready;
static js_thread *_Atomic rt_slot;   /* the blocker's slot */
static _Atomic uint64_t rt_weight;   /* what its signals carried, taken as the sampler takes it */

static void rt_handler(int signo, siginfo_t *si, void *uc)
{
    js_thread *t = atomic_load(&rt_slot);
    if (t) atomic_fetch_add(&rt_weight, atomic_exchange(&t->wall_due, 0));
    atomic_fetch_add(&rt_delivered, 1);
}

/* A thread in the table that blocks the wall engine's signal until told, then takes what is pending. */
static void *rt_blocker(void *arg)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, *(int *)arg);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    int created;
    js_thread *t = js_threads_claim((int)syscall(SYS_gettid), &created);
    atomic_store(&rt_slot, t);
    atomic_store(&rt_ready, t ? 1 : -1);
    while (!atomic_load(&rt_go)) usleep(1000);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL); /* every queued signal is delivered here */
    if (t) js_threads_release(t);
    return NULL;
}

/* wall with a real-time signal (the one chosen when another profiler holds SIGPROF): a thread that blocks it gets one
 * signal pending, not one a tick (real-time signals queue, up to the limit of pending signals of all the user's
 * processes), and that one carries the weight of every tick it stood for. */
static void test_wall_one_signal_pending(void **state UNUSED)
{
    int signo = SIGRTMIN + 6;
    struct sigaction old;
    tu_install(signo, rt_handler, &old);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, rt_blocker, &signo), 0);
    while (!atomic_load(&rt_ready)) usleep(1000);
    assert_int_equal(atomic_load(&rt_ready), 1);
    char err[256];
    assert_int_equal(js_engine_wall.start(1000000, 0, signo, err, sizeof err), 0);
    usleep(300000); /* about 300 ticks of 1 ms */
    js_engine_wall.stop();
    uint64_t sent = js_engine_wall_signals();
    /* The engine's first look at the thread (its tick 2: it looks at up to 32 threads a tick, and this process has
     * fewer in the table) weighs 1, each later one the ticks since the one before. */
    uint64_t last_tick = atomic_load(&atomic_load(&rt_slot)->wall_tick);
    atomic_store(&rt_go, 1);
    pthread_join(th, NULL);
    sigaction(signo, &old, NULL);
    fprintf(stderr, "wall, real-time signal blocked for 300 ms of 1-ms ticks: %llu sent, %d delivered, weight %llu, "
            "last tick %llu\n", (unsigned long long)sent, atomic_load(&rt_delivered),
            (unsigned long long)atomic_load(&rt_weight), (unsigned long long)last_tick);
    assert_int_equal(atomic_load(&rt_delivered), 1);
    assert_true(sent == 1);
    assert_true(last_tick > 50);
    assert_int_equal(atomic_load(&rt_weight), last_tick - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_perf_weight),
        cmocka_unit_test(test_perf_jitter_run),
        cmocka_unit_test(test_perf_close_escaped),
        cmocka_unit_test(test_ctimer_weight),
        cmocka_unit_test(test_itimer_weight),
        cmocka_unit_test(test_jitter_distribution),
        cmocka_unit_test(test_ctimer_jitter_keeps_rate),
        cmocka_unit_test(test_ctimer_jitter_below_tick),
        cmocka_unit_test(test_ctimer_draws_once_per_run),
        cmocka_unit_test(test_wall_one_signal_pending),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_engines.c - each sampling engine's weight function (engine.h) on crafted signals: ours only when the kernel
 * raised it for the thread's own counter or timer, with the timer's overruns as weight; and the randomised periods
 * (jitter.h): mean kept, spread within +-50%. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/jitter.h"

#define UNUSED __attribute__((unused))

static siginfo_t sig(int signo, int code)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = signo;
    si.si_code = code;
    return si;
}

/* perf: the kernel's overflow signal (si_code > 0, POLL_IN) for the thread's own fd; nothing else. */
static void test_perf_weight(void **state UNUSED)
{
    siginfo_t si = sig(SIGPROF, POLL_IN);
    si.si_fd = 17;
    assert_int_equal(js_engine_perf.sample_weight(&si, 17), 1);
    assert_int_equal(js_engine_perf.sample_weight(&si, 18), 0); /* another thread's counter */
    assert_int_equal(js_engine_perf.sample_weight(&si, -1), 0); /* thread unknown or released */
    si = sig(SIGPROF, SI_USER);
    si.si_fd = 17;
    assert_int_equal(js_engine_perf.sample_weight(&si, 17), 0);
    si = sig(SIGPROF, SI_TKILL);
    assert_int_equal(js_engine_perf.sample_weight(&si, 17), 0);
}

/* ctimer: SI_TIMER for the thread's own timer weighs 1 + overruns (periods the tick folded into one signal). */
static void test_ctimer_weight(void **state UNUSED)
{
    siginfo_t si = sig(SIGPROF, SI_TIMER);
    si.si_timerid = 3;
    si.si_overrun = 0;
    assert_int_equal(js_engine_ctimer.sample_weight(&si, 3), 1);
    si.si_overrun = 4;
    assert_int_equal(js_engine_ctimer.sample_weight(&si, 3), 5);
    si.si_overrun = -2;
    assert_int_equal(js_engine_ctimer.sample_weight(&si, 3), 1);
    assert_int_equal(js_engine_ctimer.sample_weight(&si, 4), 0);
    assert_int_equal(js_engine_ctimer.sample_weight(&si, -1), 0);
    si = sig(SIGPROF, SI_USER);
    assert_int_equal(js_engine_ctimer.sample_weight(&si, 3), 0);
}

/* itimer: a kernel SIGPROF counts only while the engine's timer runs. */
static void test_itimer_weight(void **state UNUSED)
{
    siginfo_t si = sig(SIGPROF, SI_KERNEL);
    assert_int_equal(js_engine_itimer.sample_weight(&si, -1), 0); /* not started */
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPROF, &ign, &old);
    char err[256];
    assert_int_equal(js_engine_itimer.start(100000000LL, 0, SIGPROF, err, sizeof err), 0);
    assert_int_equal(js_engine_itimer.sample_weight(&si, -1), 1);
    siginfo_t user = sig(SIGPROF, SI_USER);
    assert_int_equal(js_engine_itimer.sample_weight(&user, -1), 0);
    js_engine_itimer.stop();
    assert_int_equal(js_engine_itimer.sample_weight(&si, -1), 0);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_perf_weight),
        cmocka_unit_test(test_ctimer_weight),
        cmocka_unit_test(test_itimer_weight),
        cmocka_unit_test(test_jitter_distribution),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

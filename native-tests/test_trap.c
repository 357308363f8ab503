/* test_trap.c - begin=/end= windows (trap.h): breakpoints on two functions of this program open and close the window
 * in which samples are kept; the functions still compute what they did, from one thread or several at once; windows
 * are recorded with their thread; nostop keeps every sample; disarming puts the code back; a SIGTRAP that is not
 * ours reaches the handler installed before. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sample/trap.h"

#define UNUSED __attribute__((unused))
#define THREADS 4
#define CALLS 20000

__attribute__((noinline)) int win_begin(int x)
{
    __asm__ volatile("");
    return x * 3 + 1;
}

__attribute__((noinline)) int win_end(int x)
{
    __asm__ volatile("");
    return x * 5 - 2;
}

static _Atomic int foreign;

static void foreign_handler(int sig)
{
    (void)sig;
    atomic_fetch_add(&foreign, 1);
}

/* Windows open at begin, close at end, recorded with this thread; code and results are as before disarming. */
static void test_window_opens_and_closes(void **state UNUSED)
{
    uint8_t code_b = *(volatile uint8_t *)(uintptr_t)win_begin, code_e = *(volatile uint8_t *)(uintptr_t)win_end;
    char err[256];
    assert_int_equal(js_trap_arm((uintptr_t)win_begin, (uintptr_t)win_end, 0, err, sizeof err), 0);
    assert_false(js_trap_keep());
    for (int i = 0; i < 100; i++) {
        assert_int_equal(win_begin(i), i * 3 + 1);
        assert_true(js_trap_keep());
        assert_int_equal(win_end(i), i * 5 - 2);
        assert_false(js_trap_keep());
    }
    js_trap_window w[128];
    int n = js_trap_take(w, 128);
    assert_int_equal(n, 100);
    for (int i = 0; i < n; i++) {
        assert_true(w[i].end_ns >= w[i].start_ns);
        assert_int_equal(w[i].tid, (int)syscall(SYS_gettid));
        if (i) assert_true(w[i].start_ns >= w[i - 1].end_ns);
    }
    assert_int_equal(js_trap_take(w, 128), 0);
    js_trap_disarm();
    assert_true(js_trap_keep());
    assert_int_equal(*(volatile uint8_t *)(uintptr_t)win_begin, code_b);
    assert_int_equal(*(volatile uint8_t *)(uintptr_t)win_end, code_e);
    assert_int_equal(win_begin(7), 22);
}

static void *caller(void *arg)
{
    long bad = 0;
    for (int i = 0; i < CALLS; i++) {
        if (win_begin(i) != i * 3 + 1) bad++;
        if (win_end(i) != i * 5 - 2) bad++;
    }
    return (void *)bad;
}

/* Threads calling both functions at once: every call returns its value; windows are recorded (some are lost to a
 * full buffer, none invented: at most one per call of end). */
static void test_threads_at_once(void **state UNUSED)
{
    char err[256];
    assert_int_equal(js_trap_arm((uintptr_t)win_begin, (uintptr_t)win_end, 0, err, sizeof err), 0);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, caller, NULL), 0);
    long bad = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (long)r;
    }
    assert_int_equal(bad, 0);
    js_trap_window w[JS_TRAP_WINDOWS];
    int n = js_trap_take(w, JS_TRAP_WINDOWS);
    assert_true(n > 0 && (uint64_t)n + js_trap_lost() <= (uint64_t)THREADS * CALLS);
    js_trap_disarm();
}

/* nostop: samples are kept outside windows too, which are still recorded. */
static void test_nostop(void **state UNUSED)
{
    char err[256];
    assert_int_equal(js_trap_arm((uintptr_t)win_begin, (uintptr_t)win_end, 1, err, sizeof err), 0);
    js_trap_window w[4];
    js_trap_take(w, 4);
    assert_true(js_trap_keep());
    win_begin(1);
    win_end(1);
    assert_true(js_trap_keep());
    assert_int_equal(js_trap_take(w, 4), 1);
    js_trap_disarm();
}

/* The same address twice is refused in async-profiler's words; a SIGTRAP of someone else's goes to their handler. */
static void test_refusal_and_foreign_traps(void **state UNUSED)
{
    char err[256];
    assert_int_equal(js_trap_arm((uintptr_t)win_begin, (uintptr_t)win_begin, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "begin and end symbols should not resolve to the same address"));
    raise(SIGTRAP); /* the handler before ours (installed by main) */
    assert_int_equal(atomic_load(&foreign), 1);
}

int main(void)
{
    signal(SIGTRAP, foreign_handler); /* before ours: js_trap_arm installs its handler over it and passes on */
    char err[256];
    if (js_trap_arm((uintptr_t)win_begin, (uintptr_t)win_end, 0, err, sizeof err) == 0) js_trap_disarm();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_opens_and_closes),
        cmocka_unit_test(test_threads_at_once),
        cmocka_unit_test(test_nostop),
        cmocka_unit_test(test_refusal_and_foreign_traps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

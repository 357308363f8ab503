/* test_trap.c - begin=/end= windows (trap.h): breakpoints on two functions of this program open and close the window
 * in which samples are kept; the functions still compute what they did, from one thread or several at once; windows
 * are recorded with their thread; nostop keeps every sample; disarming puts the code back; a SIGTRAP that is not
 * ours reaches the handler installed before. Hooks (tlab's): a hooked function's calls run the hook with its arguments
 * and return at once, from many threads; two hooks on one page and a window beside them are put back cleanly. A
 * debug trap at a guarded hardware breakpoint (a function event's) is absorbed and the function runs; unguarded, the
 * same trap ends the process. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sample/trap.h"

#include <ucontext.h>

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

__attribute__((noinline)) int hw_target(int x)
{
    __asm__ volatile("");
    return x + 7;
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

#define RACE_CYCLES 3000
static _Atomic int race_stop;

static void *race_caller(void *arg)
{
    long bad = 0;
    for (int i = 0; !atomic_load(&race_stop); i++) {
        if (win_begin(i) != i * 3 + 1) bad++;
        if (win_end(i) != i * 5 - 2) bad++;
    }
    return (void *)bad;
}

/* Arming and disarming (a session's stop, a loop= restart) while threads call both functions without pause: no trap
 * handler still at work writes the code once disarm has closed its page (a SIGSEGV in the handler, the JVM's end), or
 * leaves a breakpoint behind; after each disarm both functions start with their own bytes, and every call returns its
 * value. In a child, so that a crash fails this test and not the suite. */
static void test_disarm_while_trapping(void **state UNUSED)
{
    pid_t pid = fork();
    if (pid == 0) {
        uint8_t code_b = *(volatile uint8_t *)(uintptr_t)win_begin, code_e = *(volatile uint8_t *)(uintptr_t)win_end;
        pthread_t t[THREADS];
        for (int i = 0; i < THREADS; i++)
            if (pthread_create(&t[i], NULL, race_caller, NULL) != 0) _exit(10);
        char err[256];
        int left = 0;
        for (int c = 0; c < RACE_CYCLES; c++) {
            if (js_trap_arm((uintptr_t)win_begin, (uintptr_t)win_end, c & 1, err, sizeof err) != 0) _exit(11);
            for (volatile int k = 0; k < 2000 + (c % 7) * 500; k++) {
            }
            js_trap_disarm();
            if (*(volatile uint8_t *)(uintptr_t)win_begin != code_b || *(volatile uint8_t *)(uintptr_t)win_end != code_e)
                left++;
        }
        atomic_store(&race_stop, 1);
        long bad = 0;
        for (int i = 0; i < THREADS; i++) {
            void *r;
            pthread_join(t[i], &r);
            bad += (long)r;
        }
        _exit(left ? 12 : bad ? 13 : 0);
    }
    int st = 0, waited = 0;
    while (waitpid(pid, &st, WNOHANG) == 0 && waited++ < 600) /* a minute at most: threads caught in traps spin */
        usleep(100000);
    if (waited > 600) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        fprintf(stderr, "child: still running after a minute (threads looping in traps)\n");
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fprintf(stderr, "child: %s %d\n", WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
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

static int hooked_calls_body;

__attribute__((noipa, aligned(16))) void hooked_a(int *out, long v)
{
    __asm__ volatile("");
    *out = (int)v;
    hooked_calls_body++;
}

__attribute__((noipa, aligned(16))) void hooked_b(int *out, long v)
{
    __asm__ volatile("");
    *out = (int)(v * 2);
    hooked_calls_body++;
}

static _Atomic long hook_sum, hook_calls[JS_TRAP_HOOKS];
static _Atomic uintptr_t hook_pc_seen;

static void hook_fn(void *ucv, int which)
{
    const greg_t *g = ((const ucontext_t *)ucv)->uc_mcontext.gregs;
    atomic_fetch_add(&hook_sum, (long)g[REG_RSI]); /* the second argument, as at the call */
    atomic_fetch_add(&hook_calls[which], 1);
    atomic_store(&hook_pc_seen, (uintptr_t)g[REG_RIP]);
}

static void *hook_thread(void *arg)
{
    int v = 0;
    for (int i = 0; i < CALLS; i++) (i & 1 ? hooked_b : hooked_a)(&v, 1);
    return arg;
}

/* A hooked call runs the hook with its arguments and returns without running the body (the pc the hook sees is
 * the caller's); unhooked, the bodies run again and the code bytes are as before. */
static void test_hooks_take_calls_over(void **state UNUSED)
{
    uint8_t a0 = *(volatile uint8_t *)(uintptr_t)hooked_a, b0 = *(volatile uint8_t *)(uintptr_t)hooked_b;
    const uintptr_t at[2] = {(uintptr_t)hooked_a, (uintptr_t)hooked_b};
    char err[256];
    int v = -1;
    hooked_calls_body = 0;
    assert_int_equal(js_trap_hook(at, 2, hook_fn, err, sizeof err), 0);
    assert_int_equal(js_trap_hook(at, 2, hook_fn, err, sizeof err), -1); /* one set at a time */
    hooked_a(&v, 7);
    hooked_b(&v, 5);
    assert_int_equal(v, -1);
    assert_int_equal(hooked_calls_body, 0);
    assert_int_equal(atomic_load(&hook_sum), 12);
    assert_int_equal(atomic_load(&hook_calls[0]), 1);
    assert_int_equal(atomic_load(&hook_calls[1]), 1);
    uintptr_t seen = atomic_load(&hook_pc_seen);
    assert_true(seen < at[0] || seen > at[1] + 64); /* not inside the hooked functions: the caller's */
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&th[i], NULL, hook_thread, NULL), 0);
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&hook_calls[0]) + atomic_load(&hook_calls[1]), 2 + (long)THREADS * CALLS);
    assert_int_equal(hooked_calls_body, 0);
    js_trap_unhook();
    assert_int_equal(*(volatile uint8_t *)(uintptr_t)hooked_a, a0);
    assert_int_equal(*(volatile uint8_t *)(uintptr_t)hooked_b, b0);
    hooked_a(&v, 3);
    assert_int_equal(v, 3);
    hooked_b(&v, 3);
    assert_int_equal(v, 6);
    assert_int_equal(hooked_calls_body, 2);
}

/* Hooks and a begin/end window side by side, then each put back: the other's bytes are still writable while armed
 * (no fault), and everything runs as before. */
static void test_hooks_beside_a_window(void **state UNUSED)
{
    const uintptr_t at[2] = {(uintptr_t)hooked_a, (uintptr_t)hooked_b};
    char err[256];
    int v = 0;
    assert_int_equal(js_trap_hook(at, 2, hook_fn, err, sizeof err), 0);
    assert_int_equal(js_trap_arm((uintptr_t)win_begin, (uintptr_t)win_end, 0, err, sizeof err), 0);
    js_trap_unhook();
    assert_int_equal(win_begin(2), 7);
    assert_true(js_trap_keep());
    assert_int_equal(win_end(2), 8);
    js_trap_disarm();
    hooked_a(&v, 9);
    assert_int_equal(v, 9);
    assert_int_equal(js_trap_hook(at, 2, hook_fn, err, sizeof err), 0);
    assert_int_equal(js_trap_arm((uintptr_t)win_begin, (uintptr_t)win_end, 0, err, sizeof err), 0);
    js_trap_disarm();
    long before = atomic_load(&hook_calls[0]);
    hooked_a(&v, 1);
    assert_int_equal(v, 9);
    assert_int_equal(atomic_load(&hook_calls[0]), before + 1);
    js_trap_unhook();
    js_trap_window w[8];
    js_trap_take(w, 8);
    /* refused: a window's function as a hook and the other way round, and a function that already starts with a
     * breakpoint (another agent's: its saved byte would be 0xcc, and every call would trap again for good) */
    assert_int_equal(js_trap_arm((uintptr_t)win_begin, (uintptr_t)win_end, 0, err, sizeof err), 0);
    const uintptr_t win[2] = {(uintptr_t)win_begin, (uintptr_t)hooked_b};
    assert_int_equal(js_trap_hook(win, 2, hook_fn, err, sizeof err), -1);
    js_trap_disarm();
    assert_int_equal(js_trap_hook(at, 2, hook_fn, err, sizeof err), 0);
    assert_int_equal(js_trap_arm((uintptr_t)hooked_a, (uintptr_t)win_end, 0, err, sizeof err), -1);
    js_trap_unhook();
    /* one hook after a session of two: the unhook puts back only its own byte (the other's page is closed) */
    const uintptr_t one[1] = {(uintptr_t)hooked_a};
    assert_int_equal(js_trap_hook(one, 1, hook_fn, err, sizeof err), 0);
    js_trap_unhook();
    hooked_a(&v, 4);
    assert_int_equal(v, 4);
    hooked_b(&v, 4);
    assert_int_equal(v, 8);
}

#define HW_CALLS 100
#define HW_UNSUPPORTED 77
#define EFLAGS_RF 0x10000
#ifndef TRAP_PERF
#define TRAP_PERF 6 /* the kernel's si_code of a perf event's sigtrap (asm-generic/siginfo.h); older libcs lack it */
#endif

static struct sigaction guard_sa; /* the guard's SIGTRAP handler, called by as_stray */

/* The perf breakpoint's SIGTRAP made to look as a stray debug trap does: the kernel reports it as TRAP_PERF with the
 * resume flag already set; a trap the kernel cannot match comes as TRAP_HWBKPT (or TRAP_BRKPT) with the flag clear.
 * So clear it, relabel, and hand over to the guard's handler, which must set the flag (else the call would trap
 * again for ever: exit 14 at once instead). */
static void as_stray(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    if (si->si_code != TRAP_PERF) _exit(15);
    uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)EFLAGS_RF;
    si->si_code = TRAP_HWBKPT;
    guard_sa.sa_sigaction(sig, si, ucv);
    if (!(uc->uc_mcontext.gregs[REG_EFL] & EFLAGS_RF)) _exit(14);
}

/* In a child: a perf execute breakpoint on hw_target that raises SIGTRAP on every call (attr.sigtrap, the kernel's
 * own way to put a debug trap at that address into the process, as a stray one arrives), guarded or not; HW_CALLS
 * calls. The child's wait status: exit 0 if every call ran and (guarded) every trap was absorbed. */
static int calls_under_trapping_breakpoint(int guard)
{
    pid_t pid = fork();
    if (pid == 0) {
        char err[128];
        if (!guard) signal(SIGTRAP, SIG_DFL); /* as in a JVM: no handler (this process has ours from the tests above) */
        if (guard && js_trap_guard_hw((uintptr_t)hw_target, err, sizeof err) != 0) _exit(10);
        if (guard) { /* the guard's handler is in place; as_stray goes in front of it */
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_sigaction = as_stray;
            sa.sa_flags = SA_SIGINFO;
            if (sigaction(SIGTRAP, &sa, &guard_sa) != 0 || !(guard_sa.sa_flags & SA_SIGINFO)) _exit(11);
        }
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = PERF_TYPE_BREAKPOINT;
        a.bp_type = HW_BREAKPOINT_X;
        a.bp_addr = (uintptr_t)hw_target;
        a.bp_len = sizeof(long);
        a.sample_period = 1;
        a.sigtrap = 1;
        a.remove_on_exec = 1;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) _exit(HW_UNSUPPORTED);
        volatile int sum = 0;
        for (int i = 0; i < HW_CALLS; i++) sum += hw_target(i);
        close((int)fd);
        if (sum != HW_CALLS * 7 + HW_CALLS * (HW_CALLS - 1) / 2) _exit(12);
        if (guard && js_trap_hw_strays() != HW_CALLS) _exit(13);
        _exit(0);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return st;
}

/* A guarded function's debug traps are absorbed, one per call, and the function runs each time; without the guard
 * the first one ends the process by SIGTRAP (what a JVM running a function event would suffer). A SIGTRAP at the
 * guarded address that is no debug exception (a kill, another tool's perf signal) is passed on, not absorbed. */
static void test_hw_breakpoint_traps_absorbed(void **state UNUSED)
{
    int bare = calls_under_trapping_breakpoint(0);
    if (WIFEXITED(bare) && WEXITSTATUS(bare) == HW_UNSUPPORTED) {
        fprintf(stderr, "skipped: perf_event_open refuses an execute breakpoint with sigtrap here\n");
        skip();
    }
    assert_true(WIFSIGNALED(bare));
    assert_int_equal(WTERMSIG(bare), SIGTRAP);
    int guarded = calls_under_trapping_breakpoint(1);
    assert_true(WIFEXITED(guarded));
    assert_int_equal(WEXITSTATUS(guarded), 0);

    char err[128];
    assert_int_equal(js_trap_guard_hw((uintptr_t)hw_target, err, sizeof err), 0);
    struct sigaction mine;
    assert_int_equal(sigaction(SIGTRAP, NULL, &mine), 0);
    assert_true(mine.sa_flags & SA_SIGINFO);
    ucontext_t uc;
    assert_int_equal(getcontext(&uc), 0);
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)hw_target;
    uc.uc_mcontext.gregs[REG_EFL] &= ~(greg_t)EFLAGS_RF;
    int codes[] = {SI_TKILL, SI_USER, TRAP_PERF, TRAP_TRACE};
    uint64_t strays = js_trap_hw_strays();
    int before = atomic_load(&foreign);
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        si.si_signo = SIGTRAP;
        si.si_code = codes[i];
        mine.sa_sigaction(SIGTRAP, &si, &uc);
    }
    assert_int_equal(atomic_load(&foreign) - before, 4); /* each reached the handler installed before ours */
    assert_true(js_trap_hw_strays() == strays);
    assert_false(uc.uc_mcontext.gregs[REG_EFL] & EFLAGS_RF);
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
        cmocka_unit_test(test_disarm_while_trapping),
        cmocka_unit_test(test_refusal_and_foreign_traps),
        cmocka_unit_test(test_hooks_take_calls_over),
        cmocka_unit_test(test_hooks_beside_a_window),
        cmocka_unit_test(test_hw_breakpoint_traps_absorbed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* sigbench.c - the cost of a bare SIGPROF round trip on this machine, for comparison with the agent's handler.
 *
 *   sigbench timer  [seconds=3] [interval_us=1000]   CPU-clock timer (timer_create on the thread's CPU clock,
 *                                                      SIGEV_THREAD_ID) signals a thread that burns CPU
 *   sigbench tgkill [seconds=3]                       the thread signals itself with tgkill in a loop
 *
 * The handler is empty apart from bumping a counter (and, in timer mode, noting the time). In timer mode the
 * burning thread reads CLOCK_MONOTONIC in a tight loop; an iteration whose gap contains the handler's time stamp
 * took (loop cost + interrupt + signal delivery + handler + sigreturn): that gap minus the median plain iteration
 * is one round trip as the interrupted thread sees it.
 * Interruptions without a signal (the kernel tick, other interrupts) are reported separately. In tgkill mode one
 * round trip is the time around the tgkill() call (syscall, delivery on the way out, handler, sigreturn); an
 * empty syscall is timed the same way for reference.
 *
 * Output: one line, key=value, times in ns, e.g.
 *   SIGBENCH mode=timer n=750 median_ns=1830 p10_ns=1500 p90_ns=2900 loop_ns=24 tick_median_ns=900 tick_n=12
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t hits;
static volatile uint64_t stamp; /* CLOCK_MONOTONIC at the last handler entry (timer mode) */
static int stamping;

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void on_signal(int signo, siginfo_t *si, void *uc)
{
    (void)signo, (void)si, (void)uc;
    if (stamping) stamp = now_ns();
    hits++;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorts v and returns its q-quantile (0..1); 0 when empty. */
static uint64_t quantile(uint64_t *v, size_t n, double q)
{
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_u64);
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i];
}

static void die(const char *what)
{
    fprintf(stderr, "sigbench: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int run_timer(double seconds, long interval_us)
{
    size_t cap = (size_t)(seconds * 1e6 / (double)interval_us) * 4 + 1024;
    uint64_t *sig = calloc(cap, sizeof *sig), *other = calloc(cap, sizeof *other);
    enum { LOOP_SAMPLES = 1 << 16 };
    uint64_t *loop = calloc(LOOP_SAMPLES, sizeof *loop);
    if (!sig || !other || !loop) die("calloc");

    stamping = 1;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    timer_t timer;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) != 0) die("timer_create");
    struct itimerspec its = {{interval_us / 1000000, (interval_us % 1000000) * 1000},
                             {interval_us / 1000000, (interval_us % 1000000) * 1000}};
    if (timer_settime(timer, 0, &its, NULL) != 0) die("timer_settime");

    size_t ns = 0, no = 0, nl = 0;
    uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
    uint64_t prev = now_ns(), counted = 0;
    for (;;) {
        uint64_t t = now_ns();
        uint64_t s = stamp; /* read after t: a handler that ran after t belongs to the next gap */
        uint64_t gap = t - prev;
        int in_gap = s != counted && s > prev && s <= t;
        prev = t;
        if (in_gap) {
            counted = s;
            if (ns < cap) sig[ns++] = gap;
        } else if (gap > 300) {
            if (no < cap) other[no++] = gap;
        } else if (nl < LOOP_SAMPLES) {
            loop[nl++] = gap;
        }
        if (t >= end) break;
    }
    timer_delete(timer);
    uint64_t loop_ns = quantile(loop, nl, 0.5);
    for (size_t i = 0; i < ns; i++) sig[i] = sig[i] > loop_ns ? sig[i] - loop_ns : 0;
    printf("SIGBENCH mode=timer interval_us=%ld n=%zu median_ns=%llu p10_ns=%llu p90_ns=%llu loop_ns=%llu"
           " tick_median_ns=%llu tick_n=%zu\n",
           interval_us, ns, (unsigned long long)quantile(sig, ns, 0.5), (unsigned long long)quantile(sig, ns, 0.1),
           (unsigned long long)quantile(sig, ns, 0.9), (unsigned long long)loop_ns,
           (unsigned long long)quantile(other, no, 0.5), no);
    return ns > 0 ? 0 : 1;
}

static int run_tgkill(double seconds)
{
    enum { CAP = 1 << 20 };
    uint64_t *rt = calloc(CAP, sizeof *rt), *sc = calloc(CAP, sizeof *sc);
    if (!rt || !sc) die("calloc");
    pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
    size_t n = 0, m = 0;
    uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
    while (n < CAP && m < CAP) {
        uint64_t t0 = now_ns();
        syscall(SYS_tgkill, pid, tid, SIGPROF);
        uint64_t t1 = now_ns();
        syscall(SYS_getppid);
        uint64_t t2 = now_ns();
        rt[n++] = t1 - t0;
        sc[m++] = t2 - t1;
        if (t2 >= end) break;
    }
    if ((size_t)hits != n) fprintf(stderr, "sigbench: %zu signals sent, %d handled\n", n, (int)hits);
    printf("SIGBENCH mode=tgkill n=%zu median_ns=%llu p10_ns=%llu p90_ns=%llu syscall_median_ns=%llu\n", n,
           (unsigned long long)quantile(rt, n, 0.5), (unsigned long long)quantile(rt, n, 0.1),
           (unsigned long long)quantile(rt, n, 0.9), (unsigned long long)quantile(sc, m, 0.5));
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "timer";
    double seconds = argc > 2 ? atof(argv[2]) : 3.0;
    long interval_us = argc > 3 ? atol(argv[3]) : 1000;
    if (seconds <= 0 || interval_us <= 0) {
        fprintf(stderr, "usage: sigbench timer|tgkill [seconds] [interval_us]\n");
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPROF, &sa, NULL) != 0) die("sigaction");
    if (strcmp(mode, "timer") == 0) return run_timer(seconds, interval_us);
    if (strcmp(mode, "tgkill") == 0) return run_tgkill(seconds);
    fprintf(stderr, "sigbench: unknown mode %s (timer or tgkill)\n", mode);
    return 2;
}

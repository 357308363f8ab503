/* test_threads.c - the thread table (sample/threads.h) and the thread names (core/thread_names.h):
 * deletions do not degrade lookups, reused tids get new serials, lookups from signal handlers stay
 * correct while two threads claim and release; names by serial, bounded, oldest ended evicted.
 * Builds with -fsanitize=thread too:
 *   gcc -std=gnu11 -D_GNU_SOURCE -g -O1 -fsanitize=thread -Iinclude -I$JAVA_HOME/include \
 *       -I$JAVA_HOME/include/linux native-tests/test_threads.c src/sample/threads.c src/sample/budget.c \
 *       src/sample/schedcount.c src/sample/safe_fmt.c src/core/thread_names.c -o /tmp/test_threads_tsan \
 *       -lpthread -lrt -lcmocka && /tmp/test_threads_tsan
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/thread_names.h"
#include "sample/schedcount.h"
#include "sample/threads.h"
#include <sys/syscall.h>
#include <unistd.h>

#define UNUSED __attribute__((unused))

/* xorshift64*: deterministic pseudo-random numbers. */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

enum { LIVE = 64, CREATIONS = 25000, MAX_MISS_PROBES = 8 };

/* Index of tid in live[0..n), or -1. */
static int live_index(const int *live, int n, int tid)
{
    for (int i = 0; i < n; i++)
        if (live[i] == tid) return i;
    return -1;
}

/* 25,000 creations with 64 live threads and random tids (some reused): every lookup right, every
 * registration a new serial, and a miss still probes only a few slots at the end. */
static void test_churn_keeps_misses_short(void **state UNUSED)
{
    js_threads_reset();
    uint64_t seed = 0x1234567;
    int live[LIVE];
    uint32_t serial[LIVE];
    int nlive = 0, recent = 0;
    uint32_t last_serial = 0;
    for (int c = 0; c < CREATIONS; c++) {
        int tid;
        /* One creation in 8 reuses the tid released last (the kernel reuses tids too). */
        if (c % 8 == 7 && recent && live_index(live, nlive, recent) < 0) tid = recent;
        else
            do tid = 1 + (int)(rnd(&seed) % 4000000); while (live_index(live, nlive, tid) >= 0);
        int created = 0;
        js_thread *t = js_threads_claim(tid, &created);
        assert_non_null(t);
        assert_int_equal(created, 1);
        uint32_t s = atomic_load(&t->serial);
        assert_true(s > last_serial); /* never seen before, also for a reused tid */
        last_serial = s;
        assert_ptr_equal(js_threads_find(tid), t);
        if (nlive == LIVE) {
            int k = (int)(rnd(&seed) % LIVE);
            js_thread *old = js_threads_find(live[k]);
            assert_non_null(old);
            assert_int_equal(atomic_load(&old->serial), serial[k]);
            js_threads_release(old);
            assert_null(js_threads_find(live[k]));
            recent = live[k];
            live[k] = tid;
            serial[k] = s;
        } else {
            live[nlive] = tid;
            serial[nlive++] = s;
        }
        if (c % 997 == 0)
            for (int i = 0; i < nlive; i++) {
                js_thread *x = js_threads_find(live[i]);
                assert_non_null(x);
                assert_int_equal(atomic_load(&x->serial), serial[i]);
            }
    }
    long total = 0;
    int worst = 0;
    for (int i = 0; i < 2000; i++) {
        int tid = 4000001 + (int)(rnd(&seed) % 1000000);
        assert_null(js_threads_find(tid));
        int p = js_threads_probe_len(tid);
        total += p;
        if (p > worst) worst = p;
    }
    print_message("after %d creations (%d live): a miss probes %.2f slots on average, %d at most\n", CREATIONS,
                  LIVE, (double)total / 2000, worst);
    assert_true(worst <= MAX_MISS_PROBES);
    assert_true(total <= 2000L * 3 / 2); /* 64 live threads in 16,384 slots: clusters of one or two */
}

/* ---- concurrency: two writers claim and release around stable threads, handlers look them up ---- */
enum { STABLE = 8, WRITERS = 2, PER_WRITER = 24, ITERS = 150000, MIN_SIGNAL_FINDS = 2000 };
static int g_stable_tid[STABLE];
static uint32_t g_stable_serial[STABLE];
static _Atomic uint64_t g_sig_finds, g_sig_bad, g_writer_bad;

/* A tid with the same home slot as stable tid k (tids equal modulo the table size share one). */
static int colliding(int k, int m)
{
    return g_stable_tid[k] + m * JS_THREADS_MAX;
}

/* Handler: every stable thread found with its serial; a never-registered tid not found. Signal-safe. */
static void on_signal(int sig)
{
    for (int k = 0; k < STABLE; k++) {
        js_thread *t = js_threads_find(g_stable_tid[k]);
        if (!t || atomic_load_explicit(&t->serial, memory_order_relaxed) != g_stable_serial[k])
            atomic_fetch_add(&g_sig_bad, 1);
    }
    if (js_threads_find(colliding(0, 1000))) atomic_fetch_add(&g_sig_bad, 1);
    atomic_fetch_add(&g_sig_finds, 1);
}

/* Writer w churns tids colliding with the stable ones (its own residues of m, so writers never share a tid). */
static void *writer(void *arg)
{
    int w = (int)(intptr_t)arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    uint64_t seed = 0x9E3779B97F4A7C15ULL * (uint64_t)(w + 1);
    int tids[PER_WRITER] = {0};
    uint32_t serials[PER_WRITER] = {0};
    for (int i = 0; i < ITERS || (atomic_load(&g_sig_finds) < MIN_SIGNAL_FINDS && i < 50 * ITERS); i++) {
        int j = (int)(rnd(&seed) % PER_WRITER);
        if (tids[j]) {
            js_thread *t = js_threads_find(tids[j]);
            if (!t || atomic_load(&t->serial) != serials[j]) atomic_fetch_add(&g_writer_bad, 1);
            else js_threads_release(t);
            tids[j] = 0;
        } else {
            int tid = colliding((int)(rnd(&seed) % STABLE), 2 + w + WRITERS * (int)(rnd(&seed) % 20));
            int created = 0;
            int dup = 0;
            for (int q = 0; q < PER_WRITER; q++) dup |= tids[q] == tid;
            if (dup) continue;
            js_thread *t = js_threads_claim(tid, &created);
            if (!t || !created) {
                atomic_fetch_add(&g_writer_bad, 1);
                continue;
            }
            tids[j] = tid;
            serials[j] = atomic_load(&t->serial);
        }
    }
    for (int j = 0; j < PER_WRITER; j++)
        if (tids[j]) js_threads_release(js_threads_find(tids[j]));
    return NULL;
}

static void test_concurrent_claims_and_signal_finds(void **state UNUSED)
{
    js_threads_reset();
    /* Each stable thread sits behind a deleted slot at its home: lookups must step over it while
     * writers reuse that slot and append and delete behind the stable thread. */
    for (int k = 0; k < STABLE; k++) {
        g_stable_tid[k] = 100 + 37 * k;
        int created;
        js_thread *filler = js_threads_claim(colliding(k, 1), &created);
        js_thread *t = js_threads_claim(g_stable_tid[k], &created);
        assert_non_null(filler);
        assert_non_null(t);
        g_stable_serial[k] = atomic_load(&t->serial);
        js_threads_release(filler);
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* only the writers take the signal */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = SIGALRM;
    timer_t timer;
    assert_int_equal(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
    struct itimerspec its = {.it_interval = {0, 20000}, .it_value = {0, 20000}}; /* 50 kHz */
    assert_int_equal(timer_settime(timer, 0, &its, NULL), 0);
    pthread_t th[WRITERS];
    for (int w = 0; w < WRITERS; w++) assert_int_equal(pthread_create(&th[w], NULL, writer, (void *)(intptr_t)w), 0);
    for (int w = 0; w < WRITERS; w++) pthread_join(th[w], NULL);
    timer_delete(timer);
    signal(SIGALRM, SIG_IGN);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    signal(SIGALRM, SIG_DFL);
    print_message("%llu lookups from signal handlers during %d x %d claims/releases\n",
                  (unsigned long long)atomic_load(&g_sig_finds), WRITERS, ITERS);
    assert_int_equal(atomic_load(&g_sig_bad), 0);
    assert_int_equal(atomic_load(&g_writer_bad), 0);
    assert_true(atomic_load(&g_sig_finds) >= MIN_SIGNAL_FINDS);
    for (int k = 0; k < STABLE; k++) {
        js_thread *t = js_threads_find(g_stable_tid[k]);
        assert_non_null(t);
        js_threads_release(t);
    }
    /* Everything released: the table is empty again, so every lookup stops at once. */
    for (int k = 0; k < STABLE; k++) assert_int_equal(js_threads_probe_len(g_stable_tid[k]), 1);
}

/* ---- thread names ---- */

/* Names by serial: set, overwrite, java id, labels, unknown serials. */
static void test_names_by_serial(void **state UNUSED)
{
    js_threads_clear_names();
    for (uint32_t s = 1; s <= 5000; s++) {
        char n[32];
        snprintf(n, sizeof n, "t%u", s);
        js_threads_set_name(s * 3, (int)s, n);
    }
    js_threads_set_name(30, 10, "renamed");
    js_threads_set_java_id(30, 77);
    char name[64], label[128];
    int tid = 0;
    int64_t jtid = -1;
    assert_int_equal(js_threads_info(30, name, sizeof name, &tid, &jtid), 0);
    assert_string_equal(name, "renamed");
    assert_int_equal(tid, 10);
    assert_int_equal(jtid, 77);
    assert_int_equal(js_threads_info(4999 * 3, name, sizeof name, &tid, &jtid), 0);
    assert_string_equal(name, "t4999");
    assert_int_equal(jtid, 0);
    assert_int_equal(js_threads_info(31, name, sizeof name, &tid, &jtid), -1);
    js_threads_label(33, label, sizeof label);
    assert_string_equal(label, "[t11 tid=11]");
    js_threads_set_name(9000000, 42, "");
    js_threads_label(9000000, label, sizeof label);
    assert_string_equal(label, "[tid=42]");
    js_threads_label(31, label, sizeof label);
    assert_string_equal(label, "[unknown thread]");
    assert_int_equal(js_threads_names_count(), 5001);
    js_threads_clear_names();
    assert_int_equal(js_threads_names_count(), 0);
}

/* Past the bound, the oldest names of ended threads go; live threads' names stay, however old. */
static void test_names_bounded_oldest_ended_first(void **state UNUSED)
{
    js_threads_reset();
    js_threads_clear_names();
    enum { NLIVE = 10, EXTRA = 5000 };
    uint32_t live[NLIVE];
    for (int i = 0; i < NLIVE; i++) {
        int created;
        js_thread *t = js_threads_claim(500000 + i, &created);
        assert_non_null(t);
        live[i] = atomic_load(&t->serial);
        js_threads_set_name(live[i], 500000 + i, "live");
    }
    uint32_t first_ended = 0, last_ended = 0;
    for (int i = 0; i < JS_THREAD_NAMES_MAX + EXTRA; i++) {
        int created, tid = 1000 + i % 3000;
        js_thread *t = js_threads_claim(tid, &created);
        assert_non_null(t);
        uint32_t s = atomic_load(&t->serial);
        js_threads_set_name(s, tid, "ended");
        js_threads_release(t);
        if (!first_ended) first_ended = s;
        last_ended = s;
    }
    char name[64];
    int tid;
    int64_t jtid;
    assert_int_equal(js_threads_names_count(), JS_THREAD_NAMES_MAX);
    for (int i = 0; i < NLIVE; i++) assert_int_equal(js_threads_info(live[i], name, sizeof name, &tid, &jtid), 0);
    assert_int_equal(js_threads_info(first_ended, name, sizeof name, &tid, &jtid), -1);
    assert_int_equal(js_threads_info(first_ended + EXTRA + NLIVE - 1, name, sizeof name, &tid, &jtid), -1);
    assert_int_equal(js_threads_info(first_ended + EXTRA + NLIVE, name, sizeof name, &tid, &jtid), 0);
    assert_int_equal(js_threads_info(last_ended, name, sizeof name, &tid, &jtid), 0);
    assert_string_equal(name, "ended");
    js_threads_clear_names();
    js_threads_reset();
}

/* The switch-in count: read for the calling thread and by tid, the same while the thread does not sleep; it grows
 * by at least one across a sleep; an unknown tid reads 0. */
static void test_switch_ins(void **state)
{
    int tid = (int)syscall(SYS_gettid);
    uint64_t a = js_sched_switch_ins(0);
    if (a == 0) skip(); /* a kernel without schedstat */
    uint64_t b = js_sched_switch_ins(tid);
    assert_true(b >= a && b <= a + 1); /* at most one preemption in between */
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    uint64_t c = js_sched_switch_ins(0);
    assert_true(c >= b + 1);
    assert_int_equal(js_sched_switch_ins(0x7ffffff0), 0);
}

/* Renames by Java id rename exactly the entries recorded with those ids; a rename by tid renames the entry of the
 * thread that holds the tid now, and not one whose tid was reused by a later thread. */
static void test_names_renamed(void **state UNUSED)
{
    js_threads_reset();
    js_threads_clear_names();
    uint32_t serial[4];
    for (int i = 0; i < 4; i++) {
        int created;
        js_thread *t = js_threads_claim(700 + i, &created);
        assert_non_null(t);
        serial[i] = atomic_load(&t->serial);
        char n[32];
        snprintf(n, sizeof n, "first-%d", i);
        js_threads_set_name(serial[i], 700 + i, n);
        if (i < 3) js_threads_set_java_id(serial[i], 100 + i); /* the last one: not a Java thread */
    }
    int64_t ids[] = {102, 999, 100, 101};
    const char names[][JS_THREAD_NAME_MAX] = {"renamed-102", "nobody", "renamed-100", "first-1"};
    unsigned char matched[4];
    assert_int_equal(js_threads_rename_java(ids, names, 4, matched), 2); /* 101 keeps its name: not a change */
    assert_int_equal(matched[0] + 2 * matched[1] + 4 * matched[2] + 8 * matched[3], 1 + 4 + 8);
    char name[64];
    int tid;
    int64_t jtid;
    const char *want[] = {"renamed-100", "first-1", "renamed-102", "first-3"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(js_threads_info(serial[i], name, sizeof name, &tid, &jtid), 0);
        assert_string_equal(name, want[i]);
    }
    js_threads_rename_tid(703, "last-name");
    assert_int_equal(js_threads_info(serial[3], name, sizeof name, &tid, &jtid), 0);
    assert_string_equal(name, "last-name");
    js_thread *t = js_threads_find(701);
    js_threads_release(t); /* tid 701 ends and is reused by a new thread */
    int created;
    t = js_threads_claim(701, &created);
    assert_true(created);
    js_threads_rename_tid(701, "the-new-thread");
    assert_int_equal(js_threads_info(serial[1], name, sizeof name, &tid, &jtid), 0);
    assert_string_equal(name, "first-1");
    js_threads_clear_names();
    js_threads_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_churn_keeps_misses_short),
        cmocka_unit_test(test_concurrent_claims_and_signal_finds),
        cmocka_unit_test(test_names_by_serial),
        cmocka_unit_test(test_names_bounded_oldest_ended_first),
        cmocka_unit_test(test_switch_ins),
        cmocka_unit_test(test_names_renamed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

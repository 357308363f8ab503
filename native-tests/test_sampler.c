/* test_sampler.c - the signal handler (sampler.h) driven by real signals with a fake engine weight and a fake
 * walker: exact counts, disarm waiting for a handler that is inside (and giving up after 1 s), the store swap,
 * streamed events and their generation tags, and signals that are not ours passed to the previous handler. */
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sample/evring.h"
#include "sample/budget.h"
#include "sample/sampler.h"
#include "sample/stats.h"
#include "sample/store.h"
#include "sample/threads.h"

#define UNUSED __attribute__((unused))
#define OURS 42

static int g_signo;
static _Atomic int g_block;    /* walks spin while set */
static _Atomic int g_in_walk;  /* a walk is spinning */

/* Walks of one thread held on their own: slot i holds the walks of thread g_hold[i] while that is set. */
#define HOLDS 2
static _Atomic int g_hold[HOLDS];
static _Atomic int g_holding[HOLDS];              /* the thread's walk is held */
static js_raw_frame *_Atomic g_held_buf[HOLDS];   /* the frame buffer it holds */
static js_raw_frame *_Atomic g_last_buf;          /* the frame buffer of the latest walk */

static _Atomic long g_walk_sleep_us; /* each walk sleeps this long */
static _Atomic long g_walk_burn_us;  /* each walk uses this much CPU */

static uint64_t cpu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Use us microseconds of this thread's CPU time. */
static void burn_cpu_us(long us)
{
    uint64_t until = cpu_now_ns() + (uint64_t)us * 1000;
    while (cpu_now_ns() < until) {
    }
}

static int fake_init(void *vm, char *err, size_t errlen)
{
    return 0;
}

/* Two fixed frames; spins while g_block is set (a handler "inside"). */
static int fake_walk(void *uc, js_raw_frame *f, int max)
{
    atomic_store(&g_last_buf, f);
    int tid = (int)syscall(SYS_gettid);
    for (int i = 0; i < HOLDS; i++) {
        if (atomic_load(&g_hold[i]) != tid) continue;
        atomic_store(&g_held_buf[i], f);
        atomic_store(&g_holding[i], 1);
        while (atomic_load(&g_hold[i]) == tid) {
        }
        atomic_store(&g_holding[i], 0);
    }
    if (atomic_load(&g_walk_sleep_us)) { /* off the CPU inside the handler, as when preempted */
        struct timespec ts = {0, atomic_load(&g_walk_sleep_us) * 1000L};
        nanosleep(&ts, NULL);
    }
    if (atomic_load(&g_walk_burn_us)) burn_cpu_us(atomic_load(&g_walk_burn_us)); /* on the CPU: the walk's cost */
    if (atomic_load(&g_block)) {
        atomic_store(&g_in_walk, 1);
        while (atomic_load(&g_block)) {
        }
        atomic_store(&g_in_walk, 0);
    }
    f[0] = (js_raw_frame){.bci = 1, .kind = JS_RF_JAVA, .method = (const void *)0x1000};
    f[1] = (js_raw_frame){.bci = 2, .kind = JS_RF_JAVA, .method = (const void *)0x2000};
    return 2;
}

static const js_walker fake_walker = {"fake", fake_init, fake_walk};

static js_thread *_Atomic g_weighed; /* the thread slot the handler gave the last weight call */

/* Ours: queued with the marker value; anything else is foreign. */
static uint64_t fake_weight(const siginfo_t *si, js_thread *t)
{
    atomic_store(&g_weighed, t);
    return si->si_code == SI_QUEUE && si->si_value.sival_int == OURS ? 1 : 0;
}

static const js_signal_source fake_source = {fake_weight, JS_SK_EXEC, NULL};

static js_store *make_store(void)
{
    char err[256];
    js_store *s = js_store_create(1024, 1u << 16, 1024, err, sizeof err);
    assert_non_null(s);
    return s;
}

/* Send n signals with value v to thread t (delivered before pthread_sigqueue returns when t is the caller). */
static void send(pthread_t t, int n, int v)
{
    for (int i = 0; i < n; i++) {
        union sigval sv = {.sival_int = v};
        assert_int_equal(pthread_sigqueue(t, g_signo, sv), 0);
    }
}

/* This thread's slot in the thread table. */
static js_thread *me(void)
{
    int created;
    return js_threads_claim((int)syscall(SYS_gettid), &created);
}

/* A fresh handler budget for this thread (a test's held or spinning walks spent it). */
static void unthrottle(void)
{
    js_budget_reset(me());
}

/* Weight that reached store s from this thread: throttled samples included (they are stored as "[throttled]"). */
static uint64_t delivered(js_store *s)
{
    unthrottle();
    return js_store_total_weight(s);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int setup(void **state)
{
    char err[256];
    g_signo = js_sampler_install(0, err, sizeof err);
    if (g_signo < 0) return -1;
    int created;
    return js_threads_claim((int)syscall(SYS_gettid), &created) ? 0 : -1;
}

/* Every accepted signal is one sample of weight 1 on the walked stack; foreign ones are counted, not stored;
 * after disarm nothing is stored, and what arrives is counted as unarmed. */
static void test_counts_and_disarm(void **state UNUSED)
{
    js_store *s = make_store();
    char err[256];
    js_stats_reset();
    assert_int_equal(js_sampler_arm(&fake_source, 1, &fake_walker, s, NULL, 64, 1000000, err, sizeof err), 0);
    send(pthread_self(), 100, OURS);
    send(pthread_self(), 10, 7);
    js_stats_snapshot st;
    js_stats_get(&st);
    assert_int_equal(st.samples, 100);
    assert_int_equal(st.foreign, 10);
    assert_int_equal(js_store_trace_count(s), 1);
    { uint64_t got = delivered(s); assert_int_equal(got, 100); }
    /* what is stored stays as it is once disarmed */
    uint64_t stored = js_store_total_weight(s);
    assert_int_equal(js_sampler_disarm(), 0);
    send(pthread_self(), 20, OURS);
    assert_int_equal(js_store_total_weight(s), stored);
    js_stats_get(&st); /* counted as arriving while not sampling, for a stop line that says why nothing was kept */
    assert_int_equal(st.samples, 100);
    assert_int_equal(st.unarmed, 20);
    assert_int_equal(st.unsampled, 0);
    js_store_destroy(s);
}

/* Wall signals: ours when queued with OURS + 1, their weight waiting in the thread's slot (engine.h). */
static uint64_t fake_wall_weight(const siginfo_t *si, js_thread *t)
{
    return si->si_code == SI_QUEUE && si->si_value.sival_int == OURS + 1 ? 1 : 0;
}

static const js_signal_source fake_wall_source = {fake_wall_weight, JS_SK_WALL, NULL};

/* A wall signal whose weight an earlier one took is ours but takes no sample: counted as unsampled, so that a
 * session without samples can say where its signals went; one with its weight waiting is one sample of it. */
static void test_wall_signal_without_weight_is_counted(void **state UNUSED)
{
    js_store *s = make_store();
    char err[256];
    js_stats_reset();
    assert_int_equal(js_sampler_arm(&fake_wall_source, 1, &fake_walker, s, NULL, 64, 1000000, err, sizeof err), 0);
    atomic_store(&me()->wall_due, 0);
    send(pthread_self(), 5, OURS + 1);
    js_stats_snapshot st;
    js_stats_get(&st);
    assert_int_equal(st.samples, 0);
    assert_int_equal(st.unsampled, 5);
    assert_int_equal(st.foreign, 0);
    atomic_store(&me()->wall_due, 3);
    send(pthread_self(), 1, OURS + 1);
    js_stats_get(&st);
    assert_int_equal(st.samples, 1);
    assert_int_equal(st.weight, 3);
    assert_int_equal(st.unsampled, 5);
    assert_int_equal(js_sampler_disarm(), 0);
    js_store_destroy(s);
}

typedef struct {
    pthread_t target;
    int release_after_ms;
    uint64_t released_at;
} releaser;

/* The thread that gets blocked in a walk. */
static void *victim(void *arg)
{
    int created;
    js_threads_claim((int)syscall(SYS_gettid), &created);
    while (!atomic_load((_Atomic int *)arg)) { /* until told to end: signals arrive meanwhile */
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void *release_later(void *arg)
{
    releaser *r = arg;
    struct timespec ts = {r->release_after_ms / 1000, (r->release_after_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    r->released_at = now_ms();
    atomic_store(&g_block, 0);
    return NULL;
}

/* Disarm waits for a handler that is inside; past 1 s it gives up, says so, and the sampler still works after. */
static void test_disarm_waits_for_handler(void **state UNUSED)
{
    char err[256];
    for (int round = 0; round < 2; round++) {
        js_store *s = make_store();
        assert_int_equal(js_sampler_arm(&fake_source, 1, &fake_walker, s, NULL, 64, 1000000, err, sizeof err), 0);
        _Atomic int end = 0;
        pthread_t v;
        pthread_create(&v, NULL, victim, (void *)&end);
        atomic_store(&g_block, 1);
        send(v, 1, OURS);
        for (int i = 0; i < 2000 && !atomic_load(&g_in_walk); i++) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
        assert_true(atomic_load(&g_in_walk));
        releaser r = {v, round == 0 ? 50 : 1500, 0};
        pthread_t rel;
        pthread_create(&rel, NULL, release_later, &r);
        int left = js_sampler_disarm();
        uint64_t returned = now_ms();
        pthread_join(rel, NULL);
        if (round == 0) {
            assert_int_equal(left, 0);
            assert_true(returned >= r.released_at); /* it waited for the handler to leave */
        } else {
            assert_int_equal(left, 1);               /* gave up after 1 s, while the handler was still inside */
            assert_true(returned < r.released_at);
        }
        atomic_store(&end, 1);
        pthread_join(v, NULL);
        /* Armed again (with new buffers after an abandoned round), samples land. */
        js_store *s2 = make_store();
        assert_int_equal(js_sampler_arm(&fake_source, 1, &fake_walker, s2, NULL, 64, 1000000, err, sizeof err), 0);
        send(pthread_self(), 5, OURS);
        { uint64_t got = delivered(s2); assert_int_equal(got, 5); }
        assert_int_equal(js_sampler_disarm(), 0);
        js_store_destroy(s2);
        if (round == 0) js_store_destroy(s); /* round 1's store was abandoned to the handler: never freed */
    }
}

typedef struct {
    int want;         /* tid residue the thread must have (mod 16, the sampler's stripes) */
    _Atomic int tid;  /* its tid once it has the residue; -1 if it had not */
    _Atomic int end;
} holder;

/* A thread that stays (taking signals) until told to end, if its tid has the wanted residue; else it ends at once. */
static void *holder_main(void *arg)
{
    holder *h = arg;
    int tid = (int)syscall(SYS_gettid);
    if (tid % 16 != h->want) {
        atomic_store(&h->tid, -1);
        return NULL;
    }
    int created;
    js_threads_claim(tid, &created);
    atomic_store(&h->tid, tid);
    while (!atomic_load(&h->end)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* Starts a thread whose tid has residue want mod 16 (tids are handed out in sequence: a few tries). */
static pthread_t start_holder(holder *h, int want)
{
    for (int tries = 0; tries < 100000; tries++) {
        h->want = want;
        atomic_store(&h->tid, 0);
        atomic_store(&h->end, 0);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, holder_main, h), 0);
        while (atomic_load(&h->tid) == 0) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
        if (atomic_load(&h->tid) > 0) return t;
        pthread_join(t, NULL);
    }
    fail_msg("no thread with tid %% 16 == %d", want);
    return pthread_self();
}

/* Holds thread t's next walk in slot i; returns the frame buffer the handler claimed. */
static js_raw_frame *hold_walk(int i, holder *h, pthread_t t)
{
    atomic_store(&g_hold[i], atomic_load(&h->tid));
    send(t, 1, OURS);
    for (int n = 0; n < 2000 && !atomic_load(&g_holding[i]); n++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    assert_true(atomic_load(&g_holding[i]));
    return atomic_load(&g_held_buf[i]);
}

/* A handler that disarm gave up on still reads the sampler's settings and holds its frame buffer's claim: a new arm
 * is refused while it is inside (its settings are never rewritten under it); once it has left, an arm works and a
 * handler starting at the same stripe (tid mod 16) finds a free buffer (the old claim was released). */
static void test_arm_waits_for_abandoned_handler(void **state UNUSED)
{
    char err[256] = "";
    int want = (int)syscall(SYS_gettid) % 16;
    js_store *s1 = make_store();
    assert_int_equal(js_sampler_arm(&fake_source, 1, &fake_walker, s1, NULL, 64, 1000000, err, sizeof err), 0);
    holder old_h;
    pthread_t old_t = start_holder(&old_h, want);
    (void)hold_walk(0, &old_h, old_t);
    assert_int_equal(js_sampler_disarm(), 1); /* gave up on it after 1 s */

    js_store *s2 = make_store();
    int refused = js_sampler_arm(&fake_source, 1, &fake_walker, s2, NULL, 64, 1000000, err, sizeof err);
    atomic_store(&g_hold[0], 0); /* the old handler lets go, and its thread ends */
    atomic_store(&old_h.end, 1);
    pthread_join(old_t, NULL);
    assert_int_equal(refused, -1);
    assert_non_null(strstr(err, "has not returned"));
    for (int n = 0; n < 2000 && !js_sampler_idle(); n++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    assert_true(js_sampler_idle());
    assert_true(delivered(s1) > 0); /* the old handler stored its sample with the settings it started with */

    assert_int_equal(js_sampler_arm(&fake_source, 1, &fake_walker, s2, NULL, 64, 1000000, err, sizeof err), 0);
    atomic_store(&g_last_buf, NULL);
    unthrottle();
    send(pthread_self(), 1, OURS);
    assert_non_null(atomic_load(&g_last_buf)); /* walked: a frame buffer was free */
    assert_int_equal(js_sampler_disarm(), 0);
    (void)delivered(s2);
    js_store_destroy(s2);
    js_store_destroy(s1);
}

typedef struct {
    uint32_t count[2];
    uint32_t serial;
    uint64_t weight;
    int bad;
} seen_events;

/* Tally one drained event by the generation in its trace key. */
static void check_event(const js_ring_event *e, void *ctx)
{
    seen_events *seen = ctx;
    uint32_t gen = e->trace >> JS_SAMPLER_GEN_SHIFT, id = e->trace & ((1u << JS_SAMPLER_GEN_SHIFT) - 1);
    if (gen == 5 && id >= 1) seen->count[0]++;
    else if (gen == 6 && id >= 1) seen->count[1]++;
    else seen->bad++;
    if (e->thread != seen->serial) seen->bad++;
    seen->weight += e->weight;
}

/* The swap returns the old store; samples after it go to the new one; streamed events carry the store's
 * generation in their trace key. */
static void test_swap_and_events(void **state UNUSED)
{
    char err[256];
    js_store *a = make_store(), *b = make_store();
    js_store_set_gen(a, 5);
    js_store_set_gen(b, 6 + 64); /* only the low 6 bits travel */
    js_evring *ring = js_evring_create(16, 1024, err, sizeof err);
    assert_non_null(ring);
    assert_int_equal(js_sampler_arm(&fake_source, 1, &fake_walker, a, ring, 64, 1000000, err, sizeof err), 0);
    send(pthread_self(), 3, OURS);
    { uint64_t got = delivered(a); assert_int_equal(got, 3); }
    uint64_t wa = js_store_total_weight(a);
    assert_ptr_equal(js_sampler_swap_store(b), a);
    send(pthread_self(), 4, OURS);
    assert_int_equal(js_store_total_weight(a), wa); /* nothing more went to the old store */
    uint64_t wb = js_store_total_weight(b);
    { uint64_t got = delivered(b); assert_int_equal(got, 4); }
    assert_int_equal(js_sampler_disarm(), 0);
    seen_events seen = {{0, 0}, atomic_load(&me()->serial), 0, 0};
    size_t n = js_evring_drain(ring, check_event, &seen, 0, NULL);
    assert_int_equal(seen.bad, 0);
    assert_int_equal(seen.weight, wa + wb); /* one event per stored sample, with its weight */
    assert_int_equal(n, seen.count[0] + seen.count[1]);
    assert_true(seen.count[0] >= 1 && seen.count[1] >= 1);
    assert_int_equal(seen.bad, 0);
    js_evring_destroy(ring);
    js_store_destroy(a);
    js_store_destroy(b);
}

typedef struct {
    js_store *s;
    uint64_t throttled, walked;
} split;

static int split_pair(uint32_t trace, uint32_t thread, uint64_t weight, void *ctx)
{
    split *sp = ctx;
    int n;
    const js_raw_frame *f = js_store_trace(sp->s, trace, &n);
    if (f && n == 1 && f[0].kind == JS_RF_ERROR && f[0].bci == JS_WALK_THROTTLED) sp->throttled += weight;
    else sp->walked += weight;
    return 0;
}

/* Weight in store s on the one-frame "[throttled]" stack, and on every other stack. */
static void split_throttled(js_store *s, uint64_t *throttled, uint64_t *walked)
{
    split sp = {s, 0, 0};
    js_store_foreach_pair(s, split_pair, &sp);
    *throttled = sp.throttled;
    *walked = sp.walked;
}

typedef struct {
    js_store *s;
    int n;
    js_raw_frame f[8];
} one_trace;

static int keep_trace(uint32_t trace, uint32_t thread, uint64_t weight, void *ctx)
{
    one_trace *o = ctx;
    const js_raw_frame *f = js_store_trace(o->s, trace, &o->n);
    if (f && o->n <= 8) memcpy(o->f, f, (size_t)o->n * sizeof *f);
    return 0;
}

/* record-cpu on a stack cut at the depth: the CPU frame is the root of the frames kept and the "[truncated]" marker
 * stays the last frame (outputs and the JFR writer find the cut there); uncut, the CPU frame is last. */
static void test_record_cpu_keeps_cut_last(void **state UNUSED)
{
    char err[256];
    for (int depth = 4; depth <= 8; depth += 4) {
        js_store *s = make_store();
        unthrottle();
        js_sampler_set_record_cpu(1, -1);
        assert_int_equal(js_sampler_arm(&fake_source, 1, &fake_walker, s, NULL, depth, 1000000, err, sizeof err), 0);
        send(pthread_self(), 1, OURS);
        assert_int_equal(js_sampler_disarm(), 0);
        js_sampler_set_record_cpu(0, -1);
        one_trace o = {s, 0, {{0}}};
        js_store_foreach_pair(s, keep_trace, &o);
        if (depth == 4) { /* the walk's room is 2 frames, which the fake walker fills: cut */
            assert_int_equal(o.n, 4);
            assert_int_equal(o.f[2].kind, JS_RF_CPU);
            assert_int_equal(o.f[3].kind, JS_RF_ERROR);
            assert_int_equal(o.f[3].bci, JS_WALK_TRUNCATED);
        } else {
            assert_int_equal(o.n, 3);
            assert_int_equal(o.f[2].kind, JS_RF_CPU);
        }
        js_store_destroy(s);
    }
}

/* record-cpu with target-cpu=N: the CPU frame is N (the counters count only there; the thread may have moved
 * before its signal came), not the CPU the handler runs on: 4000 is no CPU of this machine. */
static void test_record_cpu_fixed(void **state UNUSED)
{
    char err[256];
    js_store *s = make_store();
    unthrottle();
    js_sampler_set_record_cpu(1, 4000);
    assert_int_equal(js_sampler_arm(&fake_source, 1, &fake_walker, s, NULL, 8, 1000000, err, sizeof err), 0);
    send(pthread_self(), 1, OURS);
    assert_int_equal(js_sampler_disarm(), 0);
    js_sampler_set_record_cpu(0, -1);
    one_trace o = {s, 0, {{0}}};
    js_store_foreach_pair(s, keep_trace, &o);
    assert_int_equal(o.n, 3);
    assert_int_equal(o.f[2].kind, JS_RF_CPU);
    assert_int_equal(o.f[2].bci, 4000);
    js_store_destroy(s);
}

/* A new store, this thread's budget fresh, the stats reset, and the fake source armed at 1 ms on it. */
static js_store *arm_for_budget(void)
{
    char err[256];
    js_store *s = make_store();
    unthrottle();
    js_stats_reset();
    assert_int_equal(js_sampler_arm(&fake_source, 1, &fake_walker, s, NULL, 64, 1000000, err, sizeof err), 0);
    return s;
}

/* The handler budget counts the handlers' CPU time, not their time on the clock: walks that sleep 3 ms (a handler
 * preempted by other processes), one per 1 ms of the thread's CPU, are never throttled (on the clock they would
 * spend 12 times the credit the thread earns); walks that use 2 ms of CPU each at 1 ms are,
 * and their samples keep their weight on a "[throttled]" stack of their own (nothing moves to the walked stack). */
static void test_budget_counts_own_cpu(void **state UNUSED)
{
    js_stats_snapshot st;
    js_store *s = arm_for_budget();
    atomic_store(&g_walk_sleep_us, 3000);
    for (int i = 0; i < 20; i++) {
        send(pthread_self(), 1, OURS);
        burn_cpu_us(1000); /* a quarter of it is credit: more than a sleeping walk's CPU, far less than its 3 ms */
    }
    atomic_store(&g_walk_sleep_us, 0);
    js_stats_get(&st);
    assert_int_equal(st.samples, 20);
    assert_int_equal(st.throttled, 0);

    atomic_store(&g_walk_burn_us, 2000);
    send(pthread_self(), 20, OURS);
    atomic_store(&g_walk_burn_us, 0);
    js_stats_get(&st);
    assert_int_equal(st.samples, 40);
    assert_true(st.throttled >= 10); /* 2 ms of CPU per walk, a budget of 1/5 of the CPU: most are not walked */
    uint64_t throttled, walked;
    split_throttled(s, &throttled, &walked);
    assert_int_equal(throttled, st.throttled_weight);
    assert_int_equal(throttled + walked, 40);
    assert_int_equal(js_sampler_disarm(), 0);
    unthrottle();
    js_store_destroy(s);
}

/* The budget absorbs a burst: a thread's first handler, or one the VM's CPU clock charged 1.5 ms (the host's time,
 * measured on these machines), does not throttle the samples after it at 1 ms, while walks that keep using more
 * than a fifth of the thread's CPU still are. */
static void test_budget_absorbs_one_costly_handler(void **state UNUSED)
{
    js_stats_snapshot st;
    js_store *s = arm_for_budget();
    atomic_store(&g_walk_burn_us, 1500);
    send(pthread_self(), 1, OURS);
    atomic_store(&g_walk_burn_us, 0);
    for (int i = 0; i < 10; i++) {
        burn_cpu_us(1000);
        send(pthread_self(), 1, OURS);
    }
    js_stats_get(&st);
    assert_int_equal(st.samples, 11);
    assert_int_equal(st.throttled, 0);

    atomic_store(&g_walk_burn_us, 1000); /* 1 ms walks, one per 1 ms of other CPU: half the CPU in handlers */
    for (int i = 0; i < 40; i++) {
        burn_cpu_us(1000);
        send(pthread_self(), 1, OURS);
    }
    atomic_store(&g_walk_burn_us, 0);
    js_stats_get(&st);
    assert_int_equal(st.samples, 51);
    assert_true(st.throttled >= 20); /* walked: the cap's 4 walks, then one per 4 ms of other CPU (about 8) */
    assert_int_equal(js_sampler_disarm(), 0);
    unthrottle();
    js_store_destroy(s);
}

static _Atomic int g_old_calls;

static void old_handler(int signo, siginfo_t *si, void *uc)
{
    atomic_fetch_add(&g_old_calls, 1);
}

/* In a child: every candidate signal taken by another handler, so the sampler shares SIGPROF; a signal that is
 * not ours reaches the old handler exactly once, ours does not. Exit code 0 = as expected. */
static int chaining_child(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = old_handler;
    sa.sa_flags = SA_SIGINFO;
    const int sigs[] = {SIGPROF, SIGVTALRM, SIGRTMIN + 6, SIGRTMIN + 7};
    for (int i = 0; i < 4; i++) sigaction(sigs[i], &sa, NULL);
    /* A fresh process image would be cleaner; the parent's sampler state was inherited, so uninstall first. */
    js_sampler_uninstall();
    for (int i = 0; i < 4; i++) sigaction(sigs[i], &sa, NULL);
    char err[256];
    int signo = js_sampler_install(0, err, sizeof err);
    if (signo != SIGPROF || !js_sampler_shared()) return 1;
    js_store *s = js_store_create(64, 4096, 64, err, sizeof err);
    if (!s || js_sampler_arm(&fake_source, 1, &fake_walker, s, NULL, 64, 1000000, err, sizeof err) != 0) return 2;
    union sigval ours = {.sival_int = OURS}, other = {.sival_int = 7};
    pthread_sigqueue(pthread_self(), SIGPROF, ours);
    if (atomic_load(&g_old_calls) != 0 || js_store_total_weight(s) != 1) return 3;
    pthread_sigqueue(pthread_self(), SIGPROF, other);
    if (atomic_load(&g_old_calls) != 1 || js_store_total_weight(s) != 1) return 4;
    return 0;
}

/* The slot the handler finds for the calling thread now. */
static js_thread *slot_seen(void)
{
    atomic_store(&g_weighed, NULL);
    send(pthread_self(), 1, OURS);
    return atomic_load(&g_weighed);
}

/* One short-lived thread: its handler must find its own slot (its tid cached after the first), again when its
 * slot's descriptor mark is another thread's (the cached tid is asked again), none once its slot is released, and
 * the new one after it claims again. */
static void *tid_cache_thread(void *arg)
{
    _Atomic int *bad = arg;
    int created, tid = (int)syscall(SYS_gettid);
    js_thread *t = js_threads_claim(tid, &created);
    if (!t || slot_seen() != t || slot_seen() != t) atomic_fetch_add(bad, 1);
    atomic_store(&t->self, (uintptr_t)1); /* as if another thread had been found here */
    if (slot_seen() != t || atomic_load(&t->self) != (uintptr_t)pthread_self()) atomic_fetch_add(bad, 1);
    js_threads_release(t);
    if (slot_seen() != NULL) atomic_fetch_add(bad, 1);
    t = js_threads_claim(tid, &created);
    if (!t || slot_seen() != t) atomic_fetch_add(bad, 1);
    js_threads_release(t);
    return NULL;
}

/* The handler's tid cache: threads made one after another (glibc reuses their descriptors and stacks) each get their
 * own slot, never a predecessor's. */
static void test_tid_cache_follows_threads(void **state UNUSED)
{
    js_store *s = make_store();
    char err[256];
    assert_int_equal(js_sampler_arm(&fake_source, 1, &fake_walker, s, NULL, 64, 1000000, err, sizeof err), 0);
    _Atomic int bad = 0;
    for (int i = 0; i < 50; i++) {
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, tid_cache_thread, &bad), 0);
        assert_int_equal(pthread_join(th, NULL), 0);
    }
    assert_int_equal(atomic_load(&bad), 0);
    assert_true(slot_seen() == me());
    assert_int_equal(js_sampler_disarm(), 0);
    js_store_destroy(s);
}

static void test_foreign_signals_are_chained(void **state UNUSED)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(chaining_child());
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) fail_msg("chaining child failed at step %d", WEXITSTATUS(status));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_and_disarm),
        cmocka_unit_test(test_wall_signal_without_weight_is_counted),
        cmocka_unit_test(test_record_cpu_keeps_cut_last),
        cmocka_unit_test(test_record_cpu_fixed),
        cmocka_unit_test(test_disarm_waits_for_handler),
        cmocka_unit_test(test_arm_waits_for_abandoned_handler),
        cmocka_unit_test(test_swap_and_events),
        cmocka_unit_test(test_budget_counts_own_cpu),
        cmocka_unit_test(test_budget_absorbs_one_costly_handler),
        cmocka_unit_test(test_tid_cache_follows_threads),
        cmocka_unit_test(test_foreign_signals_are_chained),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}

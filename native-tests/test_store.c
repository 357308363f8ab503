/* test_store.c - the lock-free call-trace store (store.h): ids, per-thread weights, read-back,
 * exact counts under threads + signal handlers, full-store drops, reset. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "sample/store.h"

#define UNUSED __attribute__((unused))

/* A fake jmethodID: distinct per k, 64 KiB apart so no bci can alias two methods. */
static const void *meth(uint64_t k)
{
    return (const void *)(uintptr_t)(0x7f0000000000ULL + (k << 16));
}

/* A Java frame: fake method m at bytecode index bci. */
static js_raw_frame jf(uint64_t m, int32_t bci)
{
    return (js_raw_frame){.bci = bci, .kind = JS_RF_JAVA, .method = meth(m)};
}

static js_store *make(uint32_t traces, uint64_t frames, uint32_t pairs)
{
    char err[256] = "";
    js_store *s = js_store_create(traces, frames, pairs, err, sizeof err);
    if (!s) print_error("js_store_create: %s\n", err);
    assert_non_null(s);
    return s;
}

/* Read trace id back and require exactly frames[0..n). */
static void expect_frames(const js_store *s, uint32_t id, const js_raw_frame *frames, int n)
{
    int got = -1;
    const js_raw_frame *f = js_store_trace(s, id, &got);
    assert_non_null(f);
    assert_int_equal(got, n);
    assert_memory_equal(f, frames, (size_t)n * sizeof *frames);
}

typedef struct {
    uint32_t trace[64], thread[64];
    uint64_t weight[64], sum;
    int n;
} pair_log;

static int log_pair(uint32_t trace, uint32_t thread, uint64_t weight, void *ctx)
{
    pair_log *l = ctx;
    if (l->n < 64) l->trace[l->n] = trace, l->thread[l->n] = thread, l->weight[l->n] = weight;
    l->n++;
    l->sum += weight;
    return 0;
}

/* Weight of pair (trace, thread) in the log; 0 if absent, fails if present twice. */
static uint64_t pair_weight(const pair_log *l, uint32_t trace, uint32_t thread)
{
    uint64_t w = 0;
    int seen = 0;
    for (int i = 0; i < l->n && i < 64; i++)
        if (l->trace[i] == trace && l->thread[i] == thread) w = l->weight[i], seen++;
    assert_true(seen <= 1);
    return w;
}

/* One insert is stored once: id > 0, frames, weight, pair, counters all exact. */
static void test_single_insert_lookup(void **state UNUSED)
{
    js_store *s = make(1024, 65536, 4096);
    assert_true(js_store_reserved_bytes(s) > 0 && js_store_reserved_bytes(s) % 4096 == 0);
    js_raw_frame st[5] = {jf(1, 10), jf(2, 20), jf(3, 30), jf(4, 40), jf(5, 50)};
    uint32_t id = js_store_add(s, st, 5, 7, 3);
    assert_true(id > 0);
    expect_frames(s, id, st, 5);
    assert_int_equal(js_store_trace_count(s), 1);
    assert_int_equal(js_store_total_weight(s), 3);
    assert_int_equal(js_store_dropped(s), 0);
    pair_log l = {0};
    assert_int_equal(js_store_foreach_pair(s, log_pair, &l), 0);
    assert_int_equal(l.n, 1);
    assert_true(l.trace[0] == id && l.thread[0] == 7 && l.weight[0] == 3);
    js_store_destroy(s);
}

typedef struct {
    uint32_t thread;
    uint64_t weight, count;
    int n;
} count_log;

static int log_count(uint32_t trace, uint32_t thread, uint64_t weight, uint64_t count, void *ctx)
{
    count_log *l = ctx;
    if (thread == l->thread) l->weight = weight, l->count = count;
    l->n++;
    return 0;
}

/* Each add and add_again is one sample of its pair, whatever its weight (the allocations behind a byte weight). */
static void test_pair_sample_count(void **state UNUSED)
{
    js_store *s = make(1024, 65536, 4096);
    js_raw_frame st[2] = {jf(1, 1), jf(2, 2)};
    uint32_t id = js_store_add(s, st, 2, 7, 5000);
    assert_int_equal(js_store_add(s, st, 2, 7, 300), id);
    assert_int_equal(js_store_add_again(s, id, 7, 2), 0);
    assert_int_equal(js_store_add(s, st, 2, 8, 9), id);
    count_log l = {.thread = 7};
    assert_int_equal(js_store_foreach_pair_counted(s, log_count, &l), 0);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.weight, 5302);
    assert_int_equal(l.count, 3);
    l = (count_log){.thread = 8};
    js_store_foreach_pair_counted(s, log_count, &l);
    assert_int_equal(l.count, 1);
    js_store_reset(s);
    l = (count_log){.thread = 7};
    js_store_foreach_pair_counted(s, log_count, &l);
    assert_int_equal(l.n, 0);
    js_store_destroy(s);
}

/* The same frames (from a different buffer) map to the same id and one trace. */
static void test_identical_stacks_share_id(void **state UNUSED)
{
    js_store *s = make(1024, 65536, 4096);
    js_raw_frame a[3] = {jf(1, 1), jf(2, 2), jf(3, 3)}, b[3];
    memcpy(b, a, sizeof a);
    uint32_t ia = js_store_add(s, a, 3, 1, 1), ib = js_store_add(s, b, 3, 1, 4);
    assert_true(ia > 0);
    assert_int_equal(ia, ib);
    assert_int_equal(js_store_trace_count(s), 1);
    assert_int_equal(js_store_total_weight(s), 5);
    js_store_destroy(s);
}

/* Stacks differing only in one bci, one kind, frame order, or length get distinct ids. */
static void test_distinct_stacks_distinct_ids(void **state UNUSED)
{
    js_store *s = make(1024, 65536, 4096);
    enum { N = 7 };
    js_raw_frame v[N][4] = {
        {jf(1, 5), jf(2, 6), jf(3, 7)},          /* base */
        {jf(1, 5), jf(2, 9), jf(3, 7)},          /* middle bci */
        {jf(1, 5), jf(2, 6), jf(3, 7)},          /* leaf kind (set below) */
        {jf(2, 6), jf(1, 5), jf(3, 7)},          /* order */
        {jf(1, 5), jf(2, 6)},                    /* prefix */
        {jf(1, 5), jf(2, 6), jf(3, 7), jf(4, 0)}, /* one more */
        {jf(1, -1), jf(2, 6), jf(3, 7)},         /* unknown bci */
    };
    int n[N] = {3, 3, 3, 3, 2, 4, 3};
    v[2][0].kind = JS_RF_NATIVE;
    uint32_t id[N];
    for (int i = 0; i < N; i++) {
        id[i] = js_store_add(s, v[i], n[i], 1, 1);
        assert_true(id[i] > 0);
        for (int j = 0; j < i; j++)
            if (id[j] == id[i]) print_error("variants %d and %d share id %u\n", j, i, id[i]);
        for (int j = 0; j < i; j++) assert_int_not_equal(id[j], id[i]);
    }
    assert_int_equal(js_store_trace_count(s), N);
    for (int i = 0; i < N; i++) expect_frames(s, id[i], v[i], n[i]);
    js_store_destroy(s);
}

/* Deep stacks (the hash takes frames in four lanes): a change of one frame anywhere, two neighbours swapped (they sit
 * in different lanes), the stack rotated by one or cut by one frame, each is a stack of its own. */
static void test_deep_variants_distinct(void **state UNUSED)
{
    enum { D = 2000, V = 10 };
    js_store *s = make(1024, (uint64_t)D * V * 2, 4096);
    static js_raw_frame v[V][D + 1];
    for (int k = 0; k < V; k++)
        for (int i = 0; i <= D; i++) v[k][i] = jf((uint64_t)(i % 500) + 1, i % 7);
    int pos[] = {0, 1, 2, 3, 1000, D - 1};
    for (int k = 0; k < 6; k++) v[k + 1][pos[k]].bci += 1; /* one frame changed */
    v[7][4] = v[0][5], v[7][5] = v[0][4];                  /* neighbours swapped */
    for (int i = 0; i < D; i++) v[8][i] = v[0][(i + 1) % D]; /* rotated */
    int n[V] = {D, D, D, D, D, D, D, D, D, D - 1};         /* the last: one frame shorter */
    uint32_t id[V];
    for (int k = 0; k < V; k++) {
        id[k] = js_store_add(s, v[k], n[k], 1, 1);
        assert_true(id[k] > 0);
        for (int j = 0; j < k; j++) assert_int_not_equal(id[j], id[k]);
    }
    for (int k = 0; k < V; k++) assert_int_equal(js_store_add(s, v[k], n[k], 1, 1), id[k]); /* found again */
    assert_int_equal(js_store_trace_count(s), V);
    js_store_destroy(s);
}

/* Adjacent jmethodIDs (8 bytes apart, as HotSpot allocates them) with different bcis stay distinct. */
static void test_adjacent_method_ids_distinct(void **state UNUSED)
{
    js_store *s = make(1024, 65536, 4096);
    js_raw_frame a = {.bci = 1, .kind = JS_RF_JAVA, .method = (const void *)(uintptr_t)0x7f1234560000ULL};
    js_raw_frame b = {.bci = 0, .kind = JS_RF_JAVA, .method = (const void *)(uintptr_t)0x7f1234560008ULL};
    uint32_t ia = js_store_add(s, &a, 1, 1, 1), ib = js_store_add(s, &b, 1, 1, 1);
    assert_true(ia > 0 && ib > 0);
    if (ia == ib) print_error("method 0x...0000@bci 1 and method 0x...0008@bci 0 share trace %u\n", ia);
    assert_int_not_equal(ia, ib);
    expect_frames(s, ib, &b, 1);
    js_store_destroy(s);
}

/* The same trace on threads 1 and 2 is two pairs with each thread's own weight; weight 0 is not listed. */
static void test_per_thread_attribution(void **state UNUSED)
{
    js_store *s = make(1024, 65536, 4096);
    js_raw_frame st[2] = {jf(8, 1), jf(9, 2)};
    uint32_t id = js_store_add(s, st, 2, 1, 5);
    assert_int_equal(js_store_add(s, st, 2, 2, 11), id);
    assert_int_equal(js_store_add(s, st, 2, 1, 2), id);
    assert_int_equal(js_store_add(s, st, 2, 3, 0), id); /* zero weight: not reported as a pair */
    pair_log l = {0};
    js_store_foreach_pair(s, log_pair, &l);
    assert_int_equal(l.n, 2);
    assert_int_equal(pair_weight(&l, id, 1), 7);
    assert_int_equal(pair_weight(&l, id, 2), 11);
    assert_int_equal(js_store_trace_count(s), 1);
    assert_int_equal(js_store_total_weight(s), 18);
    js_store_destroy(s);
}

static int stop_after_first(uint32_t trace, uint32_t thread, uint64_t weight, void *ctx)
{
    (void)trace, (void)thread, (void)weight;
    (*(int *)ctx)++;
    return 42;
}

/* foreach_pair visits each pair once, its weights sum to total_weight; a non-zero return stops it. */
static void test_foreach_sum_equals_total(void **state UNUSED)
{
    js_store *s = make(1024, 65536, 4096);
    uint64_t want = 0;
    for (uint32_t k = 0; k < 6; k++) {
        js_raw_frame st[3] = {jf(k, (int32_t)k), jf(100, 0), jf(101, 0)};
        for (uint32_t t = 1; t <= 5; t++) {
            assert_true(js_store_add(s, st, 3, t, k * 10 + t) > 0);
            want += k * 10 + t;
        }
    }
    pair_log l = {0};
    assert_int_equal(js_store_foreach_pair(s, log_pair, &l), 0);
    assert_int_equal(l.n, 30);
    assert_int_equal(l.sum, want);
    assert_int_equal(js_store_total_weight(s), want);
    int calls = 0;
    assert_int_equal(js_store_foreach_pair(s, stop_after_first, &calls), 42);
    assert_int_equal(calls, 1);
    js_store_destroy(s);
}

/* Frames of every kind, incl. negative bcis and NULL methods, read back leaf first, bit-exact. */
static void test_frames_read_back_leaf_first(void **state UNUSED)
{
    js_store *s = make(1024, 65536, 4096);
    js_raw_frame st[5] = {
        {.bci = -3, .kind = JS_RF_ERROR, .method = NULL},
        {.bci = -1, .kind = JS_RF_NATIVE, .method = meth(50)},
        {.bci = 17, .kind = JS_RF_NULL_ID, .method = NULL},
        {.bci = 0x7fffffff, .kind = JS_RF_JAVA, .method = meth(51)},
        {.bci = 0, .kind = JS_RF_JAVA, .method = meth(52)}};
    uint32_t id = js_store_add(s, st, 5, 3, 1);
    int n = 0;
    const js_raw_frame *f = js_store_trace(s, id, &n);
    assert_non_null(f);
    assert_int_equal(n, 5);
    assert_int_equal(f[0].kind, JS_RF_ERROR);
    assert_int_equal(f[0].bci, -3);
    assert_ptr_equal(f[4].method, meth(52));
    assert_memory_equal(f, st, sizeof st);
    js_store_destroy(s);
}

/* Id 0, ids past capacity and never-used slots give NULL and leave *n alone; n <= 0 stores nothing. */
static void test_trace_invalid_ids(void **state UNUSED)
{
    js_store *s = make(4, 16, 8);
    js_raw_frame st[1] = {jf(1, 1)};
    uint32_t id = js_store_add(s, st, 1, 1, 1);
    assert_true(id >= 1 && id <= 4);
    int n = -7;
    assert_null(js_store_trace(s, 0, &n));
    assert_null(js_store_trace(s, 5, &n));
    assert_null(js_store_trace(s, UINT32_MAX, &n));
    assert_null(js_store_trace(s, id == 1 ? 2 : 1, &n));
    assert_int_equal(n, -7);
    assert_int_equal(js_store_add(s, st, 0, 1, 1), 0);
    assert_int_equal(js_store_add(s, st, -1, 1, 1), 0);
    assert_int_equal(js_store_trace_count(s), 1);
    assert_int_equal(js_store_total_weight(s), 1);
    js_store_destroy(s);
}

/* With 4 trace slots the 5th and 6th distinct stacks are dropped (counted), known ones still land. */
static void test_full_trace_table(void **state UNUSED)
{
    js_store *s = make(4, 16, 8);
    js_raw_frame st[6][2];
    for (int k = 0; k < 6; k++) st[k][0] = jf((uint64_t)k, 0), st[k][1] = jf(99, 1);
    uint32_t id[4];
    for (int k = 0; k < 4; k++) assert_true((id[k] = js_store_add(s, st[k], 2, 1, 1)) > 0);
    assert_int_equal(js_store_add(s, st[4], 2, 1, 100), 0);
    assert_int_equal(js_store_dropped(s), 1);
    assert_int_equal(js_store_add(s, st[2], 2, 1, 1), id[2]);
    assert_int_equal(js_store_add(s, st[5], 2, 1, 100), 0);
    assert_int_equal(js_store_add(s, st[4], 2, 2, 100), 0);
    assert_int_equal(js_store_dropped(s), 3);
    assert_int_equal(js_store_trace_count(s), 4);
    assert_int_equal(js_store_total_weight(s), 5);
    for (int k = 0; k < 4; k++) expect_frames(s, id[k], st[k], 2);
    js_store_destroy(s);
}

/* With 8 pair slots a 9th (trace, thread) is not aggregated, but its trace id is still returned (a streamed
 * event can name it) and its weight is counted as pair-dropped; existing pairs keep accumulating. */
static void test_full_pair_table(void **state UNUSED)
{
    js_store *s = make(4, 16, 8);
    js_raw_frame st[1] = {jf(1, 1)};
    uint32_t id = js_store_add(s, st, 1, 1, 1);
    for (uint32_t t = 2; t <= 8; t++) assert_int_equal(js_store_add(s, st, 1, t, 1), id);
    assert_int_equal(js_store_dropped(s), 0);
    assert_int_equal(js_store_add(s, st, 1, 9, 50), id);
    assert_int_equal(js_store_add(s, st, 1, 10, 50), id);
    assert_int_equal(js_store_dropped(s), 0);
    js_store_fill f;
    js_store_usage(s, &f);
    assert_int_equal(f.pair_dropped_weight, 100);
    assert_int_equal(f.pairs, 8);
    assert_int_equal(f.max_pairs, 8);
    assert_int_equal(js_store_add(s, st, 1, 8, 2), id);
    assert_int_equal(js_store_total_weight(s), 10);
    pair_log l = {0};
    js_store_foreach_pair(s, log_pair, &l);
    assert_int_equal(l.n, 8);
    assert_int_equal(l.sum, 10);
    assert_int_equal(pair_weight(&l, id, 8), 3);
    assert_int_equal(pair_weight(&l, id, 9), 0);
    js_store_destroy(s);
}

/* The journal lists every published trace once, in publication order, and forgets them at reset;
 * the generation tag is kept across reset. */
static void test_journal_and_generation(void **state UNUSED)
{
    js_store *s = make(64, 256, 64);
    uint32_t ids[20];
    for (int k = 0; k < 20; k++) {
        js_raw_frame st[2] = {jf((uint64_t)k + 1, k), jf(99, 0)};
        ids[k] = js_store_add(s, st, 2, 1, 1);
        assert_true(ids[k] > 0);
        js_store_add(s, st, 2, 2, 1); /* the same trace again: not journaled twice */
    }
    assert_int_equal(js_store_trace_count(s), 20);
    for (uint32_t q = 0; q < 20; q++) assert_int_equal(js_store_trace_id_at(s, q), ids[q]);
    assert_int_equal(js_store_trace_id_at(s, 20), 0);
    assert_int_equal(js_store_trace_id_at(s, 1u << 30), 0);
    js_store_set_gen(s, 7);
    js_store_reset(s);
    assert_int_equal(js_store_gen(s), 7);
    assert_int_equal(js_store_trace_count(s), 0);
    assert_int_equal(js_store_trace_id_at(s, 0), 0);
    js_store_destroy(s);
}

/* A 16-frame arena takes a 10-frame stack, drops a 7- and a 17-frame one; nothing is corrupted. */
static void test_arena_limit_drops_stack_that_does_not_fit(void **state UNUSED)
{
    js_store *s = make(4, 16, 8);
    js_raw_frame big[17];
    for (int i = 0; i < 17; i++) big[i] = jf((uint64_t)i + 1, i);
    uint32_t id = js_store_add(s, big, 10, 1, 1);
    assert_true(id > 0);
    assert_int_equal(js_store_add(s, big + 3, 7, 1, 1), 0);
    assert_int_equal(js_store_add(s, big, 17, 1, 1), 0);
    assert_int_equal(js_store_dropped(s), 2);
    assert_int_equal(js_store_trace_count(s), 1);
    assert_int_equal(js_store_add(s, big, 10, 2, 1), id);
    expect_frames(s, id, big, 10);
    js_store_destroy(s);
}

/* After a stack is refused for lack of arena, a smaller one that still fits (10 + 6 = 16) is stored. */
static void test_arena_refusal_does_not_leak_space(void **state UNUSED)
{
    js_store *s = make(4, 16, 8);
    js_raw_frame big[17];
    for (int i = 0; i < 17; i++) big[i] = jf((uint64_t)i + 1, i);
    assert_true(js_store_add(s, big, 10, 1, 1) > 0);
    assert_int_equal(js_store_add(s, big, 17, 1, 1), 0);
    uint32_t id = js_store_add(s, big + 10, 6, 1, 1);
    if (!id) print_error("6-frame stack dropped with 6 of 16 arena frames free (dropped=%llu)\n",
                         (unsigned long long)js_store_dropped(s));
    assert_true(id > 0);
    expect_frames(s, id, big + 10, 6);
    js_store_destroy(s);
}

/* Reset empties traces, pairs and counters; the store then holds a full load again. */
static void test_reset_and_reuse(void **state UNUSED)
{
    js_store *s = make(4, 16, 8);
    js_raw_frame st[5][4];
    for (int k = 0; k < 5; k++)
        for (int i = 0; i < 4; i++) st[k][i] = jf((uint64_t)(k * 4 + i), i);
    uint32_t old = 0;
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < 4; k++) assert_true(js_store_add(s, st[k], 4, 1, 2) > 0);
        old = js_store_add(s, st[0], 4, 1, 2);
        assert_int_equal(js_store_add(s, st[4], 4, 1, 2), 0);
        assert_int_equal(js_store_trace_count(s), 4);
        assert_int_equal(js_store_total_weight(s), 10);
        assert_int_equal(js_store_dropped(s), 1);
        js_store_reset(s);
        assert_int_equal(js_store_trace_count(s), 0);
        assert_int_equal(js_store_total_weight(s), 0);
        assert_int_equal(js_store_dropped(s), 0);
        int n = -1;
        assert_null(js_store_trace(s, old, &n));
        pair_log l = {0};
        assert_int_equal(js_store_foreach_pair(s, log_pair, &l), 0);
        assert_int_equal(l.n, 0);
    }
    js_store_destroy(s);
}

/* A capacity above 2^31 either fails to create or works (no silently dead table). */
static void test_huge_capacity_is_usable_or_refused(void **state UNUSED)
{
    char err[256] = "";
    js_raw_frame st[1] = {jf(1, 1)};
    /* Over the limits: refused with a line that names the limits. */
    uint32_t over[2][2] = {{JS_STORE_MAX_TRACES + 1u, 16}, {16, JS_STORE_MAX_PAIRS + 1u}};
    for (int i = 0; i < 2; i++) {
        err[0] = 0;
        assert_null(js_store_create(over[i][0], 16, over[i][1], err, sizeof err));
        assert_non_null(strstr(err, "too large"));
    }
    /* At the limits: created (address space only) and usable, including the last trace slot. */
    js_store *s = js_store_create(JS_STORE_MAX_TRACES, 16, JS_STORE_MAX_PAIRS, err, sizeof err);
    if (!s) print_error("js_store_create at the limits: %s\n", err);
    assert_non_null(s);
    uint32_t id = js_store_add(s, st, 1, 1, 1);
    assert_true(id > 0 && id <= JS_STORE_MAX_TRACES);
    int n = 0;
    assert_non_null(js_store_trace(s, id, &n));
    assert_int_equal(n, 1);
    assert_null(js_store_trace(s, JS_STORE_MAX_TRACES + 1u, &n));
    js_store_destroy(s);
}

/* ---- concurrency: 8 threads + SIGALRM/SIGPROF handlers inserting into one store ---- */
enum { NTHREADS = 8, NSLOTS = NTHREADS + 2, NSTACKS = 200, MAXDEPTH = 40, ROUNDS = 4, ITERS = 40000,
       MIN_SIGNAL_ADDS = 500 };
static js_raw_frame g_stacks[NSTACKS][MAXDEPTH];
static int g_depth[NSTACKS];
static js_store *g_store;
static pthread_barrier_t g_go;
static _Atomic uint32_t g_id[NSTACKS];            /* first id seen per stack, from any context */
static _Atomic uint64_t g_sig_w[NSLOTS][NSTACKS]; /* weight added by signal handlers per store thread */
static _Atomic uint64_t g_sig_adds, g_failures, g_id_mismatch;
static uint64_t g_thr_w[NTHREADS][NSLOTS][NSTACKS]; /* weight added by each worker (own block only) */
static int64_t g_deadline_ns;
static __thread int tls_worker = -1;
static __thread unsigned tls_sig_seq;

/* Store thread slot of a worker's i-th add: odd = its own, even = one of two shared by 4 workers. */
static int slot_of(int t, unsigned i)
{
    return (i & 1) ? t : NTHREADS + (t & 1);
}

/* Record the id for stack k, or count a mismatch/failure. Signal-safe. */
static void note_id(int k, uint32_t id)
{
    if (!id) {
        atomic_fetch_add(&g_failures, 1);
        return;
    }
    uint32_t expected = 0;
    if (!atomic_compare_exchange_strong(&g_id[k], &expected, id) && expected != id)
        atomic_fetch_add(&g_id_mismatch, 1);
}

static void on_signal(int sig)
{
    int t = tls_worker;
    if (t < 0) return;
    unsigned seq = tls_sig_seq++;
    int k = (int)((seq * 31u + (unsigned)sig) % NSTACKS), slot = slot_of(t, seq);
    uint64_t w = (uint64_t)sig; /* SIGALRM 14, SIGPROF 27 */
    note_id(k, js_store_add(g_store, g_stacks[k], g_depth[k], 1000u + (uint32_t)slot, w));
    atomic_fetch_add(&g_sig_w[slot][k], w);
    atomic_fetch_add(&g_sig_adds, 1);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The two signals this test drives. */
static void test_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGALRM);
    sigaddset(set, SIGPROF);
}

/* All workers start together and walk the stacks in the same order, so they race on new traces and pairs. */
static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    tls_worker = t;
    sigset_t set;
    test_signals(&set);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL); /* main keeps them blocked: only workers get hit */
    pthread_barrier_wait(&g_go);
    for (unsigned i = 0; i < ITERS || (atomic_load(&g_sig_adds) < MIN_SIGNAL_ADDS && now_ns() < g_deadline_ns); i++) {
        int k = (int)(i * 7u % NSTACKS), slot = slot_of(t, i);
        uint64_t w = 1 + i % 3;
        note_id(k, js_store_add(g_store, g_stacks[k], g_depth[k], 1000u + (uint32_t)slot, w));
        g_thr_w[t][slot][k] += w;
    }
    return NULL;
}

/* Distinct stacks sharing frames: common callers, leaf bci = stack index. */
static void build_stacks(void)
{
    for (int k = 0; k < NSTACKS; k++) {
        g_depth[k] = 1 + (k * 7) % MAXDEPTH;
        g_stacks[k][0] = jf((uint64_t)(k % 13), k);
        for (int i = 1; i < g_depth[k]; i++) g_stacks[k][i] = jf((uint64_t)(100 + (k + i) % 29), i);
        if (k % 5 == 0) g_stacks[k][0].kind = JS_RF_NATIVE;
    }
}

static uint64_t expected_weight(int slot, int k)
{
    uint64_t w = atomic_load(&g_sig_w[slot][k]);
    for (int t = 0; t < NTHREADS; t++) w += g_thr_w[t][slot][k];
    return w;
}

typedef struct {
    int pairs, bad;
    uint64_t sum;
} conc_check;

/* Compare one pair against the exact expected weight (worker + handler adds). */
static int check_pair(uint32_t trace, uint32_t thread, uint64_t weight, void *ctx)
{
    conc_check *c = ctx;
    int k = 0, slot = (int)thread - 1000;
    while (k < NSTACKS && atomic_load(&g_id[k]) != trace) k++;
    c->pairs++;
    c->sum += weight;
    uint64_t want = k < NSTACKS && slot >= 0 && slot < NSLOTS ? expected_weight(slot, k) : 0;
    if (weight != want && c->bad++ < 5)
        print_error("pair trace %u thread %u: weight %llu, want %llu\n", trace, thread, (unsigned long long)weight,
                    (unsigned long long)want);
    return 0;
}

/* One round on a fresh store with both timers firing; asserts every count exactly. */
static void run_round(int round)
{
    g_store = make(1024, 1 << 16, 4096);
    memset(g_thr_w, 0, sizeof g_thr_w);
    for (int k = 0; k < NSTACKS; k++) {
        atomic_store(&g_id[k], 0);
        for (int s = 0; s < NSLOTS; s++) atomic_store(&g_sig_w[s][k], 0);
    }
    atomic_store(&g_sig_adds, 0);
    timer_t timer;
    struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM};
    assert_int_equal(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
    struct itimerspec its = {.it_interval = {0, 20000}, .it_value = {0, 20000}}; /* 50 kHz wall */
    struct itimerval itv = {.it_interval = {0, 1000}, .it_value = {0, 1000}};     /* 1 kHz CPU */
    g_deadline_ns = now_ns() + 10 * 1000000000LL; /* keep going until enough signal-side adds */
    assert_int_equal(pthread_barrier_init(&g_go, NULL, NTHREADS), 0);
    assert_int_equal(timer_settime(timer, 0, &its, NULL), 0);
    assert_int_equal(setitimer(ITIMER_PROF, &itv, NULL), 0);
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t), 0);
    for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    timer_delete(timer);
    pthread_barrier_destroy(&g_go);

    uint64_t sig_adds = atomic_load(&g_sig_adds), want = 0;
    print_message("round %d: %d threads x >=%d adds, %llu adds from signal handlers\n", round, NTHREADS, ITERS,
                  (unsigned long long)sig_adds);
    assert_true(sig_adds >= MIN_SIGNAL_ADDS);
    assert_int_equal(atomic_load(&g_failures), 0);
    assert_int_equal(atomic_load(&g_id_mismatch), 0);
    assert_int_equal(js_store_dropped(g_store), 0);
    assert_int_equal(js_store_trace_count(g_store), NSTACKS);
    int want_pairs = 0;
    for (int s = 0; s < NSLOTS; s++)
        for (int k = 0; k < NSTACKS; k++) {
            uint64_t w = expected_weight(s, k);
            want += w;
            want_pairs += w != 0;
        }
    conc_check c = {0};
    js_store_foreach_pair(g_store, check_pair, &c);
    assert_int_equal(c.bad, 0);
    assert_int_equal(c.pairs, want_pairs);
    assert_int_equal(c.sum, want);
    assert_int_equal(js_store_total_weight(g_store), want);
    for (int k = 0; k < NSTACKS; k++) expect_frames(g_store, atomic_load(&g_id[k]), g_stacks[k], g_depth[k]);
    js_store_destroy(g_store);
    g_store = NULL;
}

/* 8 threads and high-rate signal handlers add 200 stacks: ids agree, every weight is exact, no drops. */
static void test_concurrent_threads_and_signals(void **state UNUSED)
{
    build_stacks();
    sigset_t set, old;
    test_signals(&set);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask); /* SIGALRM may interrupt the SIGPROF handler and vice versa */
    assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
    assert_int_equal(sigaction(SIGPROF, &sa, NULL), 0);
    for (int r = 0; r < ROUNDS; r++) run_round(r);
    signal(SIGALRM, SIG_IGN); /* discards anything still pending */
    signal(SIGPROF, SIG_IGN);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    signal(SIGALRM, SIG_DFL);
    signal(SIGPROF, SIG_DFL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_insert_lookup),
        cmocka_unit_test(test_pair_sample_count),
        cmocka_unit_test(test_identical_stacks_share_id),
        cmocka_unit_test(test_distinct_stacks_distinct_ids),
        cmocka_unit_test(test_adjacent_method_ids_distinct),
        cmocka_unit_test(test_deep_variants_distinct),
        cmocka_unit_test(test_per_thread_attribution),
        cmocka_unit_test(test_foreach_sum_equals_total),
        cmocka_unit_test(test_frames_read_back_leaf_first),
        cmocka_unit_test(test_trace_invalid_ids),
        cmocka_unit_test(test_full_trace_table),
        cmocka_unit_test(test_full_pair_table),
        cmocka_unit_test(test_arena_limit_drops_stack_that_does_not_fit),
        cmocka_unit_test(test_arena_refusal_does_not_leak_space),
        cmocka_unit_test(test_reset_and_reuse),
        cmocka_unit_test(test_huge_capacity_is_usable_or_refused),
        cmocka_unit_test(test_journal_and_generation),
        cmocka_unit_test(test_concurrent_threads_and_signals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

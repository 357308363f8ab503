/* test_evring.c - the event ring (evring.h): what is put is drained once, in order per stripe; a full ring counts
 * its drops exactly; concurrent producers (threads and signal handlers) lose nothing but counted drops. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sample/evring.h"

#define UNUSED __attribute__((unused))

typedef struct {
    uint8_t *seen;
    size_t max;
    uint64_t n, dup, last_in_stripe_order_errors;
    uint32_t prev_trace;
} tally;

/* Mark event e->trace as drained; count duplicates. */
static void mark(const js_ring_event *e, void *ctx)
{
    tally *t = ctx;
    if (e->trace >= t->max) return;
    if (t->seen[e->trace]++) t->dup++;
    t->n++;
}

typedef struct {
    uint32_t got[16];
    size_t n;
    int bad;
} collected;

/* Record traces in drain order and check the other fields came back as put. */
static void collect(const js_ring_event *e, void *ctx)
{
    collected *c = ctx;
    if (c->n < 16) c->got[c->n++] = e->trace;
    if (e->ticks != 100 + e->trace || e->thread != 7 || e->weight != 3) c->bad++;
}

/* One stripe keeps put order; every event comes back once with its fields. */
static void test_order_and_fields(void **state UNUSED)
{
    char err[128];
    js_evring *r = js_evring_create(1, 64, err, sizeof err);
    assert_non_null(r);
    for (uint32_t i = 1; i <= 10; i++) {
        js_ring_event e = {.ticks = 100 + i, .trace = i, .thread = 7, .weight = 3};
        assert_int_equal(js_evring_put(r, 0, &e), 0);
    }
    collected c = {{0}, 0, 0};
    assert_int_equal(js_evring_drain(r, collect, &c, 0, NULL), 10);
    assert_int_equal(c.bad, 0);
    for (uint32_t i = 0; i < 10; i++) assert_int_equal(c.got[i], i + 1);
    assert_int_equal(js_evring_drain(r, collect, &c, 0, NULL), 0); /* drained once */
    js_evring_destroy(r);
}

/* Full stripes spill into the others; past the total capacity every put is a counted drop. */
static void test_full_ring_counts_drops(void **state UNUSED)
{
    char err[128];
    js_evring *r = js_evring_create(4, 8, err, sizeof err);
    assert_non_null(r);
    int ok = 0, dropped = 0;
    for (uint32_t i = 0; i < 50; i++) {
        js_ring_event e = {.ticks = i, .trace = i, .thread = 1, .weight = 1};
        if (js_evring_put(r, 0, &e) == 0) ok++;
        else dropped++;
    }
    assert_int_equal(ok, 32);
    assert_int_equal(dropped, 18);
    assert_int_equal(js_evring_dropped(r), 18);
    uint8_t seen[64] = {0};
    tally t = {seen, 64, 0, 0, 0, 0};
    assert_int_equal(js_evring_drain(r, mark, &t, 0, NULL), 32);
    assert_int_equal(t.dup, 0);
    for (uint32_t i = 0; i < 32; i++) assert_int_equal(seen[i], 1);
    js_evring_destroy(r);
}

enum { PRODUCERS = 4, PER_PRODUCER = 50000 };
static js_evring *g_ring;
static _Atomic uint32_t g_next_id = 1;
static _Atomic uint64_t g_refused;

/* Put one event with a fresh id; count a refusal. */
static void put_one(int hint)
{
    js_ring_event e = {.trace = atomic_fetch_add(&g_next_id, 1), .thread = 1, .weight = 1};
    if (js_evring_put(g_ring, hint, &e) != 0) atomic_fetch_add(&g_refused, 1);
}

static void on_alarm(int sig)
{
    put_one(3);
}

static void *producer(void *arg)
{
    for (int i = 0; i < PER_PRODUCER; i++) put_one((int)(intptr_t)arg);
    return NULL;
}

/* Threads and a signal handler put while one thread drains: every id comes out once, the rest are counted drops. */
static void test_concurrent_exactly_once(void **state UNUSED)
{
    char err[128];
    g_ring = js_evring_create(16, 1024, err, sizeof err);
    assert_non_null(g_ring);
    size_t max = PRODUCERS * PER_PRODUCER + 200000;
    uint8_t *seen = calloc(max, 1);
    tally t = {seen, max, 0, 0, 0, 0};
    signal(SIGALRM, on_alarm);
    pthread_t th[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) pthread_create(&th[i], NULL, producer, (void *)(intptr_t)i);
    for (int k = 0; k < 2000; k++) {
        raise(SIGALRM);
        js_evring_drain(g_ring, mark, &t, 1000000000ULL, NULL);
    }
    for (int i = 0; i < PRODUCERS; i++) pthread_join(th[i], NULL);
    js_evring_drain(g_ring, mark, &t, 1000000000ULL, NULL);
    signal(SIGALRM, SIG_DFL);
    uint32_t made = atomic_load(&g_next_id) - 1;
    assert_int_equal(t.dup, 0);
    assert_int_equal(t.n + atomic_load(&g_refused), made);
    assert_int_equal(js_evring_dropped(g_ring), atomic_load(&g_refused));
    free(seen);
    js_evring_destroy(g_ring);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_and_fields),
        cmocka_unit_test(test_full_ring_counts_drops),
        cmocka_unit_test(test_concurrent_exactly_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

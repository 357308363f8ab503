/* test_live.c - live's table of allocation samples (core/live.c) through a fake JNI environment whose weak references
 * point at flags: a full table costs a bounded number of checks a sample (all objects alive, or a few dying), room
 * freed by the collector is found again within a bounded number of samples, and every weak reference made is
 * deleted. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/live.h"

#define UNUSED __attribute__((unused))
#define OBJECTS 40000

static int g_alive[OBJECTS]; /* object i is &g_alive[i]; its weak reference too */
static long g_checks, g_made, g_deleted;
static struct JNINativeInterface_ g_fns;
static JNIEnv g_env = &g_fns;

static jweak JNICALL fake_new_weak(JNIEnv *env, jobject obj)
{
    g_made++;
    return obj;
}

static void JNICALL fake_delete_weak(JNIEnv *env, jweak ref)
{
    g_deleted++;
}

/* IsSameObject(ref, NULL): true once the object is collected. */
static jboolean JNICALL fake_same(JNIEnv *env, jobject a, jobject b)
{
    g_checks++;
    if (b) return a == b;
    return a && !*(int *)a ? JNI_TRUE : JNI_FALSE;
}

static int setup(void **state UNUSED)
{
    g_fns.NewWeakGlobalRef = fake_new_weak;
    g_fns.DeleteWeakGlobalRef = fake_delete_weak;
    g_fns.IsSameObject = fake_same;
    for (int i = 0; i < OBJECTS; i++) g_alive[i] = 1;
    return 0;
}

/* Sample object i (alive or not as g_alive says). */
static void track(int i)
{
    js_raw_frame f[2] = {{.method = (const void *)0x1000, .kind = JS_RF_JAVA}, {.method = (const void *)0x2000, .kind = JS_RF_JAVA}};
    js_live_track(&g_env, (jobject)&g_alive[i], f, 2, 1, 512);
}

static void test_full_table_bounded_checks(void **state UNUSED)
{
    js_live_enable(&g_env, 1);
    int next = 0;
    for (; next < JS_LIVE_MAX; next++) track(next);
    assert_int_equal(js_live_untracked(), 0);
    /* A cache filling up: every sampled object stays reachable, so no sample finds room. */
    long before = g_checks;
    const int extra = 20000;
    for (int k = 0; k < extra; k++) track(next++);
    assert_int_equal(js_live_untracked(), extra);
    long per_sample = (g_checks - before) / extra;
    if (per_sample > 32) fail_msg("a full table of live objects cost %ld checks a sample (at most 32)", per_sample);

    /* The collector frees half of the tracked objects: the table takes samples again within the backoff's bound. */
    for (int i = 0; i < JS_LIVE_MAX; i += 2) g_alive[i] = 0;
    int waited = 0;
    for (;;) {
        uint64_t u = js_live_untracked();
        track(next++);
        if (js_live_untracked() == u) break; /* tracked */
        if (++waited > 256) fail_msg("room freed by the collector unused after %d samples", waited);
    }
    uint64_t settled = js_live_untracked();
    for (int k = 1; k < JS_LIVE_MAX / 2; k++) track(next++); /* the rest of the freed half */
    assert_int_equal(js_live_untracked(), settled);
    track(next++); /* full again, all alive: untracked */
    assert_int_equal(js_live_untracked(), settled + 1);

    js_live_enable(&g_env, 0);
    assert_int_equal(g_deleted, g_made);
}

/* A cache evicting slowly: one tracked object dies before each new sample. Each sweep frees a little room; the sweeps
 * still cost a bounded number of checks a sample. */
static void test_slow_deaths_bounded_checks(void **state UNUSED)
{
    for (int i = 0; i < OBJECTS; i++) g_alive[i] = 1;
    js_live_enable(&g_env, 1);
    for (int i = 0; i < JS_LIVE_MAX; i++) track(i);
    long before = g_checks;
    const int samples = 4000;
    for (int k = 0; k < samples; k++) {
        g_alive[k] = 0;
        track(JS_LIVE_MAX + k);
    }
    long per_sample = (g_checks - before) / samples;
    printf("live, one tracked object dying a sample: %ld checks a sample, %llu of %d samples untracked\n", per_sample,
           (unsigned long long)js_live_untracked(), samples);
    if (per_sample > 32) fail_msg("a slowly emptying table cost %ld checks a sample (at most 32)", per_sample);
    if (js_live_untracked() * 100 > (uint64_t)samples * 99) fail_msg("the room freed was never used");
    js_live_enable(&g_env, 0);
    assert_int_equal(g_deleted, g_made);
}

/* Samples of objects already dead never pile up: a full table sweeps them out at once. */
static void test_dead_objects_swept(void **state UNUSED)
{
    js_live_enable(&g_env, 1);
    for (int i = 0; i < OBJECTS; i++) g_alive[i] = 1;
    int base = 30000;
    for (int i = 0; i < 4000; i++) track(base + i);
    for (int i = 0; i < JS_LIVE_MAX - 4000; i++) track(i);
    for (int i = 0; i < 4000; i++) g_alive[base + i] = 0;
    for (int i = 0; i < 4000; i++) track(100 + i); /* alive ones: each finds the room of a dead one */
    assert_int_equal(js_live_untracked(), 0);
    js_live_enable(&g_env, 0);
    assert_int_equal(g_deleted, g_made);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_table_bounded_checks),
        cmocka_unit_test(test_slow_deaths_bounded_checks),
        cmocka_unit_test(test_dead_objects_swept),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}

/* test_stats.c - the profiler counters (stats.h) and their text (stats_format.h): handler-time quantiles
 * over the linear and the logarithmic part of the histogram, and quantiles past its top shown as such. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/stats_format.h"
#include "sample/stats.h"

#define UNUSED __attribute__((unused))

/* Quantiles are bucket midpoints within a few percent of the recorded values, linear and logarithmic parts. */
static void test_quantiles(void **state UNUSED)
{
    js_stats_reset();
    for (int i = 0; i < 99; i++) js_stats_handler_ns(1000);
    js_stats_handler_ns(5000000); /* 5 ms: the logarithmic part */
    js_stats_snapshot s;
    js_stats_get(&s);
    assert_int_equal(s.handler_count, 100);
    assert_int_equal(s.handler_min_ns, 1000);
    assert_int_equal(s.handler_max_ns, 5000000);
    assert_true(s.handler_median_ns >= 1000 && s.handler_median_ns < 1025);
    js_stats_reset();
    for (int i = 0; i < 50; i++) js_stats_handler_ns(100);
    for (int i = 0; i < 50; i++) js_stats_handler_ns(300000); /* 300 us */
    js_stats_get(&s);
    assert_true(s.handler_p99_ns > 280000 && s.handler_p99_ns < 320000);
}

/* A quantile past the histogram's top is printed as ">TOP", never as a made-up value; min and max stay exact. */
static void test_overflow_is_shown_as_such(void **state UNUSED)
{
    js_stats_reset();
    for (int i = 0; i < 10; i++) js_stats_handler_ns(60ULL * 1000000000ULL); /* 60 s: past the top */
    js_stats_snapshot s;
    js_stats_get(&s);
    assert_true(s.handler_p99_ns == JS_STATS_OVER);
    char buf[1024], want[64];
    assert_int_equal(js_stats_format(&s, buf, sizeof buf), 0);
    snprintf(want, sizeof want, "p99=>%llu ", (unsigned long long)s.handler_hist_top_ns);
    if (!strstr(buf, want)) fail_msg("'%s' not in '%s'", want, buf);
    assert_non_null(strstr(buf, "max=60000000000 "));
    assert_non_null(strstr(buf, "min=60000000000 "));
}

/* Throttled samples are counted with their weight and shown. */
static void test_throttled(void **state UNUSED)
{
    js_stats_reset();
    js_stats_throttled(3);
    js_stats_throttled(2);
    js_stats_snapshot s;
    js_stats_get(&s);
    assert_int_equal(s.throttled, 2);
    assert_int_equal(s.throttled_weight, 5);
    char buf[1024];
    assert_int_equal(js_stats_format(&s, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "throttled=2 "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantiles),
        cmocka_unit_test(test_overflow_is_shown_as_such),
        cmocka_unit_test(test_throttled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_jfr_traces.c - the JFR writer's stack traces (jfr_write.h): a stack is written once per chunk whatever keys
 * name it (the store's key of a stack changes with every store generation), StackTrace keys never those of the
 * previous chunk, traces written in checkpoints of their own within a chunk once trace_buffer bytes wait (chained
 * to the chunk's last checkpoint), max_size kept with such checkpoints, and a chunk ended once its index of traces
 * is full. Files are checked with the parser of jfr_parse.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jfr/jfr_meta.h"
#include "jfr/jfr_read.h"
#include "jfr/jfr_write.h"

#define UNUSED __attribute__((unused))
#define T0 1000000000000ULL
#define MS 1000000ULL

#include "jfr_parse.h"

static char tmpdir[64];

static const char *tmp(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

/* ---- a source: key k names stack k % stacks (so `stacks` distinct stacks under any number of keys); stack s has
 * 5 + s % 40 frames over methods 1..60, lines and bcis from s ---- */

typedef struct {
    uint64_t stacks;
    int pulls;
} src_ctx;

static int stack_trace(void *ctx, uint64_t key, js_jfr_frame *out, int max, int *truncated)
{
    src_ctx *c = ctx;
    c->pulls++;
    uint64_t s = key % c->stacks;
    int n = 5 + (int)(s % 40);
    *truncated = n > max;
    if (n > max) n = max;
    for (int i = 0; i < n; i++)
        out[i] = (js_jfr_frame){1 + (s * 7 + (uint64_t)i * 13) % 60, (int32_t)(10 + (s + (uint64_t)i) % 300),
                                (int32_t)((s * 3 + (uint64_t)i) % 50), (uint8_t)(i % 3)};
    return n;
}

static int stack_method(void *ctx, uint64_t key, js_jfr_method *out)
{
    static char names[64][16];
    snprintf(names[key % 64], sizeof names[0], "m%llu", (unsigned long long)key);
    *out = (js_jfr_method){"pkg/Cls", names[key % 64], "()V", 1, 0};
    return 0;
}

static int stack_thread(void *ctx, uint32_t id, js_jfr_thread *out)
{
    *out = (js_jfr_thread){"worker", id, "worker", id};
    return 0;
}

static js_jfr_writer *open_ok(const char *path, const js_jfr_options *o, src_ctx *c)
{
    js_jfr_source src = {c, stack_trace, stack_method, stack_thread};
    char err[512] = "";
    js_jfr_writer *w = js_jfr_open(path, o, &src, T0, err, sizeof err);
    if (!w) fail_msg("js_jfr_open: %s", err);
    return w;
}

static void sample_ok(js_jfr_writer *w, uint64_t ticks, uint64_t key)
{
    char err[512] = "";
    if (js_jfr_execution_sample(w, ticks, 1, key, JS_JFR_STATE_RUNNABLE, 1, err, sizeof err) != 0) fail_msg("%s", err);
}

static void close_ok(js_jfr_writer *w, uint64_t ticks)
{
    char err[512] = "";
    if (js_jfr_close(w, ticks, err, sizeof err) != 0) fail_msg("%s", err);
}

/* The cpu samples of a recording, read by the agent's reader, as (stack, count) lines. */
static long long read_events(const char *path)
{
    js_profile p;
    js_profile_init(&p);
    js_jfr_read_opts o = {.kind = JS_JFR_READ_CPU};
    js_jfr_read_stats st;
    char err[512];
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    if (js_jfr_read_fd(fd, path, &o, &p, &st, err, sizeof err) != 0) fail_msg("%s", err);
    close(fd);
    js_profile_free(&p);
    return (long long)st.events;
}

/* ---- tests ---- */

/* 10 distinct stacks under 200 keys (as a store names a stack anew in every generation): one StackTrace entry per
 * stack, every key asked once, and each event still shows its own stack. */
static void test_stack_written_once_per_chunk(void **state UNUSED)
{
    src_ctx c = {10, 0};
    js_jfr_writer *w = open_ok(tmp("once.jfr"), NULL, &c);
    for (uint64_t k = 1; k <= 200; k++) sample_ok(w, T0 + k * MS, k);
    for (uint64_t k = 1; k <= 200; k++) sample_ok(w, T0 + (200 + k) * MS, k); /* known keys: no pull */
    js_jfr_stats st;
    js_jfr_get_stats(w, &st);
    close_ok(w, T0 + 500 * MS);
    assert_int_equal(c.pulls, 200);
    assert_int_equal(st.trace_pulls, 200);
    assert_int_equal(st.traces, 10);
    jfr *j = jp_parse_file(tmp("once.jfr")); /* also checks each stack is once in the chunk */
    assert_int_equal(j->chunks, 1);
    assert_int_equal(j->n[P_TRACE], 10);
    assert_int_equal(j->samples, 400);
    for (size_t e = 0; e < j->nev; e++) { /* event e names key e % 200 + 1: stack (e % 200 + 1) % 10, 5 + s frames */
        const entry *t = jp_find(j, P_TRACE, j->ev_trace[e]);
        assert_non_null(t);
        assert_int_equal(t->b, 5 + (e % 200 + 1) % 10);
    }
    free(j);
}

/* Many chunks over the same stacks: each chunk writes them again (every chunk is complete) under keys none of which
 * the previous chunk used (the parser checks), and the keys stay small (a few varint bytes per event). */
static void test_keys_per_chunk(void **state UNUSED)
{
    src_ctx c = {50, 0};
    js_jfr_options o = {.chunk_time_ns = 100 * MS};
    js_jfr_writer *w = open_ok(tmp("keys.jfr"), &o, &c);
    char err[256];
    for (uint64_t i = 0; i < 3000; i++) {
        sample_ok(w, T0 + i * MS, 1 + i % 97);
        assert_int_equal(js_jfr_maybe_rotate(w, T0 + i * MS, err, sizeof err), 0);
    }
    js_jfr_stats st;
    js_jfr_get_stats(w, &st);
    close_ok(w, T0 + 3000 * MS);
    assert_true(st.chunks >= 20);
    assert_int_equal(st.traces, 50 * st.chunks);
    jfr *j = jp_parse_file(tmp("keys.jfr"));
    assert_int_equal((uint64_t)j->chunks, st.chunks);
    for (size_t i = 0; i < j->n[P_TRACE]; i++) assert_true(j->e[P_TRACE][i].key <= 100);
    free(j);
}

/* trace_buffer: stacks go to the file in checkpoints of their own inside the chunk; the chunk's checkpoints are
 * chained from its last one, the events resolve against all of them, and readers see every event. */
static void test_traces_flushed_within_chunk(void **state UNUSED)
{
    src_ctx c = {300, 0};
    js_jfr_options o = {.trace_buffer = 512};
    js_jfr_writer *w = open_ok(tmp("flushed.jfr"), &o, &c);
    for (uint64_t k = 1; k <= 900; k++) sample_ok(w, T0 + k * MS, k);
    js_jfr_stats st;
    js_jfr_get_stats(w, &st);
    close_ok(w, T0 + 1000 * MS);
    assert_int_equal(st.chunks, 1);
    assert_int_equal(st.traces, 300);
    jfr *j = jp_parse_file(tmp("flushed.jfr"));
    assert_int_equal(j->chunks, 1);
    assert_true(j->checkpoints > 20);
    assert_int_equal(j->n[P_TRACE], 300);
    assert_int_equal(j->samples, 900);
    free(j);
    assert_int_equal(read_events(tmp("flushed.jfr")), 900);
}

/* max_size holds when stacks are written in checkpoints of their own: a sweep of caps over many distinct stacks,
 * each file within its cap, complete, and filled to at least 60%. */
static void test_max_size_with_flushed_traces(void **state UNUSED)
{
    for (uint64_t cap = 20000; cap <= 160000; cap = cap * 3 / 2) {
        src_ctx c = {5000, 0};
        js_jfr_options o = {.max_size = cap, .chunk_size = cap / 3, .trace_buffer = 700};
        js_jfr_writer *w = open_ok(tmp("capflush.jfr"), &o, &c);
        char err[256];
        for (uint64_t i = 0; i < 30000; i++) {
            sample_ok(w, T0 + i * MS / 10, 1 + i % 5000);
            if (i % 100 == 0) assert_int_equal(js_jfr_maybe_rotate(w, T0 + i * MS / 10, err, sizeof err), 0);
        }
        js_jfr_stats st;
        js_jfr_get_stats(w, &st);
        assert_true(st.dropped_by_cap > 0);
        close_ok(w, T0 + 3000 * MS);
        struct stat sb;
        assert_int_equal(stat(tmp("capflush.jfr"), &sb), 0);
        if (sb.st_size > (off_t)cap || sb.st_size < (off_t)(cap * 6 / 10))
            fail_msg("cap %llu: file %lld bytes", (unsigned long long)cap, (long long)sb.st_size);
        jfr *j = jp_parse_file(tmp("capflush.jfr"));
        assert_int_equal(j->samples, st.events);
        free(j);
    }
}

/* A chunk whose index of traces is full (128 Ki keys) is due: the writer's memory for it stays bounded. */
static void test_full_index_ends_chunk(void **state UNUSED)
{
    src_ctx c = {1ULL << 40, 0}; /* every key its own stack */
    js_jfr_writer *w = open_ok(tmp("index.jfr"), NULL, &c);
    char err[256];
    uint64_t n = 140000;
    for (uint64_t k = 1; k <= n; k++) {
        sample_ok(w, T0 + k * 1000, k);
        if (k % 1000 == 0) assert_int_equal(js_jfr_maybe_rotate(w, T0 + k * 1000, err, sizeof err), 0);
    }
    js_jfr_stats st;
    js_jfr_get_stats(w, &st);
    close_ok(w, T0 + n * 1000 + MS);
    assert_int_equal(st.chunks, 2);
    assert_int_equal(read_events(tmp("index.jfr")), (long long)n);
}

/* ---- setup ---- */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int setup(void **state UNUSED)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_jfr_traces.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state UNUSED)
{
    return nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stack_written_once_per_chunk),
        cmocka_unit_test(test_keys_per_chunk),
        cmocka_unit_test(test_traces_flushed_within_chunk),
        cmocka_unit_test(test_max_size_with_flushed_traces),
        cmocka_unit_test(test_full_index_ends_chunk),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

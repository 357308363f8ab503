/* test_jfr_write.c - the JFR writer (jfr_write.h): chunk headers, record sizes, metadata, the
 * checkpoints' pools and references, weights, multi-chunk key stability, the max_size cap and
 * write errors. Files are checked with a small parser written from the format notes (jfr_parse.h),
 * independent of the writer's code; the JDK's own `jfr` tool is exercised by
 * native-tests/jfr_tool_check.sh. The writer's handling of stack traces is test_jfr_traces.c's. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jfr/jfr_meta.h"
#include "jfr/jfr_write.h"

#define UNUSED __attribute__((unused))
#define T0 1000000000000ULL /* start ticks of every recording (ns) */
#define MS 1000000ULL
#define LONG_REPEAT 5000
#define DEEP 100
#define NTRACES 6

static char tmpdir[64];
static char long_name[2 + 2 * LONG_REPEAT + 1]; /* "Lx" + "é" x 5000 = 10002 bytes */

/* ---- fixture source ---- */

typedef struct {
    uint64_t key;
    const char *cls, *name, *sig;
} fx_meth;

static const fx_meth methods[] = {
    {11, "java/lang/Thread", "run", "()V"},
    {12, "com/example/App", "main", "([Ljava/lang/String;)V"},
    {13, "com/example/\xc3\x9cn\xc3\xaf", "m\xc3\xa9" "thode_\xce\xbb", "()V"},
    {14, "com/example/Long", long_name, "()V"},
    {15, "", "[unknown_Java]", ""},
    {16, "Default", "run", "()V"},
};
#define NMETHODS (sizeof methods / sizeof methods[0])

/* Traces 1..5 leaf first as {method, type}; trace 5 is DEEP frames; trace 6 is unknown. */
static const uint64_t trace_methods[NTRACES][4] = {{12, 11}, {13, 12, 11}, {15, 11}, {14, 16}, {0}, {0}};
static const uint8_t trace_types[NTRACES][4] = {{0, 2}, {6, 0, 1}, {4, 1}, {1, 0}, {0}, {0}};

typedef struct {
    int unknown_all; /* every lookup fails */
    int calls;
} fx_ctx;

static int fx_trace(void *ctx, uint64_t id, js_jfr_frame *out, int max, int *truncated)
{
    fx_ctx *c = ctx;
    c->calls++;
    if (c->unknown_all || id < 1 || id > 5) return -1;
    int n = 0;
    if (id == 5) n = DEEP;
    else while (n < 4 && trace_methods[id - 1][n]) n++;
    *truncated = n > max;
    if (n > max) n = max;
    for (int i = 0; i < n; i++) {
        uint64_t m = id == 5 ? 11 + (uint64_t)(i % 2) : trace_methods[id - 1][i];
        out[i] = (js_jfr_frame){m, i == 0 ? -1 : 10 + i, i == 0 ? -1 : i, id == 5 ? 0 : trace_types[id - 1][i]};
    }
    return n;
}

static int fx_method(void *ctx, uint64_t key, js_jfr_method *out)
{
    fx_ctx *c = ctx;
    c->calls++;
    for (size_t i = 0; i < NMETHODS && !c->unknown_all; i++)
        if (methods[i].key == key) {
            *out = (js_jfr_method){methods[i].cls, methods[i].name, methods[i].sig, 1, 0};
            return 0;
        }
    return -1;
}

static int fx_thread(void *ctx, uint32_t id, js_jfr_thread *out)
{
    fx_ctx *c = ctx;
    c->calls++;
    if (c->unknown_all || id < 1 || id > 2) return -1;
    *out = id == 1 ? (js_jfr_thread){"main", 100, "main", 1} : (js_jfr_thread){"GC Thread#0", 101, NULL, 0};
    return 0;
}

static fx_ctx ctx_known, ctx_unknown = {1, 0};
static const js_jfr_source src_known = {&ctx_known, fx_trace, fx_method, fx_thread};
static const js_jfr_source src_unknown = {&ctx_unknown, fx_trace, fx_method, fx_thread};
static const js_jfr_setting settings[] = {{"event", "cpu"}, {"interval", "10ms"}};

#include "jfr_parse.h"

/* ---- helpers ---- */

static const char *tmp(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

static long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

static js_jfr_writer *open_ok(const char *path, const js_jfr_options *o, const js_jfr_source *src)
{
    char err[512] = "";
    js_jfr_writer *w = js_jfr_open(path, o, src, T0, err, sizeof err);
    if (!w) print_error("js_jfr_open: %s\n", err);
    assert_non_null(w);
    return w;
}

static void sample_ok(js_jfr_writer *w, uint64_t ticks, uint32_t thread, uint32_t trace, uint32_t weight)
{
    char err[512] = "";
    int rc = js_jfr_execution_sample(w, ticks, thread, trace, JS_JFR_STATE_RUNNABLE, weight, err, sizeof err);
    if (rc) print_error("sample: %s\n", err);
    assert_int_equal(rc, 0);
}

static void close_ok(js_jfr_writer *w, uint64_t ticks)
{
    char err[512] = "";
    int rc = js_jfr_close(w, ticks, err, sizeof err);
    if (rc) print_error("close: %s\n", err);
    assert_int_equal(rc, 0);
}

/* Writes n samples cycling over threads 1..3 and traces 1..6 (weights 1..3); returns the weight sum. */
static uint64_t write_mix(js_jfr_writer *w, int n, int rotate)
{
    uint64_t sum = 0;
    char err[512];
    for (int i = 0; i < n; i++) {
        uint32_t weight = 1 + (uint32_t)i % 3;
        sample_ok(w, T0 + (uint64_t)i * MS, 1 + (uint32_t)i % 3, 1 + (uint32_t)(i / 3) % NTRACES, weight);
        sum += weight;
        if (rotate) assert_int_equal(js_jfr_maybe_rotate(w, T0 + (uint64_t)i * MS, err, sizeof err), 0);
    }
    return sum;
}

/* ---- tests ---- */

/* Header fields, record sizes, pools and references of a one-chunk recording of the fixture. */
static void test_single_chunk(void **state UNUSED)
{
    js_jfr_options o = {.settings = settings, .nsettings = 2, .recording_name = "test"};
    js_jfr_writer *w = open_ok(tmp("single.jfr"), &o, &src_known);
    uint64_t sum = write_mix(w, 90, 0);
    js_jfr_stats st;
    js_jfr_get_stats(w, &st);
    assert_int_equal(st.events, sum);
    assert_int_equal(st.chunks, 1);
    assert_int_equal(st.dropped_by_cap, 0);
    close_ok(w, T0 + 100 * MS);
    jfr *j = jp_parse_file(tmp("single.jfr"));
    assert_int_equal(j->chunks, 1);
    assert_int_equal(j->samples, sum);
    assert_int_equal(j->settings, 2);
    assert_int_equal(j->recordings, 1);
    assert_int_equal(j->max_depth, DEEP);
    assert_int_equal(j->truncated, 0);
    assert_int_equal(j->n[P_TRACE], NTRACES);
    assert_int_equal(j->n[P_THREAD], 3);
    assert_int_equal(j->null_java_names, 2); /* "GC Thread#0" and the unknown thread */
    assert_true(j->long_name_ok);            /* cut to 8190 bytes: 8191 would split an "é" */
    assert_true(j->non_ascii_ok);
    assert_true(j->pseudo_ok);
    assert_true(j->unknown_method); /* the placeholder frame of unknown trace 6 */
    assert_true(j->unknown_thread);
    assert_true(j->max_symbol <= JS_JFR_STR_MAX);
    free(j);
}

/* The header's size, offsets and times for a single chunk. */
static void test_header_fields(void **state UNUSED)
{
    js_jfr_writer *w = open_ok(tmp("header.jfr"), NULL, &src_known);
    sample_ok(w, T0 + 5 * MS, 1, 1, 1);
    close_ok(w, T0 + 250 * MS);
    FILE *fp = fopen(tmp("header.jfr"), "rb");
    uint8_t h[68];
    assert_int_equal(fread(h, 1, 68, fp), 68);
    fclose(fp);
    assert_int_equal(jp_be64(h + 8), file_size(tmp("header.jfr")));
    assert_int_equal(jp_be64(h + 40), 250 * MS); /* duration */
    assert_int_equal(jp_be64(h + 48), 1000000000ULL); /* startTicks: ns since 1 s before the recording start */
    uint64_t start_ns = jp_be64(h + 32);         /* wall clock at T0 on the monotonic clock */
    struct timespec rt, mt;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mt);
    int64_t expect = (int64_t)rt.tv_sec * 1000000000LL + rt.tv_nsec - (mt.tv_sec * 1000000000LL + mt.tv_nsec) + (int64_t)T0;
    assert_true(llabs((long long)((int64_t)start_ns - expect)) < 1000000000LL);
    assert_int_equal(h[67] & 2, 2); /* the last chunk is flagged final */
    assert_int_equal(h[64], 0);
}

/* A sample of weight w is w identical events, capped at 1000; weight 0 writes nothing. */
static void test_weights(void **state UNUSED)
{
    js_jfr_writer *w = open_ok(tmp("weights.jfr"), NULL, &src_known);
    sample_ok(w, T0, 1, 1, 7);
    sample_ok(w, T0 + MS, 2, 2, 5000);
    sample_ok(w, T0 + 2 * MS, 2, 3, 0);
    js_jfr_stats st;
    js_jfr_get_stats(w, &st);
    assert_int_equal(st.events, 1007);
    close_ok(w, T0 + 3 * MS);
    jfr *j = jp_parse_file(tmp("weights.jfr"));
    assert_int_equal(j->samples, 1007);
    assert_int_equal(j->n[P_TRACE], 2); /* trace 3 had no event */
    free(j);
}

/* Small chunks: every chunk complete with its own metadata, settings and pools; method content
 * stable per key, symbol keys disjoint from the previous chunk's. */
static void test_multi_chunk(void **state UNUSED)
{
    js_jfr_options o = {.chunk_size = 8192, .settings = settings, .nsettings = 2};
    js_jfr_writer *w = open_ok(tmp("multi.jfr"), &o, &src_known);
    uint64_t sum = write_mix(w, 3000, 1);
    js_jfr_stats st;
    js_jfr_get_stats(w, &st);
    assert_true(st.chunks > 3);
    close_ok(w, T0 + 4000 * MS);
    jfr *j = jp_parse_file(tmp("multi.jfr"));
    assert_int_equal(j->chunks, st.chunks);
    assert_int_equal(j->samples, sum);
    assert_int_equal(j->settings, 2 * st.chunks);
    assert_int_equal(j->recordings, st.chunks);
    free(j);
}

/* A dump ends the chunk now: the file read while the writer is still open holds every sample so far in complete
 * chunks; a chunk with no event is not ended; the writer goes on into the next chunk. With a type_base every type id
 * of the file is moved (the parser reads the ids from the metadata) and the samples read the same. */
static void test_end_chunk(void **state UNUSED)
{
    for (uint32_t base = 0; base <= JS_JFR_TYPE_BASE_MAX; base += JS_JFR_TYPE_BASE_MAX) {
        js_jfr_options o = {.settings = settings, .nsettings = 2, .type_base = base};
        jp_type_base = base;
        js_jfr_writer *w = open_ok(tmp("dump.jfr"), &o, &src_known);
        uint64_t sum = write_mix(w, 300, 0);
        char err[512];
        assert_int_equal(js_jfr_end_chunk(w, T0 + 400 * MS, err, sizeof err), 0);
        assert_int_equal(js_jfr_end_chunk(w, T0 + 401 * MS, err, sizeof err), 0); /* nothing new: no empty chunk */
        jfr *j = jp_parse_file(tmp("dump.jfr")); /* the file as a reader finds it now */
        assert_int_equal(j->chunks, 1);
        assert_int_equal(j->samples, sum);
        free(j);
        sum += write_mix(w, 30, 0);
        close_ok(w, T0 + 500 * MS);
        j = jp_parse_file(tmp("dump.jfr"));
        assert_int_equal(j->chunks, 2);
        assert_int_equal(j->samples, sum);
        free(j);
    }
    jp_type_base = 0;
}

/* chunk_time rotates on the tick clock; an idle chunk is not rotated. */
static void test_chunk_time(void **state UNUSED)
{
    js_jfr_options o = {.chunk_time_ns = 100 * MS};
    char err[512];
    js_jfr_writer *w = open_ok(tmp("time.jfr"), &o, &src_known);
    for (int i = 0; i < 10; i++) {
        sample_ok(w, T0 + (uint64_t)i * 50 * MS, 1, 1, 1);
        assert_int_equal(js_jfr_maybe_rotate(w, T0 + (uint64_t)i * 50 * MS, err, sizeof err), 0);
    }
    js_jfr_stats st;
    js_jfr_get_stats(w, &st);
    assert_int_equal(st.chunks, 5); /* rotated at 100, 200, 300, 400 ms */
    assert_int_equal(js_jfr_maybe_rotate(w, T0 + 2000 * MS, err, sizeof err), 0);
    assert_int_equal(js_jfr_maybe_rotate(w, T0 + 4000 * MS, err, sizeof err), 0); /* idle: no new chunk */
    js_jfr_get_stats(w, &st);
    assert_int_equal(st.chunks, 6);
    close_ok(w, T0 + 5000 * MS);
    jfr *j = jp_parse_file(tmp("time.jfr"));
    assert_int_equal(j->chunks, 6);
    assert_int_equal(j->samples, 10);
    free(j);
}

/* max_size: the file stays within the cap, dropped events are counted, the file is complete. */
static void test_max_size(void **state UNUSED)
{
    uint64_t caps[] = {20000, 30000, 60000};
    for (size_t c = 0; c < 3; c++) {
        js_jfr_options o = {.max_size = caps[c], .chunk_size = 16384};
        js_jfr_writer *w = open_ok(tmp("capped.jfr"), &o, &src_known);
        uint64_t sum = write_mix(w, 4000, 1);
        js_jfr_stats st;
        js_jfr_get_stats(w, &st);
        assert_true(st.dropped_by_cap > 0);
        assert_int_equal(st.events + st.dropped_by_cap, sum);
        close_ok(w, T0 + 5000 * MS);
        long long size = file_size(tmp("capped.jfr"));
        assert_true(size <= (long long)caps[c]);
        assert_true(size > (long long)caps[c] * 3 / 4); /* the estimate is not absurdly generous */
        jfr *j = jp_parse_file(tmp("capped.jfr"));
        assert_int_equal(j->samples, st.events);
        free(j);
    }
}

/* Many distinct traces (id 1..): 3..40 frames over 300 methods, lines and bcis from -1 to 2^31-1. */
static int sweep_trace(void *ctx, uint64_t key, js_jfr_frame *out, int max, int *truncated)
{
    uint32_t id = (uint32_t)key;
    int n = 3 + (int)(id * 7 % 38);
    *truncated = n > max;
    if (n > max) n = max;
    static const int32_t vals[] = {-1, 0, 1, 127, 128, 16384, 2097152, 0x7fffffff};
    for (int i = 0; i < n; i++)
        out[i] = (js_jfr_frame){1 + (id * 31 + (uint32_t)i * 17) % 300, vals[(id + (uint32_t)i) % 8],
                                vals[(id * 3 + (uint32_t)i) % 8], (uint8_t)(i % 7)};
    return n;
}

static int sweep_method(void *ctx, uint64_t key, js_jfr_method *out)
{
    static char names[300][48];
    snprintf(names[key % 300], sizeof names[0], "method_%llu_with_a_longer_name", (unsigned long long)key);
    *out = (js_jfr_method){key % 3 ? "com/example/pkg/SomeClass" : "Top", names[key % 300], "(I)V", 1, 0};
    return 0;
}

/* max_size holds for any cap: a sweep of caps over many distinct deep traces, each file within its cap, complete,
 * and filled to at least 60% (the estimate of the checkpoint is exact for frames, bounded for names). */
static void test_max_size_sweep(void **state UNUSED)
{
    static const js_jfr_source src = {&ctx_known, sweep_trace, sweep_method, fx_thread};
    for (uint64_t cap = 20000; cap <= 160000; cap = cap * 3 / 2) { /* the parser here holds PMAX*4 frames */
        js_jfr_options o = {.max_size = cap, .chunk_size = cap / 3};
        js_jfr_writer *w = open_ok(tmp("sweep.jfr"), &o, &src);
        char err[256];
        for (uint32_t i = 0; i < 30000; i++)
            assert_int_equal(js_jfr_execution_sample(w, T0 + i * MS / 10, 1 + i % 2, 1 + i % 5000, 5, 1, err, sizeof err),
                             0);
        if (cap < 100000) assert_int_equal(js_jfr_maybe_rotate(w, T0 + 2000 * MS, err, sizeof err), 0);
        js_jfr_stats st;
        js_jfr_get_stats(w, &st);
        assert_true(st.dropped_by_cap > 0);
        close_ok(w, T0 + 3000 * MS);
        long long size = file_size(tmp("sweep.jfr"));
        if (getenv("JFR_SWEEP_VERBOSE") || size > (long long)cap || size < (long long)cap * 6 / 10)
            print_error("cap %llu: file %lld bytes\n", (unsigned long long)cap, size);
        assert_true(size <= (long long)cap);
        assert_true(size >= (long long)cap * 6 / 10);
        jfr *j = jp_parse_file(tmp("sweep.jfr"));
        assert_int_equal(j->samples, st.events);
        free(j);
    }
}

/* A cap below the size of an empty recording: no event is written, the file is still valid. */
static void test_max_size_tiny(void **state UNUSED)
{
    js_jfr_options o = {.max_size = 100};
    js_jfr_writer *w = open_ok(tmp("tiny.jfr"), &o, &src_known);
    sample_ok(w, T0, 1, 1, 3);
    js_jfr_stats st;
    js_jfr_get_stats(w, &st);
    assert_int_equal(st.events, 0);
    assert_int_equal(st.dropped_by_cap, 3);
    close_ok(w, T0 + MS);
    jfr *j = jp_parse_file(tmp("tiny.jfr"));
    assert_int_equal(j->samples, 0);
    assert_int_equal(j->chunks, 1);
    free(j);
}

/* Frames beyond max_depth are cut and the trace is marked truncated. */
static void test_truncated(void **state UNUSED)
{
    js_jfr_options o = {.max_depth = 10};
    js_jfr_writer *w = open_ok(tmp("trunc.jfr"), &o, &src_known);
    sample_ok(w, T0, 1, 5, 1);
    close_ok(w, T0 + MS);
    jfr *j = jp_parse_file(tmp("trunc.jfr"));
    assert_int_equal(j->max_depth, 10);
    assert_int_equal(j->truncated, 1);
    free(j);
}

/* A source that knows nothing: placeholders keep every reference resolvable. */
static void test_unknown_source(void **state UNUSED)
{
    js_jfr_writer *w = open_ok(tmp("unknown.jfr"), NULL, &src_unknown);
    write_mix(w, 30, 0);
    close_ok(w, T0 + 40 * MS);
    jfr *j = jp_parse_file(tmp("unknown.jfr"));
    assert_true(j->unknown_method && j->unknown_thread);
    assert_int_equal(j->n[P_METHOD], 1);
    free(j);
}

/* Ids the format cannot carry are refused with a message. */
static void test_invalid_ids(void **state UNUSED)
{
    char err[512] = "";
    js_jfr_writer *w = open_ok(tmp("invalid.jfr"), NULL, &src_known);
    assert_int_equal(js_jfr_execution_sample(w, T0, 0, 1, 5, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "invalid"));
    assert_int_equal(js_jfr_execution_sample(w, T0, 0x80000000u, 1, 5, 1, err, sizeof err), -1);
    assert_int_equal(js_jfr_execution_sample(w, T0, 1, 0, 5, 1, err, sizeof err), -1);
    close_ok(w, T0);
}

/* Opening /dev/full: the first write fails with ENOSPC, reported as one line. */
static void test_dev_full(void **state UNUSED)
{
    char err[512] = "";
    js_jfr_writer *w = js_jfr_open("/dev/full", NULL, &src_known, T0, err, sizeof err);
    assert_null(w);
    assert_string_equal(err, "cannot write JFR '/dev/full': No space left on device");
}

/* A path in a missing directory. */
static void test_unwritable_path(void **state UNUSED)
{
    char err[512] = "";
    js_jfr_writer *w = js_jfr_open("/nonexistent-dir/x.jfr", NULL, &src_known, T0, err, sizeof err);
    assert_null(w);
    assert_string_equal(err, "cannot write JFR '/nonexistent-dir/x.jfr': directory '/nonexistent-dir' does not exist");
}

static struct rlimit saved_fsize;
static void (*saved_xfsz)(int);

/* Restores the file size limit and SIGXFSZ even if the test failed half-way. */
static int restore_fsize(void **state UNUSED)
{
    setrlimit(RLIMIT_FSIZE, &saved_fsize);
    signal(SIGXFSZ, saved_xfsz);
    return 0;
}

/* A write failing mid-recording (file size limit): sample and close return the error, no crash. */
static void test_write_error_midway(void **state UNUSED)
{
    struct rlimit lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved_fsize), 0);
    saved_xfsz = signal(SIGXFSZ, SIG_IGN);
    lim = saved_fsize;
    lim.rlim_cur = 100000;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    char err[512] = "";
    js_jfr_writer *w = open_ok(tmp("fsize.jfr"), NULL, &src_known);
    int rc = 0, i;
    for (i = 0; i < 200000 && rc == 0; i++)
        rc = js_jfr_execution_sample(w, T0 + (uint64_t)i, 1, 1, 5, 1, err, sizeof err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "cannot write JFR '"));
    assert_non_null(strstr(err, "File too large"));
    err[0] = 0;
    assert_int_equal(js_jfr_close(w, T0 + (uint64_t)i, err, sizeof err), -1);
    assert_non_null(strstr(err, "File too large"));
}

/* ---- traces taken at their first event, line numbers, symbolic links ---- */

/* A source whose traces change: generation 0 gives trace id frames {12, 11}, generation 1 {13, 16}; `fail`
 * makes every lookup fail. Counts the trace calls per id. */
typedef struct {
    int gen, fail, calls[4];
} mut_ctx;

static int mut_trace(void *ctx, uint64_t id, js_jfr_frame *out, int max, int *truncated)
{
    mut_ctx *c = ctx;
    c->calls[id & 3]++;
    if (c->fail || max < 2) return -1;
    *truncated = 0;
    out[0] = (js_jfr_frame){c->gen ? 13 : 12, -1, 3, 1};
    out[1] = (js_jfr_frame){c->gen ? 16 : 11, 20 + (int32_t)id, 7, 0};
    return 2;
}

/* Methods and threads of the fixture, whatever the trace source's state. */
static int mut_method(void *ctx, uint64_t key, js_jfr_method *out)
{
    return fx_method(&ctx_known, key, out);
}

static int mut_thread(void *ctx, uint32_t id, js_jfr_thread *out)
{
    return fx_thread(&ctx_known, id, out);
}

/* "name;name" of the stack of the k-th ExecutionSample of the last parsed chunk (leaf first), lines into lines[] (up
 * to 4). */
static void event_names(jfr *j, size_t k, char *out, size_t outlen, uint64_t *lines)
{
    size_t o = 0, n = 0;
    assert_true(k < j->nev);
    out[0] = 0;
    for (size_t i = 0; i < j->nframes; i++) {
        if (j->frames[i].key != j->ev_trace[k]) continue;
        const entry *m = jp_find(j, P_METHOD, j->frames[i].a);
        assert_non_null(m);
        const entry *name = jp_symbol(j, m->b);
        o += (size_t)snprintf(out + o, outlen - o, "%s%.*s", o ? ";" : "", (int)name->slen, name->s);
        if (n < 4) lines[n++] = j->frames[i].c;
    }
}

/* The frames of a trace are taken when its first event is written: a source that later returns other frames for
 * the same id, or fails, does not change the file; one trace call per id and chunk; a new chunk asks again. */
static void test_trace_copied_at_event(void **state UNUSED)
{
    for (int capped = 0; capped < 2; capped++) { /* max_size takes the size-estimate path */
        mut_ctx c = {0};
        js_jfr_source src = {&c, mut_trace, mut_method, mut_thread};
        js_jfr_options o = {.max_size = capped ? 1000000 : 0};
        js_jfr_writer *w = open_ok(tmp("eager.jfr"), &o, &src);
        sample_ok(w, T0, 1, 1, 2);
        sample_ok(w, T0 + MS, 1, 2, 1);
        c.gen = 1; /* the producer reuses ids 1 and 2 for other stacks */
        sample_ok(w, T0 + 2 * MS, 2, 1, 1);
        c.fail = 1; /* ... or forgets them */
        sample_ok(w, T0 + 3 * MS, 2, 2, 1);
        assert_int_equal(c.calls[1], 1);
        assert_int_equal(c.calls[2], 1);
        close_ok(w, T0 + 4 * MS);
        jfr *j = jp_parse_file(tmp("eager.jfr"));
        char names[128];
        uint64_t lines[4];
        assert_int_equal(j->samples, 5);
        assert_int_equal(j->n[P_TRACE], 2);
        static const size_t of_id1[] = {0, 1, 3}, of_id2[] = {2, 4}; /* events of ids 1 and 2 */
        for (size_t k = 0; k < 3; k++) {
            event_names(j, of_id1[k], names, sizeof names, lines);
            assert_string_equal(names, "main;run"); /* methods 12, 11: generation 0 */
            assert_int_equal(lines[1], 21);
        }
        for (size_t k = 0; k < 2; k++) {
            event_names(j, of_id2[k], names, sizeof names, lines);
            assert_string_equal(names, "main;run");
            assert_int_equal(lines[1], 22);
        }
        free(j);
    }
    /* a new chunk pulls the trace again: it holds what the source says then */
    mut_ctx c = {0};
    js_jfr_source src = {&c, mut_trace, mut_method, mut_thread};
    js_jfr_options o = {.chunk_time_ns = 10 * MS};
    char err[256];
    js_jfr_writer *w = open_ok(tmp("eager2.jfr"), &o, &src);
    sample_ok(w, T0, 1, 1, 1);
    sample_ok(w, T0 + MS, 1, 1, 1);
    assert_int_equal(js_jfr_maybe_rotate(w, T0 + 20 * MS, err, sizeof err), 0);
    c.gen = 1;
    sample_ok(w, T0 + 21 * MS, 1, 1, 1);
    assert_int_equal(c.calls[1], 2);
    close_ok(w, T0 + 22 * MS);
    jfr *j = jp_parse_file(tmp("eager2.jfr"));
    assert_int_equal(j->chunks, 2);
    char names[128];
    uint64_t lines[4];
    event_names(j, 0, names, sizeof names, lines); /* the last chunk's event */
    assert_string_equal(names, "m\xc3\xa9thode_\xce\xbb;run");
    free(j);
}

/* An unknown line (-1 from the source) is written as 0, as other JFR producers do (SkyWalking shows the 32-bit -1 as
 * :65535); known lines are kept; the "[unknown]" frame of an unknown trace has line 0 too. */
static void test_unknown_line_is_zero(void **state UNUSED)
{
    js_jfr_writer *w = open_ok(tmp("lines.jfr"), NULL, &src_known);
    sample_ok(w, T0, 1, 2, 1); /* fixture frames: line -1, 11, 12 */
    sample_ok(w, T0 + MS, 1, 6, 1); /* unknown trace */
    close_ok(w, T0 + 2 * MS);
    jfr *j = jp_parse_file(tmp("lines.jfr"));
    char names[256];
    uint64_t lines[4];
    event_names(j, 0, names, sizeof names, lines);
    assert_int_equal(lines[0], 0);
    assert_int_equal(lines[1], 11);
    assert_int_equal(lines[2], 12);
    event_names(j, 1, names, sizeof names, lines);
    assert_string_equal(names, "[unknown]");
    assert_int_equal(lines[0], 0);
    free(j);
}

/* A symbolic link planted at the output path makes the open fail; its target is untouched. A new file is 0600. */
static void test_symlink_refused(void **state UNUSED)
{
    char target[256], link[256], err[512] = "";
    snprintf(target, sizeof target, "%s", tmp("target.txt"));
    snprintf(link, sizeof link, "%s", tmp("link.jfr"));
    FILE *f = fopen(target, "w");
    assert_non_null(f);
    fputs("precious\n", f);
    fclose(f);
    assert_int_equal(symlink(target, link), 0);
    js_jfr_writer *w = js_jfr_open(link, NULL, &src_known, T0, err, sizeof err);
    assert_null(w);
    assert_non_null(strstr(err, "symbolic link"));
    assert_null(strchr(err, '\n'));
    assert_int_equal(file_size(target), 9);
    char dangling[256];
    snprintf(dangling, sizeof dangling, "%s", tmp("dangling.jfr"));
    assert_int_equal(symlink(tmp("nothing-here"), dangling), 0);
    assert_null(js_jfr_open(dangling, NULL, &src_known, T0, err, sizeof err));
    assert_int_equal(file_size(tmp("nothing-here")), -1); /* not created through the link */
    mode_t old = umask(0);
    w = open_ok(tmp("mode.jfr"), NULL, &src_known);
    umask(old);
    close_ok(w, T0);
    struct stat sb;
    assert_int_equal(stat(tmp("mode.jfr"), &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
}

/* ---- metadata ---- */

typedef struct {
    char *str[512];
    uint64_t nstr;
    long ids[64], field_types[256];
    int nids, nfields, bad_flag, has_region, has_metadata;
    char sample_fields[256];
} meta;

/* One element and its children; `cls` is the enclosing class's name. */
static void parse_element(rd *r, meta *m, const char *cls)
{
    uint64_t ni = jp_rd_var(r);
    assert_true(ni < m->nstr);
    const char *name = m->str[ni], *attr_name = NULL, *attr_id = NULL, *attr_class = NULL;
    uint64_t nattrs = jp_rd_var(r);
    for (uint64_t i = 0; i < nattrs; i++) {
        uint64_t k = jp_rd_var(r), v = jp_rd_var(r);
        assert_true(k < m->nstr && v < m->nstr);
        const char *key = m->str[k], *val = m->str[v];
        if (!strcmp(key, "simpleType") || !strcmp(key, "constantPool")) m->bad_flag |= strcmp(val, "true") != 0;
        if (!strcmp(key, "name")) attr_name = val;
        if (!strcmp(key, "id")) attr_id = val;
        if (!strcmp(key, "class")) attr_class = val;
    }
    if (!strcmp(name, "region")) m->has_region = 1;
    if (!strcmp(name, "metadata")) m->has_metadata = 1;
    if (!strcmp(name, "class")) {
        assert_non_null(attr_id);
        assert_true(m->nids < 64);
        m->ids[m->nids++] = strtol(attr_id, NULL, 10);
        cls = attr_name;
    }
    if (!strcmp(name, "field") || !strcmp(name, "annotation")) {
        assert_non_null(attr_class);
        assert_true(m->nfields < 256);
        m->field_types[m->nfields++] = strtol(attr_class, NULL, 10);
    }
    if (!strcmp(name, "field") && cls && !strcmp(cls, "jdk.ExecutionSample")) {
        strcat(m->sample_fields, attr_name);
        strcat(m->sample_fields, " ");
    }
    uint64_t nchildren = jp_rd_var(r);
    for (uint64_t i = 0; i < nchildren; i++) parse_element(r, m, cls);
}

/* The metadata event declares every type it uses, root has metadata and region, flags are "true",
 * ExecutionSample has exactly async-profiler's 4 fields, and the id is the same for every chunk. */
static void test_metadata(void **state UNUSED)
{
    js_jfr_writer *w = open_ok(tmp("meta.jfr"), NULL, &src_known);
    close_ok(w, T0);
    FILE *fp = fopen(tmp("meta.jfr"), "rb");
    static uint8_t f[65536];
    size_t n = fread(f, 1, sizeof f, fp);
    fclose(fp);
    rd r = {f, n, 68};
    uint64_t size = jp_rd_var(&r);
    r.end = 68 + size;
    assert_int_equal(jp_rd_var(&r), 0); /* metadata type */
    jp_rd_var(&r), jp_rd_var(&r);          /* startTicks, duration */
    uint64_t id = jp_rd_var(&r);
    assert_true(id >= 0x40000000 && id < 0x7fffffff);
    meta *m = calloc(1, sizeof *m);
    m->nstr = jp_rd_var(&r);
    assert_true(m->nstr < 512);
    for (uint64_t i = 0; i < m->nstr; i++) {
        size_t len;
        const char *s = jp_rd_str(&r, &len);
        assert_non_null(s);
        m->str[i] = strndup(s, len);
    }
    parse_element(&r, m, NULL);
    assert_int_equal(r.pos, r.end);
    assert_true(m->has_region && m->has_metadata);
    assert_false(m->bad_flag);
    assert_string_equal(m->sample_fields, "startTime sampledThread stackTrace state ");
    for (int i = 0; i < m->nfields; i++) {
        int declared = 0;
        for (int k = 0; k < m->nids; k++) declared |= m->ids[k] == m->field_types[i];
        if (!declared) fail_msg("type %ld used but not declared", m->field_types[i]);
    }
    for (uint64_t i = 0; i < m->nstr; i++) free(m->str[i]);
    free(m);
}

/* ---- encodings ---- */

/* Varints round-trip through the 9-byte form; the padded form decodes to the same value. */
static void test_varint(void **state UNUSED)
{
    uint64_t vals[] = {0, 1, 127, 128, 300, 0xFFFFFFFFu, 1ULL << 56, UINT64_MAX};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        uint8_t b[9];
        size_t n = js_jfr_varint(b, vals[i]);
        rd r = {b, n, 0};
        assert_true(jp_rd_var(&r) == vals[i]);
        assert_int_equal(r.pos, n);
    }
    uint8_t b[9];
    assert_int_equal(js_jfr_varint(b, UINT64_MAX), 9);
    assert_int_equal(js_jfr_varint(b, 0xFFFFFFFFu), 5); /* an int -1 */
    js_jfr_varint5(b, 5);
    assert_memory_equal(b, "\x85\x80\x80\x80\x00", 5);
}

/* Cutting at a cap never splits a UTF-8 sequence. */
static void test_utf8_cut(void **state UNUSED)
{
    assert_int_equal(js_jfr_utf8_cut("abc", 3, 8191), 3);
    assert_int_equal(js_jfr_utf8_cut("abcdef", 6, 4), 4);
    assert_int_equal(js_jfr_utf8_cut("a\xc3\xa9z", 4, 2), 1);         /* would split é */
    assert_int_equal(js_jfr_utf8_cut("a\xc3\xa9z", 4, 3), 3);
    assert_int_equal(js_jfr_utf8_cut("\xf0\x9f\x98\x80!", 5, 3), 0); /* 4-byte emoji */
}

/* ---- setup ---- */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int setup(void **state UNUSED)
{
    memcpy(long_name, "Lx", 2);
    for (int i = 0; i < LONG_REPEAT; i++) memcpy(long_name + 2 + 2 * i, "\xc3\xa9", 2);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_jfr_write.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state UNUSED)
{
    return nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varint),
        cmocka_unit_test(test_utf8_cut),
        cmocka_unit_test(test_single_chunk),
        cmocka_unit_test(test_header_fields),
        cmocka_unit_test(test_weights),
        cmocka_unit_test(test_multi_chunk),
        cmocka_unit_test(test_end_chunk),
        cmocka_unit_test(test_chunk_time),
        cmocka_unit_test(test_max_size),
        cmocka_unit_test(test_max_size_tiny),
        cmocka_unit_test(test_max_size_sweep),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_unknown_source),
        cmocka_unit_test(test_invalid_ids),
        cmocka_unit_test(test_dev_full),
        cmocka_unit_test(test_unwritable_path),
        cmocka_unit_test_teardown(test_write_error_midway, restore_fsize),
        cmocka_unit_test(test_metadata),
        cmocka_unit_test(test_trace_copied_at_event),
        cmocka_unit_test(test_unknown_line_is_zero),
        cmocka_unit_test(test_symlink_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

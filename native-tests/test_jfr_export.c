/* test_jfr_export.c - profile -> JFR (src/jfr/jfr_export.c), read back by the project's JFR reader.
 *
 * A profile with every kind of frame the exporter treats differently (Java frames with and without lines, a
 * hidden class, native, C++ and kernel frames, a bracketed error frame as a root, thread roots, a weight above
 * the writer's per-call cap) is written and read back; the stacks must come back exactly, with and without
 * the reader's --threads/--lines. Also: non-sample profiles and unwritable paths fail with one line.
 * The JDK's own jfr tool reads the exporter's files in java-test-harness/jfr_check.sh.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jfr/jfr_export.h"
#include "jfr/jfr_read.h"
#include "testutil.h"

typedef struct {
    const char *name;
    js_frame_type type;
} tframe;

/* Adds one stack (root first, NULL-terminated frames) with weight w to p. */
static void add_stack(js_profile *p, const tframe *frames, uint64_t w)
{
    uint32_t ids[16];
    uint32_t n = 0;
    for (; frames[n].name; n++) {
        ids[n] = js_profile_frame(p, frames[n].name, frames[n].type);
        assert_int_not_equal(ids[n], UINT32_MAX);
    }
    assert_int_equal(js_profile_add(p, ids, n, w), 0);
}

/* The mixed profile described above. */
static void build(js_profile *p)
{
    js_profile_init(p);
    const tframe a[] = {{"[main tid=42]", JS_FT_THREAD}, {"java.lang.Thread.run:840", JS_FT_INTERPRETED},
                        {"com.example.App$$Lambda$14.0x00007fc5a8000a08.run", JS_FT_JIT},
                        {"com.example.App.work:17", JS_FT_INLINED}, {"Main.burn", JS_FT_C1}, {NULL, 0}};
    const tframe b[] = {{"[worker 1 tid=43]", JS_FT_THREAD}, {"java.lang.Thread.run:840", JS_FT_INTERPRETED},
                        {"Main.io", JS_FT_JIT}, {"libc.so.6`write", JS_FT_NATIVE},
                        {"JavaThread::run()", JS_FT_CPP}, {"do_syscall_64", JS_FT_KERNEL}, {NULL, 0}};
    const tframe c[] = {{"[not_walkable_Java]", JS_FT_ERROR}, {NULL, 0}};
    const tframe e[] = {{"[tid=44]", JS_FT_THREAD}, {"Main.x", JS_FT_JIT}, {NULL, 0}};
    const tframe d[] = {{"[main tid=42]", JS_FT_THREAD}, {"[unknown_Java]", JS_FT_ERROR}, {NULL, 0}};
    add_stack(p, a, 2500);
    add_stack(p, b, 3);
    add_stack(p, c, 2);
    add_stack(p, d, 1);
    add_stack(p, e, 4);
}

/* Reads path with the given options into collapsed text (normalised; heap). */
static char *read_back(const char *path, int threads, int lines)
{
    js_jfr_read_opts o = {.threads = threads, .lines = lines};
    js_profile p;
    js_profile_init(&p);
    char err[512] = "";
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    int rc = js_jfr_read_fd(fd, path, &o, &p, NULL, err, sizeof err);
    close(fd);
    if (rc) print_error("read failed: %s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(js_profile_normalize(&p), 0);
    char *s = tu_stacks(&p);
    js_profile_free(&p);
    return s;
}

/* A temporary file name (the file is created, then removed by the caller). */
static void tmp_path(char *buf, size_t n)
{
    snprintf(buf, n, "/tmp/jsampler-export-XXXXXX");
    int fd = mkstemp(buf);
    assert_true(fd >= 0);
    close(fd);
}

static void test_round_trip(void **state)
{
    (void)state;
    js_profile p;
    build(&p);
    char path[64], err[256] = "";
    tmp_path(path, sizeof path);
    uint64_t events = 0;
    int rc = js_jfr_export(path, &p, "unit test", &events, err, sizeof err);
    if (rc) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(events, 2510);

    char *full = read_back(path, 1, 1);
    tu_assert_text(full, "[main tid=42];[unknown_Java] 1\n"
                         "[main tid=42];java.lang.Thread.run:840;com.example.App$$Lambda$14.0x00007fc5a8000a08.run;"
                         "com.example.App.work:17;Main.burn 2500\n"
                         "[tid=44];Main.x 4\n"
                         "[unknown tid=0];[not_walkable_Java] 2\n"
                         "[worker 1 tid=43];java.lang.Thread.run:840;Main.io;libc.so.6`write;JavaThread::run();"
                         "do_syscall_64 3\n");
    char *plain = read_back(path, 0, 0);
    tu_assert_text(plain, "Main.x 4\n"
                          "[not_walkable_Java] 2\n"
                          "[unknown_Java] 1\n"
                          "java.lang.Thread.run;Main.io;libc.so.6`write;JavaThread::run();do_syscall_64 3\n"
                          "java.lang.Thread.run;com.example.App$$Lambda$14.0x00007fc5a8000a08.run;"
                          "com.example.App.work;Main.burn 2500\n");
    free(full);
    free(plain);
    unlink(path);
    js_profile_free(&p);
}

/* Frame types survive: the reader gives back each frame's kind from the FrameType pool. */
static void test_frame_types(void **state)
{
    (void)state;
    js_profile p;
    build(&p);
    char path[64], err[256] = "";
    tmp_path(path, sizeof path);
    assert_int_equal(js_jfr_export(path, &p, NULL, NULL, err, sizeof err), 0);
    js_jfr_read_opts o = {0};
    js_profile q;
    js_profile_init(&q);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(js_jfr_read_fd(fd, path, &o, &q, NULL, err, sizeof err), 0);
    close(fd);
    static const struct {
        const char *name;
        js_frame_type type;
    } want[] = {{"java.lang.Thread.run", JS_FT_INTERPRETED}, {"com.example.App.work", JS_FT_INLINED},
                {"Main.burn", JS_FT_C1}, {"Main.io", JS_FT_JIT}, {"libc.so.6`write", JS_FT_NATIVE},
                {"JavaThread::run()", JS_FT_CPP}, {"do_syscall_64", JS_FT_KERNEL}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        size_t f = 0;
        while (f < q.nframes && strcmp(q.frames[f].name, want[i].name) != 0) f++;
        if (f == q.nframes) print_error("frame %s missing\n", want[i].name);
        assert_true(f < q.nframes);
        assert_int_equal(q.frames[f].type, want[i].type);
    }
    js_profile_free(&q);
    js_profile_free(&p);
    unlink(path);
}

/* The FrameType pool lists all seven types even when the stacks use one (async-profiler's converter reads a
 * "Native" frame as a C function, without its class, only when the pool holds "Kernel"). */
static void test_frame_type_pool_whole(void **state)
{
    (void)state;
    js_profile p;
    js_profile_init(&p);
    const tframe a[] = {{"[main tid=42]", JS_FT_THREAD}, {"Main.x", JS_FT_JIT}, {NULL, 0}};
    add_stack(&p, a, 7);
    char path[64], err[256] = "";
    tmp_path(path, sizeof path);
    assert_int_equal(js_jfr_export(path, &p, NULL, NULL, err, sizeof err), 0);
    static char buf[1 << 16];
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    assert_true(n > 0 && n < (ssize_t)sizeof buf);
    static const char *const types[] = {"Interpreted", "JIT compiled", "Inlined", "Native", "C++", "Kernel",
                                        "C1 compiled"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (!memmem(buf, (size_t)n, types[i], strlen(types[i]))) print_error("frame type %s missing\n", types[i]);
        assert_non_null(memmem(buf, (size_t)n, types[i], strlen(types[i])));
    }
    js_profile_free(&p);
    unlink(path);
}

static void test_refusals(void **state)
{
    (void)state;
    js_profile p;
    build(&p);
    char err[256] = "";
    snprintf(p.unit, sizeof p.unit, "bytes");
    assert_int_equal(js_jfr_export("/tmp/never-written.jfr", &p, NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "weighted in bytes"));
    assert_null(strchr(err, '\n'));
    assert_int_equal(access("/tmp/never-written.jfr", F_OK), -1);

    snprintf(p.unit, sizeof p.unit, "samples");
    p.total = JS_JFR_EXPORT_MAX_EVENTS + 1; /* e.g. "a;b 1000000000001": refused before any file is made */
    assert_int_equal(js_jfr_export("/tmp/never-written.jfr", &p, NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "over the limit of 1000000000"));
    assert_int_equal(access("/tmp/never-written.jfr", F_OK), -1);
    p.total = 2510;
    err[0] = 0;
    assert_int_equal(js_jfr_export("/nonexistent-dir/x.jfr", &p, NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent-dir/x.jfr"));
    assert_null(strchr(err, '\n'));
    js_profile_free(&p);
}

/* Line 0 is "no line" both ways: a ':0' suffix is not kept as a line, and frames without a line (written as 0)
 * read back with --lines get no ':0' (nor ':-1', ':65535') suffix. */
static void test_line_zero(void **state)
{
    (void)state;
    js_profile p;
    js_profile_init(&p);
    const tframe a[] = {{"[t tid=7]", JS_FT_THREAD}, {"A.a:0", JS_FT_JIT}, {"B.b", JS_FT_INTERPRETED},
                        {"C.c:7", JS_FT_JIT}, {"libc.so.6`read", JS_FT_NATIVE}, {NULL, 0}};
    add_stack(&p, a, 3);
    char path[64], err[256] = "";
    tmp_path(path, sizeof path);
    assert_int_equal(js_jfr_export(path, &p, NULL, NULL, err, sizeof err), 0);
    char *s = read_back(path, 1, 1);
    tu_assert_text(s, "[t tid=7];A.a;B.b;C.c:7;libc.so.6`read 3\n");
    free(s);
    unlink(path);
    js_profile_free(&p);
}

/* An empty profile is a valid recording with no events. */
static void test_empty(void **state)
{
    (void)state;
    js_profile p;
    js_profile_init(&p);
    char path[64], err[256] = "";
    tmp_path(path, sizeof path);
    uint64_t events = 7;
    assert_int_equal(js_jfr_export(path, &p, NULL, &events, err, sizeof err), 0);
    assert_int_equal(events, 0);
    char *s = read_back(path, 0, 0);
    tu_assert_text(s, "");
    free(s);
    unlink(path);
    js_profile_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_frame_types),
        cmocka_unit_test(test_frame_type_pool_whole),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_line_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_capi.c - async-profiler's C API as a native program without a JVM uses it: build/libjsampler.so loaded with
 * dlopen, asprof_init, asprof_execute with and without an output callback, asprof_error_str. The library is the
 * real one (make builds it before the native tests). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UNUSED __attribute__((unused))
#define LIB "build/libjsampler.so"

typedef const char *(*execute_fn)(const char *cmd, void (*cb)(const char *buf, size_t size));
static void (*init)(void);
static const char *(*error_str)(const char *err);
static execute_fn execute;

static char captured[1 << 20];
static size_t ncaptured;

/* The output callback: appends what the library writes. */
static void collect(const char *buf, size_t size)
{
    if (ncaptured + size < sizeof captured) memcpy(captured + ncaptured, buf, size), ncaptured += size;
    captured[ncaptured] = 0;
}

__attribute__((noinline, used)) double capi_test_burn(int ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    double x = 1;
    do {
        for (int i = 0; i < 100000; i++) x = x * 1.0000001 + 1e-9;
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
    return x;
}

/* Whole text of a file (static buffer), "" if it cannot be read. */
static const char *file_text(const char *path)
{
    static char buf[1 << 20];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    return buf;
}

static int setup(void **state UNUSED)
{
    void *h = dlopen(LIB, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "cannot load %s (run make first): %s\n", LIB, dlerror());
        return -1;
    }
    init = (void (*)(void))dlsym(h, "asprof_init");
    error_str = (const char *(*)(const char *))dlsym(h, "asprof_error_str");
    execute = (execute_fn)dlsym(h, "asprof_execute");
    return init && error_str && execute ? 0 : -1;
}

/* A native program profiles itself: started, its burning function in the dump the callback gets; a plain stop
 * keeps the profile (async-profiler's contract), which a stop naming a file then writes. */
static void test_profile_self(void **state UNUSED)
{
    char dir[] = "/tmp/js-capi-XXXXXX", cmd[256], path[128];
    assert_non_null(mkdtemp(dir));
    init();
    init(); /* once is enough; more is harmless */
    ncaptured = 0;
    assert_null(execute("start,event=cpu,interval=1ms", collect));
    assert_non_null(strstr(captured, "profiling started"));
    capi_test_burn(400);
    ncaptured = 0;
    assert_null(execute("collapsed", collect)); /* a format alone: a dump, to the callback */
    if (!strstr(captured, "capi_test_burn")) fail_msg("dump without capi_test_burn: %.300s", captured);
    ncaptured = 0;
    assert_null(execute("stop", collect));
    assert_non_null(strstr(captured, "kept"));
    snprintf(path, sizeof path, "%s/self.collapsed", dir);
    snprintf(cmd, sizeof cmd, "stop,file=%s", path);
    assert_null(execute(cmd, NULL));
    if (!strstr(file_text(path), "capi_test_burn")) fail_msg("%s without capi_test_burn", path);
    const char *err = execute("stop", NULL);
    assert_non_null(err);
    assert_ptr_equal(error_str(err), err);
    assert_non_null(strstr(err, "not running"));
    unlink(path);
    rmdir(dir);
}

/* Errors are one message each: a bad option names it; a JVM event in a process without a JVM says so. */
static void test_errors(void **state UNUSED)
{
    const char *err = execute("start,bogus=1", NULL);
    assert_non_null(err);
    assert_non_null(strstr(err, "bogus"));
    err = execute("start,alloc", NULL);
    assert_non_null(err);
    if (!strstr(err, "JVM")) fail_msg("alloc without a JVM: %s", err);
    ncaptured = 0;
    assert_null(execute("status", collect));
    assert_non_null(strstr(captured, "state=idle"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_self),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}

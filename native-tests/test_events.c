/* test_events.c - the pieces behind the new events that need no JVM: class ids and their Java names, native
 * symbol names (ELF tables, demangling, libraries without a symbol there), the native frame-pointer walk of this
 * very thread, crediting a stored trace again, and the JFR writer's allocation, lock and wall events read back by
 * the converter's reader. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/classes.h"
#include "core/symbols.h"
#include "jfr/jfr_read.h"
#include "jfr/jfr_write.h"
#include "output/profile.h"
#include "sample/native_walk.h"
#include "sample/store.h"

#define UNUSED __attribute__((unused))

/* Class ids are stable per name; Java names follow the JVM's forms. */
static void test_class_ids_and_names(void **state UNUSED)
{
    uint32_t s = js_classes_id("Ljava/lang/String;"), b = js_classes_id("[B");
    uint32_t o = js_classes_id("[[Ljava/lang/Object;"), h = js_classes_id("Lcom/x/Foo$$Lambda/0x0000000800c01234;");
    assert_true(s && b && o && h);
    assert_int_equal(js_classes_id("Ljava/lang/String;"), s);
    assert_int_not_equal(s, b);
    char buf[128];
    assert_int_equal(js_classes_java(s, buf, sizeof buf), 0);
    assert_string_equal(buf, "java.lang.String");
    assert_int_equal(js_classes_java(b, buf, sizeof buf), 0);
    assert_string_equal(buf, "byte[]");
    assert_int_equal(js_classes_java(o, buf, sizeof buf), 0);
    assert_string_equal(buf, "java.lang.Object[][]");
    assert_int_equal(js_classes_java(h, buf, sizeof buf), 0);
    assert_string_equal(buf, "com.x.Foo$$Lambda"); /* a hidden class's address suffix dropped */
    assert_int_equal(js_classes_internal(s, buf, sizeof buf), 0);
    assert_string_equal(buf, "java/lang/String");
    assert_int_equal(js_classes_internal(b, buf, sizeof buf), 0);
    assert_string_equal(buf, "[B");
    assert_int_equal(js_classes_java(0, buf, sizeof buf), -1);
    assert_int_equal(js_classes_java(999999, buf, sizeof buf), -1);
}

__attribute__((noinline, used)) int test_events_marker_function(int x)
{
    return x * 3 + 1;
}

/* A function of this program and one of libc are named, the same key for every pc inside them. */
static void test_symbol_names(void **state UNUSED)
{
    char buf[256];
    js_symbol_info a, b;
    uintptr_t f = (uintptr_t)&test_events_marker_function;
    js_symbols_name(f + 1, buf, sizeof buf, &a);
    assert_string_equal(buf, "test_events_marker_function");
    js_symbols_name(f + 3, buf, sizeof buf, &b);
    assert_int_equal(a.start, f);
    assert_int_equal(b.start, f);
    assert_false(a.in_jvm);
    js_symbols_name((uintptr_t)&getpid + 2, buf, sizeof buf, &a);
    assert_non_null(strstr(buf, "getpid"));
    js_symbols_name(16, buf, sizeof buf, &a); /* not in any object */
    assert_string_equal(buf, "[unknown_native]");
    js_symbols_name(0xffffffff81000000ULL, buf, sizeof buf, &a);
    assert_true(a.kernel);
}

/* Walk from a context made here: pc inside this function, its own frame pointer. */
__attribute__((noinline, optimize("no-omit-frame-pointer"))) static int walk_here(js_raw_frame *out, int max,
                                                                                 int *in_java)
{
    ucontext_t uc;
    memset(&uc, 0, sizeof uc);
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)&walk_here + 8;
    uc.uc_mcontext.gregs[REG_RBP] = (greg_t)fp;
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)(fp - 256);
    return js_native_fp.walk(&uc, out, max, in_java);
}

/* The walk names the frame it starts in and its caller, reading the stack through guarded reads (this thread is
 * not a Java thread); bad frame pointers end the walk instead of faulting. */
__attribute__((optimize("no-omit-frame-pointer"))) static void test_native_walk_of_this_thread(void **state UNUSED)
{
    js_raw_frame f[16];
    int in_java = -1, n = walk_here(f, 16, &in_java);
    assert_true(n >= 2);
    assert_int_equal(in_java, 0);
    char buf[256];
    js_symbols_name((uintptr_t)f[0].method, buf, sizeof buf, NULL);
    assert_string_equal(buf, "walk_here");
    assert_int_equal(f[1].bci, 1); /* a return address: named by its call */
    js_symbols_name((uintptr_t)f[1].method - 1, buf, sizeof buf, NULL);
    assert_string_equal(buf, "test_native_walk_of_this_thread");
    ucontext_t uc;
    memset(&uc, 0, sizeof uc);
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)&walk_here;
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)(uintptr_t)__builtin_frame_address(0);
    uc.uc_mcontext.gregs[REG_RBP] = (greg_t)0x10; /* garbage */
    assert_int_equal(js_native_fp.walk(&uc, f, 16, &in_java), 1);
    uc.uc_mcontext.gregs[REG_RBP] = (greg_t)(uintptr_t)__builtin_frame_address(0) + (1u << 20); /* unmapped? guarded */
    assert_true(js_native_fp.walk(&uc, f, 16, &in_java) >= 1);
}

/* A trace credited again adds to its (trace, thread) pair; an id the store does not hold is refused. */
static void test_store_add_again(void **state UNUSED)
{
    char err[128];
    js_store *s = js_store_create(64, 4096, 64, err, sizeof err);
    assert_non_null(s);
    js_raw_frame f[2] = {{1, JS_RF_JAVA, (void *)0x10}, {2, JS_RF_JAVA, (void *)0x20}};
    uint32_t id = js_store_add(s, f, 2, 7, 5);
    assert_true(id > 0);
    assert_int_equal(js_store_add_again(s, id, 7, 3), 0);
    assert_int_equal(js_store_add_again(s, id == 1 ? 2 : 1, 7, 3), -1);
    assert_int_equal(js_store_add_again(s, 0, 7, 3), -1);
    assert_int_equal(js_store_add_again(s, 1000000, 7, 3), -1);
    js_store_fill fill;
    js_store_usage(s, &fill);
    assert_int_equal(fill.pairs, 1);
    js_store_destroy(s);
}

/* ---- the JFR writer's other events, read back by the reader ---- */

static int src_trace(void *ctx, uint64_t id, js_jfr_frame *out, int max, int *truncated)
{
    out[0] = (js_jfr_frame){.method = 100 + id, .line = 10, .bci = 1, .type = 1};
    out[1] = (js_jfr_frame){.method = 99, .line = 5, .bci = 0, .type = 0};
    *truncated = 0;
    return 2;
}

static int src_method(void *ctx, uint64_t key, js_jfr_method *out)
{
    static char name[32];
    snprintf(name, sizeof name, "m%llu", (unsigned long long)key);
    *out = (js_jfr_method){.class_name = "pkg/C", .name = name, .descriptor = "()V"};
    return 0;
}

static int src_thread(void *ctx, uint32_t id, js_jfr_thread *out)
{
    *out = (js_jfr_thread){.os_name = "t", .os_tid = id, .java_name = "t", .java_tid = id};
    return 0;
}

/* Total weight of path's events of kind k, and the profile's unit. */
static uint64_t read_total(const char *path, js_jfr_read_kind k, char *unit, size_t unitlen)
{
    js_jfr_read_opts o;
    memset(&o, 0, sizeof o);
    o.kind = k;
    js_profile p;
    js_profile_init(&p);
    js_jfr_read_stats st;
    char err[256];
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    int rc = js_jfr_read_fd(fd, path, &o, &p, &st, err, sizeof err);
    close(fd);
    if (rc != 0) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    uint64_t total = 0;
    for (size_t i = 0; i < p.nstacks; i++) total += p.stacks[i].weight;
    snprintf(unit, unitlen, "%s", p.unit);
    js_profile_free(&p);
    return total;
}

static void test_jfr_other_events(void **state UNUSED)
{
    char path[] = "/tmp/jsampler-events-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    js_jfr_source src = {NULL, src_trace, src_method, src_thread};
    js_jfr_options o;
    memset(&o, 0, sizeof o);
    char err[256];
    js_jfr_writer *w = js_jfr_open(path, &o, &src, 1000, err, sizeof err);
    assert_non_null(w);
    js_jfr_event a = {.type = JS_JFR_EV_ALLOC, .ticks = 2000, .thread = 1, .trace = 1, .class_name = "[J",
                      .size = 4112, .weight = 600000, .timeout = INT64_MIN, .until = INT64_MIN};
    assert_int_equal(js_jfr_write_event(w, &a, err, sizeof err), 0);
    js_jfr_event m = {.type = JS_JFR_EV_MONITOR, .ticks = 3000, .duration = 70000, .thread = 2, .trace = 2,
                      .class_name = "java/lang/Object", .timeout = INT64_MIN, .until = INT64_MIN};
    assert_int_equal(js_jfr_write_event(w, &m, err, sizeof err), 0);
    js_jfr_event p = m;
    p.type = JS_JFR_EV_PARK;
    p.duration = 30000;
    p.timeout = 5000000;
    assert_int_equal(js_jfr_write_event(w, &p, err, sizeof err), 0);
    js_jfr_event wl = {.type = JS_JFR_EV_WALL, .ticks = 4000, .thread = 1, .trace = 3, .state = JS_JFR_STATE_SLEEPING,
                       .weight = 4, .span = 200000000, .timeout = INT64_MIN, .until = INT64_MIN};
    assert_int_equal(js_jfr_write_event(w, &wl, err, sizeof err), 0);
    js_jfr_event bad = wl;
    bad.thread = 0;
    assert_int_equal(js_jfr_write_event(w, &bad, err, sizeof err), -1);
    assert_int_equal(js_jfr_close(w, 5000, err, sizeof err), 0);
    char unit[32];
    assert_int_equal(read_total(path, JS_JFR_READ_ALLOC, unit, sizeof unit), 600000);
    assert_string_equal(unit, "bytes");
    assert_int_equal(read_total(path, JS_JFR_READ_LOCK, unit, sizeof unit), 100000);
    assert_string_equal(unit, "ns");
    assert_int_equal(read_total(path, JS_JFR_READ_WALL, unit, sizeof unit), 4);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_class_ids_and_names),
        cmocka_unit_test(test_symbol_names),
        cmocka_unit_test(test_native_walk_of_this_thread),
        cmocka_unit_test(test_store_add_again),
        cmocka_unit_test(test_jfr_other_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

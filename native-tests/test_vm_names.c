/* test_vm_names.c - the reads behind the JVM's own threads' full names (core/vm_names_int.h), on HotSpot-shaped
 * structures built in memory: a JavaThread's tid and name through its OSThread, OopHandle, java.lang.Thread,
 * String and byte[] (compressed and plain references), a thread whose tid is another's, a pointer to nothing, a
 * list; Java strings to UTF-8; and thread_names.h's side (a 15-byte comm renamed only to a name it is the cut of).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../src/core/vm_names_int.h"
#include "core/thread_names.h"
#include "sample/threads.h"

#define UNUSED __attribute__((unused))

/* An arena holding every object, so compressed references (offsets from its start >> 3) fit in 32 bits. */
static _Alignas(16) unsigned char arena[4096];

enum { JT = 0, OS = 256, SLOT = 512, TOBJ = 640, STR = 768, ARR = 896, LIST = 1024, LIST_ARR = 1088 };

/* The layout the structures below follow. */
static js_vm_layout layout(int narrow)
{
    js_vm_layout l = {0};
    l.java_thread_list = (uintptr_t)&arena[LIST - 8];
    l.list_length = 4;
    l.list_threads = 16;
    l.osthread = 40;
    l.os_thread_id = 12;
    l.thread_obj = 96;
    l.handle_obj = 0;
    l.narrow_oops = narrow;
    l.oop_base = (uintptr_t)arena;
    l.oop_shift = 3;
    l.name_field = 24;
    l.value_field = 20;
    l.coder_field = 16;
    l.byte_base = 16;
    return l;
}

/* Store a reference to the arena object at off into field at, as l encodes references. */
static void put_ref(const js_vm_layout *l, size_t at, size_t off)
{
    if (l->narrow_oops) {
        uint32_t v = (uint32_t)(off >> 3);
        memcpy(&arena[at], &v, 4);
    } else {
        uintptr_t v = (uintptr_t)&arena[off];
        memcpy(&arena[at], &v, 8);
    }
}

/* A JavaThread of OS tid tid whose java.lang.Thread is named by chars (coder 0 or 1). */
static void build(const js_vm_layout *l, int tid, int coder, const void *chars, int32_t n)
{
    memset(arena, 0, sizeof arena);
    uintptr_t p = (uintptr_t)&arena[OS];
    memcpy(&arena[JT + 40], &p, 8);
    memcpy(&arena[OS + 12], &tid, 4);
    p = (uintptr_t)&arena[SLOT];
    memcpy(&arena[JT + 96], &p, 8);
    p = (uintptr_t)&arena[TOBJ];
    memcpy(&arena[SLOT], &p, 8); /* the handle's slot holds a full oop */
    put_ref(l, TOBJ + 24, STR);
    put_ref(l, STR + 20, ARR);
    arena[STR + 16] = (unsigned char)coder;
    memcpy(&arena[ARR + 12], &n, 4);
    memcpy(&arena[ARR + 16], chars, (size_t)n);
    /* the list: a ThreadsList* static, the list {_length at 4, _threads at 16}, its array of one JavaThread */
    p = (uintptr_t)&arena[LIST];
    memcpy(&arena[LIST - 8], &p, 8);
    uint32_t one = 1;
    memcpy(&arena[LIST + 4], &one, 4);
    p = (uintptr_t)&arena[LIST_ARR];
    memcpy(&arena[LIST + 16], &p, 8);
    p = (uintptr_t)&arena[JT];
    memcpy(&arena[LIST_ARR], &p, 8);
}

static void test_latin1_name_both_reference_widths(UNUSED void **state)
{
    for (int narrow = 0; narrow <= 1; narrow++) {
        js_vm_layout l = layout(narrow);
        assert_true(js_vm_layout_complete(&l));
        build(&l, 4242, 0, "C2 CompilerThread0", 18);
        uintptr_t list[4];
        assert_int_equal(js_vm_java_threads(&l, list, 4), 1);
        assert_int_equal(list[0], (uintptr_t)&arena[JT]);
        assert_int_equal(js_vm_thread_tid(&l, list[0]), 4242);
        char name[64];
        assert_int_equal(js_vm_thread_name(&l, list[0], 4242, name, sizeof name), 0);
        assert_string_equal(name, "C2 CompilerThread0");
        /* the same JavaThread asked for as another thread: no name */
        assert_int_equal(js_vm_thread_name(&l, list[0], 4243, name, sizeof name), -1);
    }
}

static void test_utf16_name(UNUSED void **state)
{
    js_vm_layout l = layout(1);
    const unsigned char chars[] = {'G', 0, 0xE9, 0, 0x3D, 0xD8, 0x00, 0xDE}; /* G, e-acute, U+1F600 */
    build(&l, 77, 1, chars, sizeof chars);
    char name[64];
    assert_int_equal(js_vm_thread_name(&l, (uintptr_t)&arena[JT], 77, name, sizeof name), 0);
    assert_string_equal(name, "G\xC3\xA9\xF0\x9F\x98\x80");
}

static void test_broken_paths_give_no_name(UNUSED void **state)
{
    js_vm_layout l = layout(1);
    char name[64];
    build(&l, 5, 0, "VM Periodic Task Thread", 23);
    uintptr_t nothing = 4096; /* the first page: never mapped */
    memcpy(&arena[JT + 96], &nothing, 8);
    assert_int_equal(js_vm_thread_name(&l, (uintptr_t)&arena[JT], 5, name, sizeof name), -1);
    build(&l, 5, 0, "VM Periodic Task Thread", 23);
    memset(&arena[OS], 0, 8 * 4); /* OSThread without a tid */
    assert_int_equal(js_vm_thread_tid(&l, (uintptr_t)&arena[JT]), -1);
    assert_int_equal(js_vm_thread_name(&l, (uintptr_t)&arena[JT], 5, name, sizeof name), -1);
    build(&l, 5, 7, "VM Periodic Task Thread", 23); /* not a coder */
    assert_int_equal(js_vm_thread_name(&l, (uintptr_t)&arena[JT], 5, name, sizeof name), -1);
    build(&l, 5, 0, "x", 1);
    memcpy(&arena[LIST - 8], &nothing, 8); /* the list pointer leads nowhere */
    uintptr_t list[2];
    assert_int_equal(js_vm_java_threads(&l, list, 2), -1);
    l.name_field = -1;
    assert_false(js_vm_layout_complete(&l));
}

static void test_strings_to_utf8(UNUSED void **state)
{
    char out[8];
    assert_int_equal(js_vm_string_utf8(0, (const unsigned char *)"abc", 3, out, sizeof out), 3);
    assert_string_equal(out, "abc");
    const unsigned char latin[] = {'a', 0xFC};
    assert_int_equal(js_vm_string_utf8(0, latin, 2, out, sizeof out), 3);
    assert_string_equal(out, "a\xC3\xBC");
    /* cut at a whole character: 6 ASCII bytes then a 2-byte one does not fit in 7 */
    const unsigned char cut[] = {'a', 'b', 'c', 'd', 'e', 'f', 0xFC};
    assert_int_equal(js_vm_string_utf8(0, cut, 7, out, sizeof out), 6);
    assert_string_equal(out, "abcdef");
    assert_int_equal(js_vm_string_utf8(1, (const unsigned char *)"a", 1, out, sizeof out), -1);
    assert_int_equal(js_vm_string_utf8(2, (const unsigned char *)"a", 1, out, sizeof out), -1);
}

static void test_name_extends_comm(UNUSED void **state)
{
    assert_true(js_vm_name_extends("C2 CompilerThre", "C2 CompilerThread0"));
    assert_false(js_vm_name_extends("C2 CompilerThre", "C2 CompilerThre"));     /* not longer */
    assert_false(js_vm_name_extends("C1 CompilerThre", "C2 CompilerThread0"));  /* another thread's */
    assert_false(js_vm_name_extends("GC Thread#0", "GC Thread#0 and more"));    /* comm not cut */
}

/* thread_names.h: this thread, recorded under its 15-byte comm, renamed only to a name its comm is the cut of. */
static void test_adopt_vm_name(UNUSED void **state)
{
    js_threads_reset();
    js_threads_clear_names();
    int tid = (int)syscall(SYS_gettid);
    assert_int_equal(pthread_setname_np(pthread_self(), "C2 CompilerThre"), 0);
    int created = 0;
    js_thread *t = js_threads_claim(tid, &created);
    assert_non_null(t);
    uint32_t serial = atomic_load(&t->serial);
    js_threads_set_name(serial, tid, "C2 CompilerThre");
    int tids[4];
    for (int i = 0; i < JS_VM_NAME_TRIES; i++) {
        assert_int_equal(js_threads_cut_names(tids, 4), 1);
        assert_int_equal(tids[0], tid);
    }
    assert_int_equal(js_threads_cut_names(tids, 4), 0); /* given up after its tries */
    assert_int_equal(js_threads_adopt_vm(tid, "C1 CompilerThread0"), 0);
    assert_int_equal(js_threads_adopt_vm(tid, "C2 CompilerThre"), 0);
    assert_int_equal(js_threads_adopt_vm(tid, "C2 CompilerThread0"), 1);
    char name[64];
    int got_tid = 0;
    int64_t java_tid = -1;
    assert_int_equal(js_threads_info(serial, name, sizeof name, &got_tid, &java_tid), 0);
    assert_string_equal(name, "C2 CompilerThread0");
    assert_int_equal(java_tid, 0);
    /* a thread with a Java id is JVMTI's to name */
    js_threads_set_name(serial, tid, "C2 CompilerThre");
    js_threads_set_java_id(serial, 9);
    assert_int_equal(js_threads_adopt_vm(tid, "C2 CompilerThread0"), 0);
    js_threads_clear_names();
    js_threads_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_latin1_name_both_reference_widths),
        cmocka_unit_test(test_utf16_name),
        cmocka_unit_test(test_broken_paths_give_no_name),
        cmocka_unit_test(test_strings_to_utf8),
        cmocka_unit_test(test_name_extends_comm),
        cmocka_unit_test(test_adopt_vm_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_vmentry.c - the VM entry table (vmentry.h): an allocation sample's leading native frames are dropped up to
 * and including the one nearest the root that returns into an entry function; return addresses count at pc - 1;
 * nothing is dropped without such a frame, and Java frames are never looked at. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/wait.h>
#include <unistd.h>

#include "sample/vmentry.h"

#define UNUSED __attribute__((unused))

static js_raw_frame nat(uintptr_t pc, int ret)
{
    return (js_raw_frame){.bci = ret, .kind = JS_RF_NATIVE_PC, .method = (const void *)pc};
}

static void test_trim(void **state UNUSED)
{
    const uintptr_t ranges[3][2] = {{0x1000, 0x1100}, {0x2000, 0x2040}, {0x3000, 0x3001}};
    js_vmentry_set(ranges, 3);
    assert_int_equal(js_vmentry_count(), 3);
    js_vmentry_set(ranges, 1); /* once: later calls change nothing */
    assert_int_equal(js_vmentry_count(), 3);

    /* callback, poster, an entry, VM work, the outer entry (its return address at its end + 1), caller, Java */
    js_raw_frame f[7] = {nat(0x9000, 0), nat(0x9100, 1), nat(0x1050, 1), nat(0x5000, 1), nat(0x2040, 1),
                         nat(0x6000, 1), {.bci = 3, .kind = JS_RF_JAVA, .method = (const void *)0x10}};
    assert_int_equal(js_vmentry_trim(f, 7), 2);
    assert_ptr_equal(f[0].method, (const void *)0x6000);
    assert_int_equal(f[1].kind, JS_RF_JAVA);

    /* a return address one past the range is the call at its last byte; an interrupted pc there is outside */
    js_raw_frame g[2] = {nat(0x3001, 1), nat(0x7000, 1)};
    assert_int_equal(js_vmentry_trim(g, 2), 1);
    js_raw_frame h[2] = {nat(0x3001, 0), nat(0x7000, 1)};
    assert_int_equal(js_vmentry_trim(h, 2), -1);
    assert_ptr_equal(h[0].method, (const void *)0x3001);

    /* entries after the first Java frame are not looked at */
    js_raw_frame j[3] = {nat(0x8000, 0), {.bci = 1, .kind = JS_RF_JAVA, .method = (const void *)0x10}, nat(0x1010, 1)};
    assert_int_equal(js_vmentry_trim(j, 3), -1);
}

/* Overlapping ranges (aliases, a symbol inside another) are merged, so a pc in the outer one past the inner one's end
 * is still found. (A process's table is set once: this runs in a process of its own, see main.) */
static void test_merge(void **state UNUSED)
{
    const uintptr_t ranges[3][2] = {{0x1000, 0x1400}, {0x1100, 0x1101}, {0x1200, 0x1300}};
    js_vmentry_set(ranges, 3);
    assert_int_equal(js_vmentry_count(), 1);
    js_raw_frame f[2] = {nat(0x1350, 1), nat(0x7000, 1)};
    assert_int_equal(js_vmentry_trim(f, 2), 1);
}

int main(void)
{
    const struct CMUnitTest trim[] = {cmocka_unit_test(test_trim)}, merge[] = {cmocka_unit_test(test_merge)};
    pid_t child = fork(); /* the table is set once per process: the merge test gets a process of its own */
    if (child == 0) _exit(cmocka_run_group_tests(merge, NULL, NULL));
    int rc = cmocka_run_group_tests(trim, NULL, NULL), status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = 1;
    return rc;
}

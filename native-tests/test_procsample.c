/* test_procsample.c - proc= (procsample.h): the /proc parsers on real and crafted texts, and rounds over this
 * machine's real /proc: a process is reported from its second round, with the CPU it used in between. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/procsample.h"

#define UNUSED __attribute__((unused))

static js_jfr_process *proc(void)
{
    js_jfr_process *p = calloc(1, sizeof *p);
    assert_non_null(p);
    return p;
}

/* A stat line whose comm holds ") " and spaces: the fields are read after the last ')'. */
static void test_stat_fields(void **state UNUSED)
{
    const char *s = "4242 (a) b (c)) S 17 4242 4242 0 -1 4194304 1500 0 7 0 250 30 0 0 20 0 12 0 98765 123456789 3000 "
                    "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
    js_jfr_process *p = proc();
    uint64_t ut, st, start, rss;
    assert_int_equal(js_proc_parse_stat(s, strlen(s), p, &ut, &st, &start, &rss), 0);
    assert_int_equal(p->pid, 4242);
    assert_string_equal(p->name, "a) b (c)");
    assert_int_equal(p->state, 'S');
    assert_int_equal(p->ppid, 17);
    assert_int_equal(p->minor_faults, 1500);
    assert_int_equal(p->major_faults, 7);
    assert_int_equal(ut, 250);
    assert_int_equal(st, 30);
    assert_int_equal(p->threads, 12);
    assert_int_equal(start, 98765);
    assert_int_equal(p->vm_size, 123456789);
    assert_int_equal(rss, 3000);
    free(p);
}

/* Cut, empty or fieldless lines are refused; a comm longer than 16 bytes is cut, not overrun. */
static void test_stat_malformed(void **state UNUSED)
{
    const char *bad[] = {"", "4242", "4242 (java", "4242 (java) S 1 2 3", "(java) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 "
                         "16 17 18 19 20 21", "0 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21",
                         "5 )x( S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21"};
    js_jfr_process *p = proc();
    uint64_t ut, st, start, rss;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(js_proc_parse_stat(bad[i], strlen(bad[i]), p, &ut, &st, &start, &rss), -1);
    const char *longcomm = "9 (abcdefghijklmnopqrstuvwxyz) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21";
    assert_int_equal(js_proc_parse_stat(longcomm, strlen(longcomm), p, &ut, &st, &start, &rss), 0);
    assert_string_equal(p->name, "abcdefghijklmnop");
    free(p);
}

/* status in kB becomes bytes; io's storage bytes; cmdline's NULs become spaces, trailing ones dropped. */
static void test_status_io_cmdline(void **state UNUSED)
{
    const char *status = "Name:\tjava\nUid:\t1000\t1000\t1000\t1000\nVmSize:\t  100 kB\nVmRSS:\t  40 kB\n"
                         "RssAnon:\t  30 kB\nRssFile:\t   9 kB\nRssShmem:\t   1 kB\n";
    const char *io = "rchar: 5\nwchar: 6\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
    const char cmd[] = "java\0-cp\0a b\0Main\0";
    js_jfr_process *p = proc();
    js_proc_parse_status(status, strlen(status), p);
    js_proc_parse_io(io, strlen(io), p);
    js_proc_parse_cmdline(cmd, sizeof cmd - 1, p);
    assert_int_equal(p->uid, 1000);
    assert_int_equal(p->vm_size, 102400);
    assert_int_equal(p->vm_rss, 40960);
    assert_int_equal(p->rss_anon, 30720);
    assert_int_equal(p->rss_files, 9216);
    assert_int_equal(p->rss_shmem, 1024);
    assert_int_equal(p->io_read, 4096);
    assert_int_equal(p->io_write, 8192);
    assert_string_equal(p->cmdline, "java -cp a b Main");
    free(p);
}

typedef struct {
    int self_reports;
    js_jfr_process self;
} seen;

static void collect(void *ctx, const js_jfr_process *p)
{
    seen *s = ctx;
    if (p->pid != (int32_t)getpid()) return;
    s->self_reports++;
    s->self = *p;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Real rounds: this process is a baseline in the first; after 400 ms of spinning it is reported once, with the CPU
 * fraction its own clock measured (within 0.15: /proc counts in 10 ms ticks), its name, command line and sizes. */
static void test_round_reports_busy_self(void **state UNUSED)
{
    js_procsampler *ps = js_procsampler_create();
    assert_non_null(ps);
    seen s;
    memset(&s, 0, sizeof s);
    int n = js_procsampler_round(ps, mono(), collect, &s);
    assert_true(n > 1);
    assert_int_equal(s.self_reports, 0);
    double c0 = cpu_s();
    uint64_t t0 = mono();
    volatile double x = 0;
    while (mono() - t0 < 400000000ULL) x += 1;
    double fraction = (cpu_s() - c0) / ((mono() - t0) / 1e9);
    js_procsampler_round(ps, mono(), collect, &s);
    assert_int_equal(s.self_reports, 1);
    assert_true(s.self.cpu_fraction > fraction - 0.15 && s.self.cpu_fraction < fraction + 0.15);
    assert_true(s.self.cpu_user > 0);
    assert_true(strstr(s.self.cmdline, "test_procsample") != NULL);
    assert_true(strstr("test_procsample", s.self.name) != NULL || strlen(s.self.name) == 15);
    assert_true(s.self.vm_rss > 0 && s.self.vm_size >= s.self.vm_rss);
    assert_true(s.self.threads >= 1 && s.self.ppid > 0 && s.self.start_ms > 1600000000000ULL);
    js_procsampler_free(ps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stat_fields),
        cmocka_unit_test(test_stat_malformed),
        cmocka_unit_test(test_status_io_cmdline),
        cmocka_unit_test(test_round_reports_busy_self),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

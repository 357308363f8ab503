/* test_perf_ring.c - the kernel-frame rings of perf counters (engine/perf_ring_int.h): a detached ring is unmapped
 * once no handler reads any ring, also while handlers keep reading other rings (a ring left mapped keeps its
 * counter alive in the kernel after its file is closed). Needs perf_event_open (root, or perf_event_paranoid <= 2
 * for a thread's own software counter); skipped with a message where it is refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../src/engine/perf_ring_int.h"

#define UNUSED __attribute__((unused))

/* A cpu-clock counter of this thread that records kernel call chains, as the cpu engine opens it; -1 if refused. */
static int open_counter(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = 1000000000ULL;
    a.sample_type = PERF_SAMPLE_CALLCHAIN;
    a.exclude_user = 1;
    a.disabled = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Mappings of perf counters in this process. */
static int perf_mappings(void)
{
    FILE *f = fopen("/proc/self/maps", "re");
    assert_non_null(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) n += strstr(line, "perf_event") != NULL;
    fclose(f);
    return n;
}

static _Atomic int g_stop;

/* A handler that never stops: reads ring fd over and over. */
static void *reader(void *arg)
{
    int fd = (int)(intptr_t)arg;
    uintptr_t ips[32];
    while (!atomic_load(&g_stop)) js_perf_ring_kernel_ips(fd, ips, 32);
    return NULL;
}

/* 2,000 attach/detach cycles of counters while another thread reads another counter's ring without pause: every
 * detached ring is unmapped (before, a detach that saw the readers drain but a new one enter before its second look
 * left its ring mapped for good). */
static void test_detach_unmaps_while_others_read(void **state UNUSED)
{
    int busy = open_counter(), cycled = open_counter();
    if (busy < 0 || cycled < 0) {
        printf("  perf_event_open refused here (not root, perf_event_paranoid > 2?): skipped\n");
        if (busy >= 0) close(busy);
        if (cycled >= 0) close(cycled);
        return;
    }
    int before = perf_mappings();
    assert_int_equal(js_perf_ring_attach(busy), 0);
    assert_int_equal(perf_mappings(), before + 1);
    pthread_t th;
    atomic_store(&g_stop, 0);
    assert_int_equal(pthread_create(&th, NULL, reader, (void *)(intptr_t)busy), 0);
    for (int i = 0; i < 2000; i++) { /* a counter per cycle, as threads come and go: mapping the same counter
                                          * again waits for an RCU grace period (about 12 ms here) */
        int fd = i == 0 ? cycled : open_counter();
        assert_true(fd >= 0);
        assert_int_equal(js_perf_ring_attach(fd), 0);
        js_perf_ring_detach(fd);
        if (fd != cycled) close(fd);
    }
    int during = perf_mappings();
    atomic_store(&g_stop, 1);
    assert_int_equal(pthread_join(th, NULL), 0);
    js_perf_ring_detach(busy);
    int after = perf_mappings();
    close(busy);
    close(cycled);
    printf("  perf mappings: %d before, %d with the busy ring after 2,000 cycles, %d at the end\n", before, during,
           after);
    assert_int_equal(during, before + 1);
    assert_int_equal(after, before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detach_unmaps_while_others_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

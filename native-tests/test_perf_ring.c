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
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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

/* A counter of this thread's kernel time that samples every period_ns with kernel call chains; -1 if refused. */
static int open_fast_counter(uint64_t period_ns)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = period_ns;
    a.sample_type = PERF_SAMPLE_CALLCHAIN;
    a.exclude_user = 1;
    a.exclude_callchain_user = 1;
    a.disabled = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Records read across the ring's end many times over: every chain read is whole, of kernel addresses only (records
 * that wrap round the end of the data area are put together from its two ends). */
static void test_chains_across_the_ring_end(void **state UNUSED)
{
    int fd = open_fast_counter(20000);
    if (fd < 0) {
        printf("  perf_event_open refused here (not root, perf_event_paranoid > 1?): skipped\n");
        return;
    }
    assert_int_equal(js_perf_ring_attach(fd), 0);
    assert_int_equal(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
    uintptr_t ips[64];
    long reads = 0, chains = 0, frames = 0;
    for (int i = 0; i < 400000; i++) {
        (void)syscall(SYS_getppid); /* kernel time for the counter */
        if (i % 100) continue;
        int n = js_perf_ring_kernel_ips(fd, ips, 64);
        reads++;
        assert_true(n >= 0 && n <= 64);
        if (n > 0) chains++;
        frames += n;
        for (int k = 0; k < n; k++)
            if (ips[k] < (uintptr_t)0xffff800000000000ULL) fail_msg("read %ld: frame %d is 0x%lx, not a kernel address", reads, k, (unsigned long)ips[k]);
    }
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    js_perf_ring_detach(fd);
    close(fd);
    printf("  %ld reads, %ld with a chain, %ld kernel frames\n", reads, chains, frames);
    assert_true(chains >= 500); /* about 70 bytes a record: far more than the 16 KiB data area went through */
}

/* A ring as the kernel writes it, in memory: records appended byte by byte at data_head, wrapping. */
typedef struct {
    uint8_t *map;
    size_t page, size;
} fake_ring;

static void fake_put(fake_ring *r, const void *bytes, size_t len)
{
    struct perf_event_mmap_page *pg = (struct perf_event_mmap_page *)r->map;
    for (size_t i = 0; i < len; i++) r->map[r->page + (pg->data_head + i) % r->size] = ((const uint8_t *)bytes)[i];
    pg->data_head += len;
}

/* A sample record whose chain is PERF_CONTEXT_KERNEL then n addresses base, base+1, ...; or another record type. */
static void fake_record(fake_ring *r, uint32_t type, int n, uint64_t base)
{
    struct perf_event_header h = {.type = type, .misc = 0, .size = (uint16_t)(sizeof h + 8 + 8 * (n + 1))};
    uint64_t nr = (uint64_t)n + 1, ctx = (uint64_t)PERF_CONTEXT_KERNEL;
    fake_put(r, &h, sizeof h);
    fake_put(r, &nr, 8);
    fake_put(r, &ctx, 8);
    for (int i = 0; i < n; i++) {
        uint64_t ip = base + (uint64_t)i;
        fake_put(r, &ip, 8);
    }
}

/* Records at every offset round the end of the data area, header, count and addresses cut anywhere: the newest
 * sample's chain is read whole and exact, earlier records and other types consumed. */
static void test_records_wrapping_the_end(void **state UNUSED)
{
    fake_ring r = {.page = (size_t)sysconf(_SC_PAGESIZE)};
    r.size = (JS_PERF_RING_PAGES - 1) * r.page;
    r.map = calloc(JS_PERF_RING_PAGES, r.page);
    assert_non_null(r.map);
    struct perf_event_mmap_page *pg = (struct perf_event_mmap_page *)r.map;
    uintptr_t ips[16];
    int checked = 0;
    for (uint64_t start = r.size - 200; start < r.size + 8; start += 8) { /* records are 8-byte aligned */
        pg->data_head = pg->data_tail = start + 7 * r.size; /* laps done before: offsets are taken modulo */
        fake_record(&r, PERF_RECORD_SAMPLE, 9, 0xffffffff81000000ULL); /* an older sample */
        fake_record(&r, PERF_RECORD_LOST, 0, 0);
        fake_record(&r, PERF_RECORD_SAMPLE, 7, 0xffffffff82000000ULL + start);
        int n = js_perf_ring_read(r.map, r.page, ips, 16);
        assert_int_equal(n, 7);
        for (int i = 0; i < n; i++) assert_int_equal(ips[i], 0xffffffff82000000ULL + start + (uint64_t)i);
        assert_int_equal(pg->data_tail, pg->data_head); /* every record consumed */
        assert_int_equal(js_perf_ring_read(r.map, r.page, ips, 16), 0); /* nothing new */
        checked++;
    }
    free(r.map);
    printf("  %d placements of three records round the ring's end read exactly\n", checked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detach_unmaps_while_others_read),
        cmocka_unit_test(test_chains_across_the_ring_end),
        cmocka_unit_test(test_records_wrapping_the_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

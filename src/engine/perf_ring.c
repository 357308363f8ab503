/* perf_ring.c - see perf_ring.h. */
#include "perf_ring_int.h"

#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_FDS 65536
#define RING_PAGES 5 /* the control page and four data pages: about 60 records of a 32-frame chain */

/* Process-wide like the counters: the ring of each counter fd. A ring is unmapped only once no handler is
 * reading any ring (Dekker-style: a handler counts itself in, then loads the pointer; detach clears the pointer,
 * then waits for the count to drain, 1 s at most, else leaves the ring mapped). */
static struct {
    void *_Atomic *_Atomic by_fd; /* set once (after page), read by handlers without the lock */
    _Atomic int readers;
    pthread_mutex_t lock;
    size_t page;
} R = {.lock = PTHREAD_MUTEX_INITIALIZER};

int js_perf_ring_attach(int fd)
{
    if (fd < 0 || fd >= MAX_FDS) return -1;
    pthread_mutex_lock(&R.lock);
    if (!R.page) R.page = (size_t)sysconf(_SC_PAGESIZE);
    if (!atomic_load(&R.by_fd)) {
        void *t = mmap(NULL, MAX_FDS * sizeof(void *), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (t != MAP_FAILED) atomic_store(&R.by_fd, (void *_Atomic *)t);
    }
    pthread_mutex_unlock(&R.lock);
    void *_Atomic *tab = atomic_load(&R.by_fd);
    if (!tab) return -1;
    void *m = mmap(NULL, RING_PAGES * R.page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) return -1;
    atomic_store(&tab[fd], m);
    return 0;
}

/* 1 if the reader count is seen at zero within about 2,000 looks (a read takes microseconds: with handlers
 * reading all the time there are gaps between them; a sleep of 1 ms per look cost a detach 1-12 ms on a VM). */
static int no_reader_moment(void)
{
    for (int i = 0; i < 2000; i++) {
        if (atomic_load(&R.readers) == 0) return 1;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    return 0;
}

void js_perf_ring_detach(int fd)
{
    void *_Atomic *tab = atomic_load(&R.by_fd);
    if (fd < 0 || fd >= MAX_FDS || !tab) return;
    void *m = atomic_exchange(&tab[fd], NULL);
    if (!m) return;
    /* One moment without readers is enough: a handler that enters after the exchange finds NULL, so none can hold
     * m any more, whatever other rings are read after it (a second look that found a new reader left rings mapped,
     * each keeping its counter alive in the kernel after its file was closed: test_perf_ring). */
    for (int i = 0; i < 1000; i++) {
        if (no_reader_moment()) {
            munmap(m, RING_PAGES * R.page);
            return;
        }
        usleep(1000);
    }
}

static int read_ring(struct perf_event_mmap_page *pg, uintptr_t *ips, int max);

int js_perf_ring_kernel_ips(int fd, uintptr_t *ips, int max)
{
    void *_Atomic *tab = atomic_load(&R.by_fd);
    if (fd < 0 || fd >= MAX_FDS || !tab) return 0;
    atomic_fetch_add(&R.readers, 1);
    struct perf_event_mmap_page *pg = atomic_load(&tab[fd]);
    int n = pg ? read_ring(pg, ips, max) : 0;
    atomic_fetch_sub(&R.readers, 1);
    return n;
}

/* The kernel frames of pg's newest sample record; consumes every record. */
static int read_ring(struct perf_event_mmap_page *pg, uintptr_t *ips, int max)
{
    const uint8_t *data = (const uint8_t *)pg + R.page;
    uint64_t size = (RING_PAGES - 1) * R.page, head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = pg->data_tail;
    int n = 0;
    if (head - tail > size - 512) { /* full (or lapped): the newest overflows were lost, the last record is stale */
        __atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
        return 0;
    }
    while (tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header h;
        for (size_t i = 0; i < sizeof h; i++) ((uint8_t *)&h)[i] = data[(tail + i) % size];
        if (h.size < sizeof h || tail + h.size > head) break;
        if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof h + 8) { /* the last sample wins */
            uint64_t nr, off = tail + sizeof h;
            for (size_t i = 0; i < 8; i++) ((uint8_t *)&nr)[i] = data[(off + i) % size];
            off += 8;
            n = 0;
            for (uint64_t k = 0; k < nr && off + 8 <= tail + h.size; k++, off += 8) {
                uint64_t ip;
                for (size_t i = 0; i < 8; i++) ((uint8_t *)&ip)[i] = data[(off + i) % size];
                if (ip >= (uint64_t)PERF_CONTEXT_MAX) continue; /* context markers */
                if (n < max) ips[n++] = (uintptr_t)ip;
            }
        }
        tail += h.size;
    }
    __atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
    return n;
}

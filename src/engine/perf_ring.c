/* perf_ring.c - see perf_ring.h. */
#include "perf_ring_int.h"

#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_FDS 65536
#define RING_PAGES JS_PERF_RING_PAGES /* the control page and four data pages: about 60 records of a 32-frame chain */
_Static_assert(((RING_PAGES - 1) & (RING_PAGES - 2)) == 0, "the data pages are a power of two (perf_event_open and ring_copy)");

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

int js_perf_ring_kernel_ips(int fd, uintptr_t *ips, int max)
{
    void *_Atomic *tab = atomic_load(&R.by_fd);
    if (fd < 0 || fd >= MAX_FDS || !tab) return 0;
    atomic_fetch_add(&R.readers, 1);
    struct perf_event_mmap_page *pg = atomic_load(&tab[fd]);
    int n = pg ? js_perf_ring_read(pg, R.page, ips, max) : 0;
    atomic_fetch_sub(&R.readers, 1);
    return n;
}

/* len bytes at ring offset off into dst: the data area is a power of two long (mask = its size - 1), and records
 * wrap round its end (the kernel aligns records and their 8-byte fields to 8 bytes, so a field read here never
 * straddles it; the split copy keeps any length right). */
static void ring_copy(void *dst, const uint8_t *data, uint64_t off, size_t len, uint64_t mask)
{
    size_t at = (size_t)(off & mask), room = (size_t)(mask + 1) - at;
    if (room >= len) {
        memcpy(dst, data + at, len);
    } else {
        memcpy(dst, data + at, room);
        memcpy((uint8_t *)dst + room, data, len - room);
    }
}

int js_perf_ring_read(void *ring, size_t page, uintptr_t *ips, int max)
{
    struct perf_event_mmap_page *pg = ring;
    const uint8_t *data = (const uint8_t *)pg + page;
    uint64_t size = (RING_PAGES - 1) * page, mask = size - 1;
    uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = pg->data_tail;
    int n = 0;
    if (head - tail > size - 512) { /* full (or lapped): the newest overflows were lost, the last record is stale */
        __atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
        return 0;
    }
    while (tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header h;
        ring_copy(&h, data, tail, sizeof h, mask);
        if (h.size < sizeof h || tail + h.size > head) break;
        if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof h + 8) { /* the last sample wins */
            uint64_t nr, off = tail + sizeof h;
            ring_copy(&nr, data, off, 8, mask);
            off += 8;
            n = 0;
            for (uint64_t k = 0; k < nr && off + 8 <= tail + h.size; k++, off += 8) {
                uint64_t ip;
                ring_copy(&ip, data, off, 8, mask);
                if (ip >= (uint64_t)PERF_CONTEXT_MAX) continue; /* context markers */
                if (n < max) ips[n++] = (uintptr_t)ip;
            }
        }
        tail += h.size;
    }
    __atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
    return n;
}

/* perf_ring_int.h - the sample ring of a perf_events counter, for the kernel stack of its last overflow.
 *
 * With PERF_SAMPLE_CALLCHAIN and exclude_callchain_user, each overflow writes the kernel call chain (none when
 * it struck in user mode) into a five-page ring (four of data) mapped for the counter. The handler reads the newest record
 * and consumes the rest. Private to the perf engine.
 */
#ifndef JS_PERF_RING_INT_H
#define JS_PERF_RING_INT_H

#include <stddef.h>
#include <stdint.h>

/* Pages of a counter's mapping: the control page, then the data area (a power of two of pages). */
#define JS_PERF_RING_PAGES 5

/* Map fd's ring (normal thread): 0, or -1 (no kernel stacks for this counter). */
int js_perf_ring_attach(int fd);
/* Forget fd's ring before fd is closed (normal thread). */
void js_perf_ring_detach(int fd);
/* Signal-safe: the kernel frames of fd's newest sample, leaf first, into ips[0..max); their number. */
int js_perf_ring_kernel_ips(int fd, uintptr_t *ips, int max);
/* Signal-safe: the same from a mapping at ring (JS_PERF_RING_PAGES pages of `page` bytes), consuming every record. */
int js_perf_ring_read(void *ring, size_t page, uintptr_t *ips, int max);

#endif

/* safe_read.h - guarded reads of memory the profiler does not own, from a signal handler.
 *
 * A walker reads HotSpot's structures while the VM may be freeing them (a flushed nmethod, an
 * unloaded class's metadata, a frame half built). js_safe_read copies through the kernel
 * (process_vm_readv on our own pid), which answers EFAULT for an unmapped or protected address
 * instead of raising SIGSEGV: a stale pointer costs a failed read, never a crash. It costs a
 * system call (about 1 us here), so callers check addresses against ranges known to be mapped
 * first (js_safe_range) and read those directly.
 */
#ifndef JS_SAFE_READ_H
#define JS_SAFE_READ_H

#include <stddef.h>
#include <stdint.h>

/* Signal-safe. Copy n bytes at addr into dst: 0, or -1 if any of them cannot be read. */
int js_safe_read(uintptr_t addr, void *dst, size_t n);

/* Signal-safe. Read one word at addr: 0, or -1. */
int js_safe_word(uintptr_t addr, uintptr_t *out);

/* A range [lo, hi) that stays mapped while it is used (e.g. the interrupted thread's live stack). */
typedef struct {
    uintptr_t lo, hi;
} js_safe_range;

/* 1 if [addr, addr+n) lies in r and addr is aligned to `align` (a power of two, or 1). */
static inline int js_safe_in(const js_safe_range *r, uintptr_t addr, size_t n, size_t align)
{
    return addr >= r->lo && addr <= r->hi && n <= r->hi - addr && (addr & (align - 1)) == 0;
}

/* Reads that went through the kernel and failed, since start (for tests and status). */
uint64_t js_safe_read_faults(void);

#endif

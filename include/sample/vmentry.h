/* vmentry.h - the VM's allocation and runtime entry functions, so an allocation sample can drop the frames the VM
 * runs after them (the allocator, the JVMTI poster, the agent's own callback or trap), as async-profiler does.
 *
 * A table of [start, end) code ranges, set once outside any handler (core/alloc_native_int.h finds them in libjvm)
 * and only read afterwards.
 */
#ifndef JS_VMENTRY_H
#define JS_VMENTRY_H

#include <stdint.h>

#include "sample/store.h"

#define JS_VMENTRY_MAX 2048 /* ranges kept (HotSpot 17 has ~310 such functions, 25 ~380) */

/* Keep ranges[0..n) (sorted by start; at most JS_VMENTRY_MAX; overlapping ones merged), once. Normal threads, before
 * any reader. */
void js_vmentry_set(const uintptr_t (*ranges)[2], int n);
/* How many ranges are set. */
int js_vmentry_count(void);
/* Drop the leading native frames of f[0..n) (JS_RF_NATIVE_PC, leaf first) up to and including the one nearest the
 * root that returns into an entry function; the count left. -1 (f unchanged) when no leading frame is in one.
 * Signal-safe. */
int js_vmentry_trim(js_raw_frame *f, int n);

#endif

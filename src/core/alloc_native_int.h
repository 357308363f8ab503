/* alloc_native_int.h - the native frames of an allocation sample, as async-profiler shows them with cstack=fp|dwarf.
 *
 * A sampled allocation is reported from inside the VM: the JVMTI callback, its poster, the allocator. Those frames are
 * walked over and dropped; what is kept is what called into the VM's allocation or runtime entry (MemAllocator::
 * allocate, OptoRuntime::, Runtime1::, SharedRuntime::, InterpreterRuntime::, post_allocation_notify): nothing for Java
 * code's own allocations, the VM's functions for its allocations (JNI_CreateJavaVM at start-up, reflection, class
 * loading) down to the first Java frame or the thread's root. Normal threads (the JVMTI callback).
 */
#ifndef JS_ALLOC_NATIVE_INT_H
#define JS_ALLOC_NATIVE_INT_H

#include <stdint.h>

#include "core/args.h"
#include "sample/store.h"

/* An address in libjvm (JNI_CreateJavaVM), 0 if none is found. */
uintptr_t js_alloc_native_jvm_pc(void);
/* Find libjvm's entry functions, once per process; how many (0: none known, no native frames will be kept). */
int js_alloc_native_prepare(void);
/* The calling thread's native frames below the VM's entry into out[0..max), leaf first, walked by cstack's walker
 * (none for JS_CSTACK_NO or before js_alloc_native_prepare); their count. *in_java: the walk reached Java code. */
int js_alloc_native_frames(js_cstack cstack, js_raw_frame *out, int max, int *in_java);

/* tlab (sample/tlab.h): hook libjvm's two TLAB event functions for the session a describes (every event when alloc=
 * was not given, else one each alloc= bytes); 0, or -1 with one line in err (e.g. a VM without them). */
int js_alloc_tlab_start(const js_args *a, char *err, size_t errlen);
/* Unhook them. */
void js_alloc_tlab_stop(void);

#endif

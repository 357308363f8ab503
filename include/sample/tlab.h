/* tlab.h - tlab: allocation samples from the VM's own TLAB events, as async-profiler's `tlab` takes them.
 *
 * HotSpot reports a new TLAB (AllocTracer::send_allocation_in_new_tlab: the class, the new TLAB's size and the
 * object's) and an allocation outside any TLAB (send_allocation_outside_tlab: the class and the object's size) to
 * its own JFR through two functions. Both are hooked (sample/trap.h): each call runs the hook in a SIGTRAP handler
 * and returns without running the function, so while tlab profiling runs the JDK's own Flight Recorder sees no
 * allocation events (jdk.ObjectAllocationInNewTLAB, ...OutsideTLAB, ...Sample and the old-object samples). Each
 * event's bytes (the new TLAB's size, the object's size) are counted; interval 0 or 1 takes every event, a larger
 * one a sample each time the bytes counted since the last sample reach it, weighted by those bytes. The sample is
 * the interrupted thread's stack (walked as a signal sample is, the VM's own frames above its allocation entry
 * dropped) under a JS_RF_KLASS frame (method = the Klass*, bci = 1 outside a TLAB, 0 in a new one).
 */
#ifndef JS_TLAB_H
#define JS_TLAB_H

#include <stddef.h>
#include <stdint.h>

/* Hook the two functions (addresses in libjvm) and sample every interval bytes; 0, or -1 with err. Normal threads. */
int js_tlab_start(uintptr_t in_new_tlab, uintptr_t outside_tlab, uint64_t interval, char *err, size_t errlen);
/* Unhook them. Normal threads. */
void js_tlab_stop(void);

#endif

/* walk_vmx.h - cstack=vmx: the VM's own frames between the Java frames and below them, as async-profiler's vmx
 * mode shows them (InstanceKlass::initialize between a class initializer and Class.forName0, call_stub and
 * JavaCalls::call_helper where the VM calls Java, JavaMain under main).
 *
 * After the native frames above the Java ones and the Java frames are walked, the thread's stack is searched for
 * the VM's entry frames (call_stub, found by its return address into it, and its frame by its return address into
 * JavaCalls::call_helper); from each, the native frames are walked down to the Java code that called into the VM,
 * whose own frames are then known: the JavaCallWrapper of the entry frame holds the anchor where that Java code
 * left off. Signal-safe; what cannot be read leaves the stack as it was.
 */
#ifndef JS_WALK_VMX_H
#define JS_WALK_VMX_H

#include <stdint.h>
#include "sample/native_walk.h"
#include "sample/store.h"

/* Turn vmx on (normal thread, before the handler samples with it): [helper_lo, helper_hi) is
 * JavaCalls::call_helper's code. */
void js_vmx_set(int on, uintptr_t helper_lo, uintptr_t helper_hi);
/* Signal-safe: frames[0..nat) native frames, frames[nat..nat+nj) the Java frames of uc's thread; splice the VM's
 * frames in, walking them with nw. The new count (at most max). */
int js_vmx_splice(void *uc, const js_native_walker *nw, js_raw_frame *frames, int nat, int nj, int max);

#endif

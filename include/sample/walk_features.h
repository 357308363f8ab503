/* walk_features.h - async-profiler's stack-walk features (features=vtable,comptask) as frames added to a walked stack.
 *
 * vtable: a sample taken in a vtable or itable stub gets, below the stub's frame, a frame naming the class of the
 * call's receiver (read from the object in the receiver's register: the first argument of compiled Java code,
 * rsi). comptask: a sample of a JIT compiler thread gets, below its compiler's entry function
 * (Compiler::compile_method, C2Compiler::compile_method), a frame for the Java method it is compiling. Signal-safe
 * reads only (js_safe_read); what cannot be read adds nothing.
 */
#ifndef JS_WALK_FEATURES_H
#define JS_WALK_FEATURES_H

#include <stdint.h>
#include "sample/store.h"

#define JS_FEATURES_ENTRIES 4 /* compiler entry functions at most */

/* Set the features (normal thread, before the handler samples with them): entries are [start, end) of the compiler
 * entry functions. */
void js_features_set(int vtable, int comptask, const uintptr_t (*entries)[2], int nentries);
/* Signal-safe: add the frames of the features on to frames[0..n) (leaf first), uc the interrupted context. The
 * thread's JavaThread* is looked up only when comptask is on. The new count, at most max. */
int js_features_apply(const void *uc, js_raw_frame *frames, int n, int max);

#endif

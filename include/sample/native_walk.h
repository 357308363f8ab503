/* native_walk.h - the native frames of an interrupted thread, by its frame pointers (cstack=fp).
 *
 * From the interrupted pc up the rbp chain: each frame's saved rbp and return address are read with bounds
 * (inside the thread's live stack when HotSpot tells where it ends, else through js_safe_read, which answers a
 * bad address with an error instead of a fault), each rbp strictly above the last and within 8 MiB of the
 * interrupted sp. The walk stops at the first return address into the Java code cache (the Java frames
 * follow), at a null or non-increasing frame pointer, or after max frames. Code built without frame pointers
 * (much of libc) costs the frame of its caller, never a wrong read. Frames are JS_RF_NATIVE_PC (method = the
 * pc; a return address is kept as it is and named at pc - 1). Signal-safe.
 */
#ifndef JS_NATIVE_WALK_H
#define JS_NATIVE_WALK_H

#include "sample/store.h"

/* Walk from the registers in ucontext uc into out[0..max), leaf first; the number of frames (0 when the pc is in
 * Java code). *in_java is set to 1 when the walk reached Java code (Java frames follow), else 0. */
int js_native_walk(const void *uc, js_raw_frame *out, int max, int *in_java);

#endif

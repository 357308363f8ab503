/* native_walk.h - the native frames of an interrupted thread (cstack=fp|dwarf), behind one small interface.
 *
 * Both walkers go from the interrupted pc towards the thread's root and stop at the first frame in the Java code
 * cache (the Java walk takes over there), at a frame they cannot read, or after max frames. Frames are
 * JS_RF_NATIVE_PC (method = the pc; bci 0 the interrupted pc, 1 a return address, named at pc - 1).
 *
 * fp: the rbp chain. Each frame's saved rbp and return address are read with bounds (inside the thread's live
 *     stack when HotSpot tells where it ends, else through js_safe_read, which answers a bad address with an error
 *     instead of a fault), each rbp strictly above the last and within 8 MiB of the interrupted sp. Code built
 *     without frame pointers (much of libc) costs the frame of its caller, never a wrong read.
 * dwarf: libunwind over the objects' .eh_frame tables, as a "remote" address space whose accessors read the
 *     interrupted registers, the live stack and private copies of the unwind data directly and anything else
 *     through js_safe_read; its unwind-info lookup is ours (native_objects.h), so the handler never enters the
 *     loader's lock nor reads an unloaded library. Every frame of compiled C and C++ with unwind tables is found,
 *     frame pointers or not.
 */
#ifndef JS_NATIVE_WALK_H
#define JS_NATIVE_WALK_H

#include <stddef.h>

#include "sample/store.h"

typedef struct js_native_walker {
    const char *name; /* the cstack= value */
    /* Signal-safe: walk from the registers in ucontext uc into out[0..max), leaf first; the number of frames
     * (0 when the pc is in Java code). *in_java is set to 1 when the walk reached Java code, else 0. */
    int (*walk)(const void *uc, js_raw_frame *out, int max, int *in_java);
} js_native_walker;

extern const js_native_walker js_native_fp;
extern const js_native_walker js_native_dwarf; /* walks only once core/native_prep.c has made it ready */

/* cstack=dwarf's libunwind address space: the accessors to make it with (a unw_accessors_t *), and the space made
 * with them, handed over once, outside any handler, before the first walk. */
void *js_native_dwarf_accessors(void);
void js_native_dwarf_use(void *space);

#endif

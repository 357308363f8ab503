/* unwind.h - step out of the code HotSpot leaves unwalkable for AsyncGetCallTrace (x86-64).
 *
 * AsyncGetCallTrace refuses a thread whose pc sits where no frame is complete: a vtable or
 * itable stub, a compiled method's prologue (before `push rbp; sub rsp, N` is done) or its
 * epilogue (after `add rsp, N`, at `pop rbp`, the return poll or `ret`). In each of these the
 * return address is at a place the instructions themselves tell: js_unwind_top decodes the few
 * instructions around pc and computes the caller's pc, sp and fp, reading the stack only inside
 * `stack`. Anything it does not recognise is refused (a counted failure), never guessed.
 */
#ifndef JS_UNWIND_H
#define JS_UNWIND_H

#include <stdint.h>

#include "sample/codecache.h"
#include "sample/safe_read.h"

typedef struct {
    uintptr_t pc, sp, fp;
} js_regs;

/* What js_unwind_top stepped out of (>0), or why it could not (<0). */
enum {
    JS_UW_STUB = 1,         /* a stub without a frame: popped its return address */
    JS_UW_PROLOGUE = 2,     /* a compiled method whose frame was not yet built */
    JS_UW_EPILOGUE = 3,     /* a compiled method tearing its frame down */
    JS_UW_FRAME = 4,        /* a stub with a complete fixed-size frame */
    JS_UW_NATIVE = 5,       /* VM or library code called from Java: followed its frame pointers */
    JS_UW_BODY = 6,         /* a compiled method's body that AsyncGetCallTrace refused: its fixed-size frame */
    JS_UW_SHIFTED = 7,      /* a compiled method's body with words pushed below its frame: r->sp is now the frame's */
    JS_UW_UNKNOWN_CODE = -1, /* instructions not recognised */
    JS_UW_BAD_STACK = -2,    /* a slot outside the thread's live stack, or a return address outside the code cache */
    JS_UW_INTERPRETER = -3,  /* the interpreter: not handled */
    JS_UW_BAD_ENTRY = -4     /* the nmethod's entry point is not inside its code */
};

/* Signal-safe. r holds the interrupted registers, b the blob holding r->pc, verified_entry the
 * nmethod's verified entry (0 for other blobs). On success r holds the caller's registers. */
int js_unwind_top(const js_blob *b, uintptr_t verified_entry, const js_safe_range *stack, js_regs *r);

/* Signal-safe. r->pc is outside the code cache (C++ code of the VM called from Java without a
 * state change): step out frame by frame by the code's call-frame information (unwind_cfi.h) to
 * the first return address into the code cache; where no table describes the code, follow the rbp
 * chain, or take the return address on top of the stack. On success r holds the Java caller's
 * registers. */
int js_unwind_native(const js_safe_range *stack, js_regs *r);

/* Signal-safe. Step out of a compiled frame of the blob's fixed size whose sp is r->sp (JS_UW_BODY). */
int js_unwind_frame(const js_blob *b, const js_safe_range *stack, js_regs *r);

#endif

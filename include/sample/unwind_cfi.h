/* unwind_cfi.h - step out of native code by the call-frame information its compiler wrote (.eh_frame, x86-64).
 *
 * VM code that compiled Java calls without a thread-state change (os::javaTimeNanos from a leaf call, G1's
 * barrier entries, ...) is not always built with frame pointers, and even where it is, a sample can land before
 * `mov rbp, rsp` or after `pop rbp`. The DWARF call-frame information every object carries for exception
 * unwinding tells, for each instruction, where the caller's frame starts (the CFA), where the return address and
 * the saved rbp are. Only objects that are never unloaded are used (libjvm, libc, libm, the vDSO): their tables
 * are read in place, every read bounded to the read-only segment that holds them, and a rule this reader does not
 * know (an expression, a register rule for rbp or the return address) ends the step instead of a guess.
 */
#ifndef JS_UNWIND_CFI_H
#define JS_UNWIND_CFI_H

#include <link.h>
#include <stdint.h>

#include "sample/safe_read.h"
#include "sample/unwind.h"

/* What js_cfi_step did. */
enum {
    JS_CFI_OK = 0,    /* r holds the caller's registers */
    JS_CFI_NONE = -1, /* no table covers pc (not a registered object, or code without a description) */
    JS_CFI_BAD = -2   /* a table covers pc but could not be followed: unknown rule, corrupt entry, slot off-stack */
};

/* Signal-safe. One step out of the native function holding r->pc, reading the stack only inside `stack`.
 * `interrupted` is 1 for the signal's own pc (the instruction about to run), 0 for a return address (looked up at
 * pc - 1, inside the call). */
int js_cfi_step(const js_safe_range *stack, js_regs *r, int interrupted);

/* Normal thread, once: register the loaded libjvm, libc, libm and the vDSO. The number registered. */
int js_cfi_init(void);

/* Normal thread: register one object from its program headers (as dl_iterate_phdr reports them); 0, or -1 if it
 * has no usable .eh_frame_hdr (or the table of objects is full). Tests register objects of their own. */
int js_cfi_add(uintptr_t base, const ElfW(Phdr) *phdr, int phnum);

/* Normal thread, no handler running: forget every registered object (tests). */
void js_cfi_reset(void);

#endif

/* trap.h - begin=/end= (and ttsp): profiling windows opened and closed by two native functions, as async-profiler
 * takes them.
 *
 * A breakpoint instruction (int3) is written on the first byte of begin; the thread that runs into it opens the
 * window, and the breakpoint moves to end; the thread that runs into that closes the window (recorded: its start,
 * end and thread), and the breakpoint moves back to begin. Each time the byte is put back and the instruction run
 * again, so the functions behave as before. The code pages of both functions are writable while armed. Samples of
 * the execution and wall events are kept only inside a window, unless nostop (the windows are then only recorded).
 * The SIGTRAP handler stays installed for the life of the process and passes on every trap that is not ours.
 */
#ifndef JS_TRAP_H
#define JS_TRAP_H

#include <stddef.h>
#include <stdint.h>

#define JS_TRAP_WINDOWS 1024 /* windows recorded and not yet taken; more are counted as lost */

typedef struct {
    uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
    int tid;                   /* the thread that closed the window */
} js_trap_window;

/* Hooks (tlab: the VM's allocation event functions): a breakpoint on each function's first byte, kept armed; a call
 * returns at once, the function's body not run, and fn runs in the SIGTRAP handler with the registers as after that
 * return (the pc and stack pointer the caller's, the arguments still in their registers). Only for functions whose work may be skipped (they return nothing the caller uses). */
#define JS_TRAP_HOOKS 2
typedef void (*js_trap_hook_fn)(void *uc, int which); /* which: the index into at[] */
/* Hook the n (<= JS_TRAP_HOOKS) functions at at[]; 0, or -1 with err. Normal threads. */
int js_trap_hook(const uintptr_t *at, int n, js_trap_hook_fn fn, char *err, size_t errlen);
/* Put the hooked functions' bytes back (a trap still on its way runs the function itself). Normal threads. */
void js_trap_unhook(void);

/* Arm the breakpoints on begin (non-zero) and end (0: the window never closes). 0, or -1 with err. Normal threads. */
int js_trap_arm(uintptr_t begin, uintptr_t end, int nostop, char *err, size_t errlen);
/* Put the functions' bytes back and keep every sample again, once no trap handler can write them (a second at most).
 * 0, or -1 if one was still at work after that: the code is put back, its pages left writable. Normal threads. */
int js_trap_disarm(void);
/* 1 if a sample taken now is kept (no window armed, nostop, or a window is open). Signal-safe. */
int js_trap_keep(void);
/* Take the windows recorded since the last call, oldest first, into out[0..max); their count. Normal threads. */
int js_trap_take(js_trap_window *out, int max);
/* Windows lost to a full buffer since arming. */
uint64_t js_trap_lost(void);

/* Function events (event=read and the like) count calls with a hardware execute breakpoint, which the kernel handles
 * itself. Should a debug trap there reach the process all the same (the kernel gives SIGTRAP to a debug exception it
 * cannot match to a breakpoint of its own, e.g. one the hypervisor reported without its cause), it would end the JVM,
 * which has no SIGTRAP handler on x86. Guarded, the address's SIGTRAP is absorbed and counted and the function runs
 * on (the resume flag set in the signal frame, which sigreturn restores). For good: a trap may come after the event is
 * closed. 0, or -1 with err (256 functions in a process's life). Normal threads. */
int js_trap_guard_hw(uintptr_t at, char *err, size_t errlen);
/* Traps absorbed at guarded hardware breakpoints in this process's life. */
uint64_t js_trap_hw_strays(void);

#endif

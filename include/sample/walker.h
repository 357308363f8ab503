/* walker.h - stack walkers behind one interface.
 *
 * A walker runs inside the profiling signal handler on the interrupted thread: it must be
 * async-signal-safe (no malloc, no locks, no JVMTI/JNI). It fills frames leaf first and
 * returns the count (>0) or a negative JS_WALK_* code, which the caller turns into a
 * pseudo-frame so totals still add up.
 */
#ifndef JS_WALKER_H
#define JS_WALKER_H

#include <signal.h>

#include "sample/safe_read.h"
#include "sample/store.h"

/* Error codes: the AsyncGetCallTrace values, plus our own. */
enum {
    JS_WALK_NO_JAVA_FRAME = 0,
    JS_WALK_NO_CLASS_LOAD = -1,
    JS_WALK_GC_ACTIVE = -2,
    JS_WALK_UNKNOWN_NOT_JAVA = -3,
    JS_WALK_NOT_WALKABLE_NOT_JAVA = -4,
    JS_WALK_UNKNOWN_JAVA = -5,
    JS_WALK_NOT_WALKABLE_JAVA = -6,
    JS_WALK_UNKNOWN_STATE = -7,
    JS_WALK_THREAD_EXIT = -8,
    JS_WALK_DEOPT = -9,
    JS_WALK_SAFEPOINT = -10,
    JS_WALK_NO_ENV = -11, /* the interrupted thread has no JNIEnv: not a Java thread */
    /* Not a failure: the root-most pseudo-frame of a stack cut at jstackdepth ("[truncated]"). */
    JS_WALK_TRUNCATED = -12,
    /* Not a walk: a sample over its thread's handler budget, kept on this one pseudo-frame ("[throttled]"). */
    JS_WALK_THROTTLED = -13
};

/* Pseudo-frame name for a walker error code, e.g. "[unknown_Java]". */
const char *js_walk_error_name(int code);

typedef struct {
    const char *name;
    /* Set up outside signal context, on a normal thread (symbol lookup; java_vm is the JavaVM*).
     * 0 or -1 with err. */
    int (*init)(void *java_vm, char *err, size_t errlen);
    /* Signal-safe: walk the interrupted (current) thread from the handler's ucontext; the walker
     * finds the thread's JNIEnv itself (JS_WALK_NO_ENV if it has none). */
    int (*walk)(void *ucontext, js_raw_frame *frames, int max);
} js_walker;

/* Signal-safe: the interrupted thread's live stack [sp, base) when it is a Java thread HotSpot knows the stack of;
 * 0, or -1 (st untouched). */
int js_walker_stack_range(uintptr_t sp, js_safe_range *st);
/* Signal-safe: block every signal but the synchronous ones (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP: blocked, a
 * fault would kill the process, and HotSpot's safe reads fault on purpose) while a thread's anchor is changed; the
 * mask before in *old. 0, or -1 (nothing blocked). */
int js_walker_block_async(sigset_t *old);

extern const js_walker js_walker_agct;
/* AsyncGetCallTrace, stepping out of stubs and compiled prologues/epilogues it cannot start from
 * (walker_recover.c); plain AsyncGetCallTrace when HotSpot's layout is not understood. */
extern const js_walker js_walker_recover;

#endif

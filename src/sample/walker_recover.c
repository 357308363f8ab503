/* walker_recover.c - AsyncGetCallTrace, and recovery where it cannot start.
 *
 * AsyncGetCallTrace gives up (ticks_unknown_Java, ticks_not_walkable_Java) when the interrupted
 * pc is where no complete frame exists: a vtable/itable stub, a compiled method's prologue or
 * epilogue, VM code called from Java. On polymorphic code that is a fifth to a half of all
 * samples, and not a random one: it is the hottest polymorphic code. This walker finds the code
 * blob holding the pc (HotSpot's own code cache, through the layout it publishes), steps out of it
 * (unwind_x64.c: decoding the few instructions around pc, a frame pointer, or the blob's frame
 * size), and runs AsyncGetCallTrace again from the caller with a copy of the signal context. When the blob is a compiled method, the method itself becomes the
 * leaf frame (its jmethodID found from its Method*, vmmethod.c); a stub adds no frame (its
 * dispatch time belongs to the call site that entered it).
 *
 * One more case: a thread in VM code whose frame anchor holds its sp but not its pc (the runtime
 * stubs C2 calls on allocation's slow path record only the sp). AsyncGetCallTrace calls that
 * "unknown"; complete_anchor points the anchor at the Java frame for the walk, as HotSpot itself
 * completes an anchor before it walks such a thread, and puts it back after.
 *
 * That is the only write to VM memory (the interrupted thread's own anchor, set and restored by
 * that thread's handler); every read is bounded: the code cache's committed ranges,
 * the interrupted thread's live stack [sp, stack base), libjvm's image for blob names, and
 * js_safe_read for metadata. A sample that still cannot be walked keeps AsyncGetCallTrace's code.
 */
#include "sample/walker.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <ucontext.h>

#include "sample/codecache.h"
#include "sample/safe_fmt.h"
#include "sample/safe_read.h"
#include "sample/stats.h"
#include "sample/unwind.h"
#include "sample/unwind_cfi.h"
#include "sample/vmlayout.h"
#include "sample/vmmethod.h"
#include "walker_int.h"

/* Set once at init (normal thread): 1 when the layout was understood and guarded reads work. */
static int enabled;

static int live_stack(uintptr_t sp, js_safe_range *st);

int js_walker_block_async(sigset_t *old)
{
    static const int synchronous[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP};
    sigset_t async_signals; /* sigfillset and sigdelset are async-signal-safe */
    sigfillset(&async_signals);
    for (size_t i = 0; i < sizeof synchronous / sizeof synchronous[0]; i++) sigdelset(&async_signals, synchronous[i]);
    return pthread_sigmask(SIG_BLOCK, &async_signals, old) == 0 ? 0 : -1;
}

int js_walker_stack_range(uintptr_t sp, js_safe_range *st)
{
    return enabled && js_vm.ok ? live_stack(sp, st) : -1;
}

/* The interrupted thread's live stack: from its sp up to HotSpot's recorded stack base. */
static int live_stack(uintptr_t sp, js_safe_range *st)
{
    uintptr_t thread = js_agct_vm_thread();
    if (!thread) return -1;
    uintptr_t base = *(const volatile uintptr_t *)(thread + (uintptr_t)js_vm.jt_stack_base);
    size_t size = *(const volatile size_t *)(thread + (uintptr_t)js_vm.jt_stack_size);
    if (!base || sp >= base || base - sp > size) return -1;
    st->lo = sp;
    st->hi = base;
    return 0;
}

/* The nmethod's verified entry point, or 0. */
static uintptr_t verified_entry(const js_blob *b)
{
    if (b->kind != JS_BLOB_NMETHOD) return 0;
    if (js_vm.nm_verified_entry_point >= 0)
        return *(const volatile uintptr_t *)(b->start + (uintptr_t)js_vm.nm_verified_entry_point);
    return b->code_begin + *(const volatile uint16_t *)(b->start + (uintptr_t)js_vm.nm_verified_entry_offset);
}

#define MAX_STUB_STEPS 3

/* Count where a walk failed, unless the sample keeps other frames (counted is 0). */
static void failed_in(int counted, const char *where)
{
    if (counted) js_stats_failed_in(where);
}

/* Count a recovery's outcome; a failure only when counted (0: the sample keeps other frames). */
static void recovery(int counted, int outcome)
{
    if (counted || !JS_RECOVER_FAILED(outcome)) js_stats_recovery(outcome);
}

/* After a first step: while the caller is itself a stub (VM code returning into a runtime stub),
 * step out of it too, so AsyncGetCallTrace starts from Java code. pc is a return address here, so
 * a stub with a frame has built it, even one that never marks its frame complete (C2's runtime
 * stubs): its frame size tells where its caller is. 0, or -1 if a step fails (counted where, if counted). */
static int through_stubs(const js_safe_range *st, js_regs *r, int counted)
{
    js_blob b;
    for (int i = 0; i < MAX_STUB_STEPS; i++) {
        if (js_codecache_find(r->pc, &b) != JS_CC_FOUND) {
            failed_in(counted, "a caller outside the code cache");
            return -1;
        }
        if (b.kind != JS_BLOB_STUB) return 0;
        if ((b.frame_size > 0 ? js_unwind_frame(&b, st, r) : js_unwind_top(&b, 0, st, r)) < 0) {
            failed_in(counted, b.name ? b.name : "a caller stub");
            return -1;
        }
    }
    return failed_in(counted, "a chain of stubs"), -1;
}

/* AsyncGetCallTrace from a copy of the signal context with pc, sp and fp replaced. */
static int walk_from(const ucontext_t *uc, const js_regs *r, js_raw_frame *frames, int max)
{
    ucontext_t at = *uc;
    at.uc_mcontext.gregs[REG_RIP] = (greg_t)r->pc;
    at.uc_mcontext.gregs[REG_RSP] = (greg_t)r->sp;
    at.uc_mcontext.gregs[REG_RBP] = (greg_t)r->fp;
    return js_walker_agct.walk(&at, frames, max);
}

/* The frame of the stub the thread was interrupted in at pc: a native frame, named outside the handler as the VM
 * names the stub ("vtable stub", "jbyte_disjoint_arraycopy": core/codenames.h). */
static js_raw_frame stub_frame(uintptr_t pc)
{
    return (js_raw_frame){.bci = 0, .kind = JS_RF_NATIVE_PC, .method = (const void *)pc};
}

static int recover(ucontext_t *uc, js_raw_frame *frames, int max, int code, int counted);

/* After AsyncGetCallTrace walked n (> 0) frames from a pc in a stub, which it leaves out (it starts from the stub's
 * Java caller): the stub's frame on top, as async-profiler shows it, when there is room. The new count. */
static int with_stub_frame(const ucontext_t *uc, js_raw_frame *frames, int n, int max)
{
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    js_blob b;
    if (n >= max || !js_codecache_contains(pc) || js_codecache_find(pc, &b) != JS_CC_FOUND || b.kind != JS_BLOB_STUB)
        return n;
    if (b.name && strcmp(b.name, "vtable chunks") == 0) { /* a dispatch stub: its caller's frames from the call site */
        int m = recover((ucontext_t *)uc, frames, max, 0, 0); /* a failure is not counted: AGCT's frames stay */
        if (m > 0) return m;
        n = js_walker_agct.walk((void *)uc, frames, max); /* recovery failed: as AsyncGetCallTrace gave it */
        if (n <= 0 || n >= max) return n;
    }
    memmove(frames + 1, frames, (size_t)n * sizeof *frames);
    frames[0] = stub_frame(pc);
    return n + 1;
}

/* Step out of the blob holding the interrupted pc and walk again from the caller; code if that fails. Its outcome
 * goes to the statistics, a failure only when counted (0: the caller keeps frames of its own). */
static int recover(ucontext_t *uc, js_raw_frame *frames, int max, int code, int counted)
{
    greg_t *g = uc->uc_mcontext.gregs;
    js_regs r = {(uintptr_t)g[REG_RIP], (uintptr_t)g[REG_RSP], (uintptr_t)g[REG_RBP]};
    js_safe_range st;
    js_blob b;
    if (live_stack(r.sp, &st) != 0) return recovery(counted, JS_RECOVER_NO_STACK), code;
    int found = js_codecache_find(r.pc, &b);
    if (found == JS_CC_BAD) return recovery(counted, JS_RECOVER_BAD_BLOB), code;
    if (found == JS_CC_OUTSIDE) b.kind = 0;
    int how = found == JS_CC_OUTSIDE ? js_unwind_native(&st, &r) : js_unwind_top(&b, verified_entry(&b), &st, &r);
    if (how == JS_UW_SHIFTED) { /* the method's frame found under what an inline intrinsic pushed: walk it whole */
        int n = walk_from(uc, &r, frames, max);
        if (n > 0) return js_stats_recovery(JS_RECOVERED_BODY), n;
        how = js_unwind_frame(&b, &st, &r); /* else from its caller, the method as the leaf */
    }
    if (how < 0) {
        if (how != JS_UW_INTERPRETER) failed_in(counted, found == JS_CC_OUTSIDE ? "VM code" : b.name ? b.name : "a blob");
        recovery(counted, how == JS_UW_INTERPRETER ? JS_RECOVER_INTERPRETER
                          : found == JS_CC_OUTSIDE ? JS_RECOVER_NOT_CODE
                                                   : JS_RECOVER_NO_UNWIND);
        return code;
    }
    if (through_stubs(&st, &r, counted) != 0) return recovery(counted, JS_RECOVER_NO_UNWIND), code;
    /* r.pc is now a return address. AsyncGetCallTrace takes the pc it starts from as a pc inside the frame's code
     * and looks for the debug information after it (pc + 1): from the return address that would be the code after
     * the call, whose inlining may differ (without DebugNonSafepoints, often the enclosing method alone). From the
     * call instruction's last byte it finds the call site's own record: the caller's exact inlined frames. */
    r.pc -= 1;
    int lead = 0;
    if (b.kind == JS_BLOB_NMETHOD && max > 1) {
        const void *id = js_vm_method_id(b.method);
        frames[0].method = id;
        frames[0].bci = how == JS_UW_PROLOGUE ? 0 : -1; /* the entry; else unknown (an epilogue, a body) */
        frames[0].kind = id ? JS_RF_JAVA : JS_RF_NULL_ID;
        lead = 1;
    } else if (b.kind == JS_BLOB_STUB && max > 1) {
        frames[0] = stub_frame((uintptr_t)g[REG_RIP]);
        lead = 1;
    }
    int n = walk_from(uc, &r, frames + lead, max - lead);
    if (n <= 0) {
        recovery(counted, JS_RECOVER_RETRY_FAILED);
        return code;
    }
    js_stats_recovery(how == JS_UW_STUB || how == JS_UW_FRAME ? JS_RECOVERED_STUB
                      : how == JS_UW_PROLOGUE                 ? JS_RECOVERED_PROLOGUE
                      : how == JS_UW_NATIVE                   ? JS_RECOVERED_NATIVE
                      : how == JS_UW_BODY                     ? JS_RECOVERED_BODY
                                                              : JS_RECOVERED_EPILOGUE);
    return lead + n;
}

/* 1 if the current thread is attached to the VM but has no Java frame at all (a JIT compiler or
 * service thread): AsyncGetCallTrace calls that "unknown", it is simply not Java. */
static int no_java_frames(void)
{
    uintptr_t thread = js_agct_vm_thread();
    return thread && !*(const volatile uintptr_t *)(thread + (uintptr_t)js_vm.jt_anchor + (uintptr_t)js_vm.anchor_sp);
}

/* 1 if AsyncGetCallTrace would refuse to start a walk at pc in blob b: a stub that has not built
 * its frame by pc, or never says it has (C2's runtime stubs never mark their frames complete). */
static int stub_frame_refused(const js_blob *b, uintptr_t pc)
{
    return b->kind == JS_BLOB_STUB && !js_blob_frame_built(b, pc);
}

/* A thread with a frame anchor that AsyncGetCallTrace cannot start from: an sp but no pc (in VM
 * code called through C2's allocation stubs, which record only the sp), or a pc in a stub whose
 * frame it never takes as complete (the same stubs, once the VM completed the anchor itself). The
 * pc is the return address just below the anchor's sp (HotSpot's JavaFrameAnchor::make_walkable()
 * reads the same word). In a stub, step out of it by its frame size to the compiled caller (the
 * stub adds no frame of its own). Point the anchor there, walk, and put the anchor back as it was.
 * Only while the thread is in the VM or in Java (its state read from the JavaThread): then no other
 * thread walks it (safepoints and handshakes wait for it), so no one else sees the anchor meanwhile.
 * A thread blocked in the VM (a C2 allocation waiting for a GC) or in native code may be walked by a
 * GC worker or a handshake at any moment, from its anchor: changing it then crashed the JVM
 * ("missing saved register" in OopMapSet::all_do, a GC worker starting past the stub's saved
 * registers). The frame count; 0 when the anchor is not one of these; -1 when the walk failed. */
static int complete_anchor(void *ucontext, js_raw_frame *frames, int max)
{
    uintptr_t thread = js_agct_vm_thread();
    if (!thread || js_vm.anchor_pc < 0 || js_vm.anchor_fp < 0) return 0;
    if (!js_vm_anchor_private(thread)) return 0; /* blocked or in native: a GC may be walking from the anchor now */
    uintptr_t anchor = thread + (uintptr_t)js_vm.jt_anchor;
    volatile uintptr_t *a_sp = (volatile uintptr_t *)(anchor + (uintptr_t)js_vm.anchor_sp);
    volatile uintptr_t *a_pc = (volatile uintptr_t *)(anchor + (uintptr_t)js_vm.anchor_pc);
    volatile uintptr_t *a_fp = (volatile uintptr_t *)(anchor + (uintptr_t)js_vm.anchor_fp);
    uintptr_t sp0 = *a_sp, pc0 = *a_pc, fp0 = *a_fp;
    js_regs r = {pc0, sp0, fp0};
    js_safe_range st;
    js_blob b;
    const ucontext_t *uc = ucontext;
    if (!r.sp || live_stack((uintptr_t)uc->uc_mcontext.gregs[REG_RSP], &st) != 0 || r.sp - sizeof r.pc < st.lo
        || r.sp > st.hi)
        return 0;
    if (!r.pc) r.pc = *(const volatile uintptr_t *)(r.sp - sizeof r.pc); /* in the live stack: checked above */
    if (js_codecache_find(r.pc, &b) != JS_CC_FOUND || b.kind == JS_BLOB_INTERPRETER) return 0;
    if (pc0 && !stub_frame_refused(&b, pc0)) return 0; /* a complete anchor: not the reason the walk failed */
    if (b.kind == JS_BLOB_STUB && js_unwind_frame(&b, &st, &r) < 0) return 0;
    sigset_t old; /* a signal that suspends this thread to walk it (JFR's sampler) must not see half an anchor */
    if (js_walker_block_async(&old) != 0) return 0;
    *a_pc = r.pc;
    *a_fp = r.fp;
    *a_sp = r.sp;
    int n = js_walker_agct.walk(ucontext, frames, max);
    *a_sp = sp0;
    *a_fp = fp0;
    *a_pc = pc0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    js_stats_recovery(n > 0 ? JS_RECOVERED_ANCHOR : JS_RECOVER_RETRY_FAILED);
    return n > 0 ? n : -1;
}

/* Signal-safe. */
static int recover_walk(void *ucontext, js_raw_frame *frames, int max)
{
    int n = js_walker_agct.walk(ucontext, frames, max);
    if (n > 0 && enabled) return with_stub_frame(ucontext, frames, n, max);
    if (n > 0 || !enabled) return n;
    if (n == JS_WALK_UNKNOWN_NOT_JAVA && no_java_frames()) return JS_WALK_NO_JAVA_FRAME;
    if (n == JS_WALK_UNKNOWN_NOT_JAVA || n == JS_WALK_NOT_WALKABLE_NOT_JAVA || n == JS_WALK_UNKNOWN_JAVA
        || n == JS_WALK_NOT_WALKABLE_JAVA) {
        int m = complete_anchor(ucontext, frames, max);
        if (m > 0) return m;
        if (m < 0) return n;
    }
    if (n != JS_WALK_UNKNOWN_JAVA && n != JS_WALK_NOT_WALKABLE_JAVA) return n;
    return recover((ucontext_t *)ucontext, frames, max, n, 1);
}

/* Normal thread: AsyncGetCallTrace first, then HotSpot's layout; without the layout the walker is
 * plain AsyncGetCallTrace and err carries one line saying why (rc 0). */
static int recover_init(void *java_vm, char *err, size_t errlen)
{
    if (js_walker_agct.init(java_vm, err, errlen) != 0) return -1;
    if (enabled) return 0;
    char why[200];
    uintptr_t probe = 0, here = (uintptr_t)&probe;
    if (js_vmlayout_init(why, sizeof why) != 0) {
        js_safe_fmt(err, errlen, "stack recovery off (AsyncGetCallTrace alone): %s", why);
    } else if (js_codecache_init() != 0) {
        js_safe_fmt(err, errlen, "stack recovery off (AsyncGetCallTrace alone): libjvm.so's image not found");
    } else if (js_safe_word(here, &probe) != 0) {
        js_safe_fmt(err, errlen, "stack recovery off (AsyncGetCallTrace alone): process_vm_readv is not permitted");
    } else {
        js_cfi_init(); /* without tables (none found), VM code is left by its frame pointers alone */
        enabled = 1;
    }
    return 0;
}

const js_walker js_walker_recover = {
    .name = "AsyncGetCallTrace+recovery",
    .init = recover_init,
    .walk = recover_walk,
};

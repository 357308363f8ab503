/* tlab.c - see tlab.h. */
#include "sample/tlab.h"

#include <stdatomic.h>
#include <ucontext.h>

#include "sample/sampler.h"
#include "sample/trap.h"
#include "sample/safe_read.h"
#include "sample/vmlayout.h"
#include "walker_int.h"

enum { IN_NEW_TLAB = 0, OUTSIDE_TLAB = 1 }; /* the hooks' order */

/* Process-wide like the hooks (one session at a time): the sampling interval and the bytes counted towards it. */
static struct {
    _Atomic uint64_t interval, counted;
} L;

/* Make the thread's last Java frame walkable, as HotSpot itself does before walking a thread: a call from compiled
 * code into the VM records the caller's sp but not always its pc, which is the word below that sp (the call's return
 * address). AsyncGetCallTrace, which walks a thread in the VM from that frame, gives up without it. */
static void make_walkable(uintptr_t thread)
{
    if (!js_vm.ok || !thread || js_vm.jt_anchor < 0 || js_vm.anchor_sp < 0 || js_vm.anchor_pc < 0) return;
    if (thread != js_agct_vm_thread()) return; /* only the calling thread's own anchor, known to be a JavaThread */
    if (!js_vm_anchor_private(thread)) return; /* in the VM here; were it not, another thread might be walking it */
    uintptr_t anchor = thread + (uintptr_t)js_vm.jt_anchor, ret = 0;
    uintptr_t sp = *(volatile uintptr_t *)(anchor + (uintptr_t)js_vm.anchor_sp);
    volatile uintptr_t *pc = (volatile uintptr_t *)(anchor + (uintptr_t)js_vm.anchor_pc);
    if (sp && !*pc && js_safe_read(sp - sizeof(uintptr_t), &ret, sizeof ret) == 0 && ret) *pc = ret;
}

/* SIGTRAP handler, for a call of a hooked function: its arguments are in the System V registers
 * (Klass*, HeapWord*, then tlab_size, alloc_size, JavaThread* for a new TLAB; alloc_size, JavaThread* for an
 * allocation outside). */
static void hit(void *ucv, int which)
{
    const greg_t *g = ((const ucontext_t *)ucv)->uc_mcontext.gregs;
    int outside = which == OUTSIDE_TLAB;
    uint64_t size = (uint64_t)(outside ? g[REG_RDX] : g[REG_RCX]), bytes = outside ? size : (uint64_t)g[REG_RDX];
    uint64_t iv = atomic_load_explicit(&L.interval, memory_order_relaxed), w = bytes;
    if (iv > 1) {
        if (atomic_fetch_add_explicit(&L.counted, bytes, memory_order_relaxed) + bytes < iv) return;
        w = atomic_exchange_explicit(&L.counted, 0, memory_order_relaxed); /* another thread may have taken it */
        if (w == 0) return;
    }
    make_walkable((uintptr_t)(outside ? g[REG_RCX] : g[REG_R8])); /* the JavaThread*, the functions' last argument */
    js_sampler_trap_alloc(ucv, (const void *)g[REG_RDI], outside, size, w);
}

int js_tlab_start(uintptr_t in_new_tlab, uintptr_t outside_tlab, uint64_t interval, char *err, size_t errlen)
{
    atomic_store(&L.interval, interval);
    atomic_store(&L.counted, 0);
    const uintptr_t at[2] = {in_new_tlab, outside_tlab};
    return js_trap_hook(at, 2, hit, err, errlen);
}

void js_tlab_stop(void)
{
    js_trap_unhook();
}

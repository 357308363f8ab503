/* walk_vmx.c - see walk_vmx.h. */
#include "sample/walk_vmx.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <ucontext.h>

#include "sample/safe_read.h"
#include "sample/vmlayout.h"
#include "sample/walker.h"
#include "walker_int.h"

#define MAX_ENTRIES 8         /* entry frames followed on one stack */
#define CALL_WRAPPER_OFF (-48) /* HotSpot x86_64 (not Windows): frame::entry_frame_call_wrapper_offset, -6 words */
#define STUB_SCAN_WORDS 300    /* from the return address into call_stub to its frame: 13 words and the arguments */
#define NATIVE_MAX 64          /* VM frames kept per segment */
#define SCAN_MAX (1u << 20)    /* bytes of stack searched for entry frames: a deeper stack keeps its inner ones */

static struct {
    _Atomic int on;
    uintptr_t stub_ret, helper_lo, helper_hi;
} V;

void js_vmx_set(int on, uintptr_t helper_lo, uintptr_t helper_hi)
{
    uintptr_t ret = on && js_vm.stub_ret_addr ? *(const uintptr_t *)js_vm.stub_ret_addr : 0;
    V.stub_ret = ret;
    V.helper_lo = helper_lo;
    V.helper_hi = helper_hi;
    atomic_store(&V.on, on && ret && helper_lo < helper_hi && js_vm.jcw_anchor >= 0 && js_vm.anchor_pc >= 0 &&
                            js_vm.anchor_fp >= 0);
}

/* A word of the live stack st at a, or 0 outside it. */
static uintptr_t word(const js_safe_range *st, uintptr_t a)
{
    return a >= st->lo && a + sizeof(uintptr_t) <= st->hi && !(a & 7) ? *(const volatile uintptr_t *)a : 0;
}

/* The call stub's frame pointer above the return address into it at ret_at: the saved-rbp slot whose next word
 * returns into JavaCalls::call_helper and whose JavaCallWrapper lies further up the stack; 0 if none. */
static uintptr_t stub_fp(const js_safe_range *st, uintptr_t ret_at)
{
    for (uintptr_t s = ret_at + 8; s < ret_at + 8 * STUB_SCAN_WORDS && s + 16 <= st->hi; s += 8) {
        uintptr_t ret = word(st, s + 8), saved = word(st, s), wrapper = word(st, s + CALL_WRAPPER_OFF);
        if (ret >= V.helper_lo && ret < V.helper_hi && saved > s && saved < st->hi && wrapper > s && wrapper < st->hi)
            return s;
    }
    return 0;
}

/* The Java frames AsyncGetCallTrace finds from the anchor (sp, fp, pc) where Java code called into the VM, walked
 * into scratch[0..max): its count (<= 0 if none). The thread's own anchor is pointed there meanwhile (a thread in
 * the VM or native code is walked from it), with asynchronous signals blocked, and put back; only while the thread
 * is in the VM or in Java, when no other thread walks it (js_vm_anchor_private): none otherwise. */
static int java_below(const ucontext_t *uc, uintptr_t sp, uintptr_t fp, uintptr_t pc, js_raw_frame *scratch, int max)
{
    uintptr_t thread = js_agct_vm_thread();
    if (!thread) return -1;
    uintptr_t anchor = thread + (uintptr_t)js_vm.jt_anchor;
    volatile uintptr_t *a_sp = (volatile uintptr_t *)(anchor + (uintptr_t)js_vm.anchor_sp);
    volatile uintptr_t *a_pc = (volatile uintptr_t *)(anchor + (uintptr_t)js_vm.anchor_pc);
    volatile uintptr_t *a_fp = (volatile uintptr_t *)(anchor + (uintptr_t)js_vm.anchor_fp);
    ucontext_t at = *uc;
    at.uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
    at.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
    at.uc_mcontext.gregs[REG_RBP] = (greg_t)fp;
    uintptr_t sp0 = *a_sp, pc0 = *a_pc, fp0 = *a_fp;
    if (!sp0) return js_walker_agct.walk(&at, scratch, max); /* in Java: walked from the context */
    if (!js_vm_anchor_private(thread)) return -1; /* blocked or in native: others may walk from the anchor now */
    sigset_t old;
    if (js_walker_block_async(&old) != 0) return -1; /* the synchronous signals stay open: HotSpot's safe reads */
    *a_pc = pc;
    *a_fp = fp;
    *a_sp = sp;
    int n = js_walker_agct.walk(&at, scratch, max);
    *a_sp = sp0;
    *a_fp = fp0;
    *a_pc = pc0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return n;
}

int js_vmx_splice(void *ucv, const js_native_walker *nw, js_raw_frame *f, int nat, int nj, int max)
{
    const ucontext_t *uc = ucv;
    int n = nat + nj;
    if (!atomic_load_explicit(&V.on, memory_order_relaxed) || !nw || nj <= 0 || max - n < nj + 1) return n;
    js_safe_range st;
    if (js_walker_stack_range((uintptr_t)uc->uc_mcontext.gregs[REG_RSP], &st) != 0) return n;
    uintptr_t entry[MAX_ENTRIES];
    int k = 0;
    uintptr_t end = st.hi - st.lo > SCAN_MAX ? st.lo + SCAN_MAX : st.hi;
    for (uintptr_t a = st.lo; a + 8 <= end && k < MAX_ENTRIES; a += 8) { /* innermost first */
        if (*(const volatile uintptr_t *)a != V.stub_ret) continue;
        uintptr_t s = stub_fp(&st, a);
        if (s) entry[k++] = s, a = s;
    }
    if (!k) return n;
    /* Java frames outward of each entry frame: the segment sizes, innermost first. */
    int outer[MAX_ENTRIES], seg[MAX_ENTRIES + 1];
    js_raw_frame *scratch = f + n;
    for (int i = 0; i < k; i++) {
        uintptr_t wrapper = word(&st, entry[i] + CALL_WRAPPER_OFF), anchor = wrapper + (uintptr_t)js_vm.jcw_anchor;
        uintptr_t sp = 0, fp = 0, pc = 0;
        if (js_safe_read(anchor + (uintptr_t)js_vm.anchor_sp, &sp, sizeof sp) != 0 ||
            js_safe_read(anchor + (uintptr_t)js_vm.anchor_fp, &fp, sizeof fp) != 0 ||
            js_safe_read(anchor + (uintptr_t)js_vm.anchor_pc, &pc, sizeof pc) != 0)
            return n;
        if (!sp) { /* called from native code that never ran Java (JavaMain): nothing outward */
            outer[i] = 0;
            k = i + 1;
            break;
        }
        if (!pc) pc = word(&st, sp - 8);
        int m = java_below(uc, sp, fp, pc, scratch, max - n);
        if (m < 0 || m > (i ? outer[i - 1] : nj)) return n; /* not the walk's own segments: leave it */
        outer[i] = m;
    }
    for (int i = 0; i < k; i++) seg[i] = (i ? outer[i - 1] : nj) - outer[i];
    /* Build [Java seg 0][VM 0][Java seg 1][VM 1]... after the native frames, in the scratch space, then move it. */
    js_raw_frame *out = f + n;
    int o = 0, j = nat, room = max - n;
    for (int i = 0; i < k && o < room; i++) {
        int c = seg[i] < room - o ? seg[i] : room - o;
        memmove(out + o, f + j, (size_t)c * sizeof *f); /* out starts past every Java frame: no overlap */
        o += c;
        j += seg[i];
        if (o >= room) break;
        out[o++] = (js_raw_frame){.bci = 1, .kind = JS_RF_NATIVE_PC, .method = (const void *)V.stub_ret};
        ucontext_t at = *uc; /* the VM's frames from the call stub's caller down */
        at.uc_mcontext.gregs[REG_RIP] = (greg_t)word(&st, entry[i] + 8);
        at.uc_mcontext.gregs[REG_RSP] = (greg_t)(entry[i] + 16);
        at.uc_mcontext.gregs[REG_RBP] = (greg_t)word(&st, entry[i]);
        int in_java = 0, cap = room - o < NATIVE_MAX ? room - o : NATIVE_MAX;
        int v = cap > 0 ? nw->walk(&at, out + o, cap, &in_java) : 0;
        if (v > 0) {
            out[o].bci = 1; /* a return address, named by its call */
            o += v;
        }
    }
    int rest = nat + nj - j; /* Java frames past the last entry frame (none when the walk was consistent) */
    if (rest > 0 && o + rest <= room) memmove(out + o, f + j, (size_t)rest * sizeof *f), o += rest;
    if (nat + o > max) o = max - nat;
    memmove(f + nat, out, (size_t)o * sizeof *f);
    return nat + o;
}

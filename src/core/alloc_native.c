/* alloc_native.c - see alloc_native_int.h. */
#include "alloc_native_int.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "core/symbols.h"
#include "sample/native_walk.h"
#include "sample/tlab.h"
#include "sample/vmentry.h"

/* The VM's allocation and runtime entry points, by ELF name: a heap allocation enters MemAllocator::allocate, and
 * allocating Java code (interpreted, C1, C2) and the VM's shared stubs reach the VM through these classes. What is
 * called from them on is the VM's own work (and the JVMTI callback); their callers are the allocation site. */
static const char *const entry_prefixes[] = {"_ZNK12MemAllocator8allocateEv", "_Z22post_allocation_notify",
                                             "_ZN11OptoRuntime",            "_ZN8Runtime1",
                                             "_ZN13SharedRuntime",          "_ZN18InterpreterRuntime"};

static pthread_once_t once = PTHREAD_ONCE_INIT; /* libjvm is the process's: its entries are found once */

uintptr_t js_alloc_native_jvm_pc(void)
{
    void *in_jvm = dlsym(RTLD_DEFAULT, "JNI_CreateJavaVM");
    return in_jvm ? (uintptr_t)in_jvm : js_symbols_find("JNI_CreateJavaVM");
}

static void find_entries(void)
{
    uintptr_t pc = js_alloc_native_jvm_pc();
    uintptr_t(*ranges)[2] = malloc(JS_VMENTRY_MAX * sizeof *ranges);
    if (pc && ranges)
        js_vmentry_set((const uintptr_t(*)[2])ranges,
                       js_symbols_ranges(pc, entry_prefixes, (int)(sizeof entry_prefixes / sizeof entry_prefixes[0]),
                                         ranges, JS_VMENTRY_MAX));
    free(ranges);
}

int js_alloc_native_prepare(void)
{
    pthread_once(&once, find_entries);
    return js_vmentry_count();
}

int js_alloc_native_frames(js_cstack cstack, js_raw_frame *out, int max, int *in_java)
{
    *in_java = 0;
    if (cstack == JS_CSTACK_NO || js_vmentry_count() == 0 || max <= 0) return 0;
    ucontext_t uc;
    int n = 0;
    if (cstack == JS_CSTACK_DWARF && getcontext(&uc) == 0) n = js_native_dwarf.walk(&uc, out, max, in_java);
    if (n <= 0) { /* by frame pointers, from this function's own frame: no system call (getcontext's sigprocmask) */
        memset(&uc, 0, sizeof uc);
        uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
        uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)js_alloc_native_frames;
        uc.uc_mcontext.gregs[REG_RSP] = (greg_t)fp;
        uc.uc_mcontext.gregs[REG_RBP] = (greg_t)fp;
        n = js_native_fp.walk(&uc, out, max, in_java);
    }
    n = js_vmentry_trim(out, n);
    return n < 0 ? 0 : n; /* no entry seen: the frames cannot be told from the VM's own, none are kept */
}

int js_alloc_tlab_start(const js_args *a, char *err, size_t errlen)
{
    /* By their exact names (HotSpot 17 to 25): the hook reads their arguments as these signatures have them
     * (Klass*, HeapWord*, sizes, JavaThread*), and a name's compiler-made fragments (".cold", ".part.N") are not
     * the function's entry. */
    uintptr_t pc = js_alloc_native_jvm_pc();
    uintptr_t in_new =
        pc ? js_symbols_lookup(pc, "_ZN11AllocTracer27send_allocation_in_new_tlabEP5KlassPP12HeapWordImplmmP10JavaThread")
           : 0;
    uintptr_t outside =
        pc ? js_symbols_lookup(pc, "_ZN11AllocTracer28send_allocation_outside_tlabEP5KlassPP12HeapWordImplmP10JavaThread")
           : 0;
    if (!in_new || !outside) {
        snprintf(err, errlen, "option 'tlab': libjvm's AllocTracer::send_allocation_in_new_tlab and "
                 "send_allocation_outside_tlab were not found (a VM without them, or without its symbol table); "
                 "sample allocations without tlab");
        return -1;
    }
    js_alloc_native_prepare(); /* the VM's frames above the allocation are dropped from the samples */
    return js_tlab_start(in_new, outside, a->alloc_set ? a->alloc_bytes : 0, err, errlen);
}

void js_alloc_tlab_stop(void)
{
    js_tlab_stop();
}

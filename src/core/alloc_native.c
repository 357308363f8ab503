/* alloc_native.c - see alloc_native_int.h. */
#include "alloc_native_int.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <ucontext.h>

#include "core/symbols.h"
#include "sample/native_walk.h"

#define MAX_ENTRIES 2048 /* VM runtime entry functions kept (HotSpot 17 has ~310, 25 ~380) */

/* The VM's allocation and runtime entry points, by ELF name: a heap allocation enters MemAllocator::allocate, and
 * allocating Java code (interpreted, C1, C2) and the VM's shared stubs reach the VM through these classes. What is
 * called from them on is the VM's own work (and the JVMTI callback); their callers are the allocation site. */
static const char *const entry_prefixes[] = {"_ZNK12MemAllocator8allocateEv", "_Z22post_allocation_notify",
                                             "_ZN11OptoRuntime",            "_ZN8Runtime1",
                                             "_ZN13SharedRuntime",          "_ZN18InterpreterRuntime"};

/* Process-wide like libjvm: the entry functions' [start, end), sorted, found once. Written under `once` before
 * `ready` is set; read-only afterwards. */
static struct {
    pthread_once_t once;
    uintptr_t ranges[MAX_ENTRIES][2];
    int n;
    _Atomic int ready;
} E = {.once = PTHREAD_ONCE_INIT};

static void find_entries(void)
{
    void *in_jvm = dlsym(RTLD_DEFAULT, "JNI_CreateJavaVM");
    uintptr_t pc = in_jvm ? (uintptr_t)in_jvm : js_symbols_find("JNI_CreateJavaVM");
    if (pc)
        E.n = js_symbols_ranges(pc, entry_prefixes, (int)(sizeof entry_prefixes / sizeof entry_prefixes[0]), E.ranges,
                                MAX_ENTRIES);
    atomic_store(&E.ready, 1);
}

int js_alloc_native_prepare(void)
{
    pthread_once(&E.once, find_entries);
    return E.n;
}

/* 1 if the return address ra is a call made from inside one of the entry functions. */
static int in_entry(uintptr_t ra)
{
    uintptr_t pc = ra - 1;
    int lo = 0, hi = E.n;
    while (lo < hi) { /* the first range starting above pc */
        int mid = (lo + hi) / 2;
        if (E.ranges[mid][0] <= pc) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 && pc < E.ranges[lo - 1][1];
}

int js_alloc_native_frames(js_cstack cstack, js_raw_frame *out, int max, int *in_java)
{
    *in_java = 0;
    if (cstack == JS_CSTACK_NO || !atomic_load(&E.ready) || E.n == 0 || max <= 0) return 0;
    ucontext_t uc;
    if (getcontext(&uc) != 0) return 0;
    int n = 0;
    if (cstack == JS_CSTACK_DWARF) n = js_native_dwarf.walk(&uc, out, max, in_java);
    if (n <= 0) n = js_native_fp.walk(&uc, out, max, in_java);
    int last = -1; /* the entry frame nearest the root */
    for (int i = 0; i < n; i++)
        if (out[i].bci == 1 && in_entry((uintptr_t)out[i].method)) last = i;
    if (last < 0) return 0; /* no entry seen: the frames cannot be told from the VM's own, none are kept */
    int k = 0;
    for (int i = last + 1; i < n; i++) out[k++] = out[i];
    return k;
}

/* walk_features.c - see walk_features.h. */
#include "sample/walk_features.h"

#include <stdatomic.h>
#include <string.h>
#include <ucontext.h>

#include "sample/codecache.h"
#include "sample/safe_read.h"
#include "sample/vmlayout.h"
#include "sample/vmmethod.h"
#include "walker_int.h"

/* Set before a session's handlers run, read by them. */
static struct {
    _Atomic int vtable, comptask;
    uintptr_t entries[JS_FEATURES_ENTRIES][2];
    int nentries;
} F;

void js_features_set(int vtable, int comptask, const uintptr_t (*entries)[2], int nentries)
{
    F.nentries = 0;
    for (int i = 0; i < nentries && i < JS_FEATURES_ENTRIES; i++) {
        F.entries[i][0] = entries[i][0];
        F.entries[i][1] = entries[i][1];
        F.nentries++;
    }
    atomic_store(&F.vtable, vtable && js_vm.oop_klass >= 0 && js_vm.ckp_base_addr && js_vm.ckp_shift_addr);
    atomic_store(&F.comptask, comptask && F.nentries && js_vm.ct_env >= 0 && js_vm.env_task >= 0 && js_vm.task_method >= 0);
}

/* Insert f at position at of frames[0..n); the new count (n when there is no room). */
static int insert(js_raw_frame *frames, int n, int max, int at, js_raw_frame f)
{
    if (n >= max) return n;
    memmove(frames + at + 1, frames + at, (size_t)(n - at) * sizeof *frames);
    frames[at] = f;
    return n + 1;
}

/* The Klass* of the receiver in rsi, or 0. */
static uintptr_t receiver_klass(const ucontext_t *uc)
{
    uintptr_t oop = (uintptr_t)uc->uc_mcontext.gregs[REG_RSI], base = 0;
    uint32_t narrow = 0;
    int shift = 0;
    if (oop < 4096 || js_safe_read(oop + (uintptr_t)js_vm.oop_klass, &narrow, sizeof narrow) != 0 || !narrow) return 0;
    if (js_safe_read(js_vm.ckp_base_addr, &base, sizeof base) != 0 ||
        js_safe_read(js_vm.ckp_shift_addr, &shift, sizeof shift) != 0 || shift < 0 || shift > 31)
        return 0;
    return base + ((uintptr_t)narrow << shift);
}

/* The jmethodID of the method the compiler thread vm_thread is compiling, or NULL. */
static const void *compiling(uintptr_t vm_thread)
{
    uintptr_t env = 0, task = 0, method = 0;
    if (js_safe_read(vm_thread + (uintptr_t)js_vm.ct_env, &env, sizeof env) != 0 || !env) return NULL;
    if (js_safe_read(env + (uintptr_t)js_vm.env_task, &task, sizeof task) != 0 || !task) return NULL;
    if (js_safe_read(task + (uintptr_t)js_vm.task_method, &method, sizeof method) != 0 || !method) return NULL;
    return js_vm_method_id(method);
}

int js_features_apply(const void *ucv, js_raw_frame *frames, int n, int max)
{
    const ucontext_t *uc = ucv;
    if (atomic_load_explicit(&F.vtable, memory_order_relaxed) && n > 0 && frames[0].kind == JS_RF_NATIVE_PC &&
        frames[0].bci == 0) { /* the leaf is the interrupted pc itself */
        uintptr_t pc = (uintptr_t)frames[0].method;
        js_blob b;
        if (js_codecache_contains(pc) && js_codecache_find(pc, &b) == JS_CC_FOUND && b.kind == JS_BLOB_STUB && b.name &&
            strcmp(b.name, "vtable chunks") == 0) { /* where HotSpot puts vtable and itable stubs */
            uintptr_t k = receiver_klass(uc);
            if (k) n = insert(frames, n, max, 0, (js_raw_frame){.bci = 0, .kind = JS_RF_KLASS, .method = (const void *)k});
        }
    }
    uintptr_t vm_thread = atomic_load_explicit(&F.comptask, memory_order_relaxed) ? js_agct_vm_thread() : 0;
    if (vm_thread) {
        for (int i = 0; i < n; i++) {
            if (frames[i].kind != JS_RF_NATIVE_PC) continue;
            uintptr_t pc = (uintptr_t)frames[i].method - (frames[i].bci ? 1 : 0);
            int entry = 0;
            for (int e = 0; e < F.nentries && !entry; e++) entry = pc >= F.entries[e][0] && pc < F.entries[e][1];
            if (!entry) continue;
            const void *id = compiling(vm_thread);
            if (id) n = insert(frames, n, max, i, (js_raw_frame){.bci = -1, .kind = JS_RF_JAVA, .method = id});
            break;
        }
    }
    return n;
}

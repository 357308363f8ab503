/* vmmethod.c - see vmmethod.h. */
#include "sample/vmmethod.h"

#include <stdatomic.h>

#include "sample/safe_read.h"
#include "sample/vmlayout.h"

#define CACHE_SLOTS 1024 /* power of two */
#define BUSY ((uintptr_t)1)

/* Method* -> jmethodID answers shared by all handlers: a slot's key is claimed with a CAS
 * (BUSY while its value is written), so readers never pair a key with another key's value. */
static struct {
    _Atomic uintptr_t key;
    _Atomic uintptr_t id;
} cache[CACHE_SLOTS];

static unsigned slot_of(uintptr_t method)
{
    return (unsigned)((method >> 3) * 0x9E3779B1u) & (CACHE_SLOTS - 1);
}

/* The jmethodID is accepted only if it points back at method. */
static int confirms(uintptr_t id, uintptr_t method)
{
    uintptr_t back;
    return id && js_safe_word(id, &back) == 0 && back == method;
}

/* The chain of reads from Method* to its jmethodID; 0 if any link fails. */
static uintptr_t lookup(uintptr_t method)
{
    uintptr_t cm, cp, holder, ids, id, len;
    uint16_t idnum;
    if (js_safe_word(method + (uintptr_t)js_vm.m_const_method, &cm) != 0) return 0;
    if (js_safe_word(cm + (uintptr_t)js_vm.cm_constants, &cp) != 0) return 0;
    if (js_safe_read(cm + (uintptr_t)js_vm.cm_idnum, &idnum, sizeof idnum) != 0) return 0;
    if (js_safe_word(cp + (uintptr_t)js_vm.cp_holder, &holder) != 0) return 0;
    if (js_safe_word(holder + (uintptr_t)js_vm.ik_jmethod_ids, &ids) != 0 || !ids) return 0;
    if (js_safe_word(ids, &len) != 0 || (uintptr_t)idnum + 1 > len) return 0;
    if (js_safe_word(ids + ((uintptr_t)idnum + 1) * sizeof(uintptr_t), &id) != 0) return 0;
    return confirms(id, method) ? id : 0;
}

const void *js_vm_method_id(uintptr_t method)
{
    if (!js_vm.ok || method < 4096 || (method & 7)) return NULL;
    unsigned s = slot_of(method);
    uintptr_t k = atomic_load_explicit(&cache[s].key, memory_order_acquire);
    if (k == method) {
        uintptr_t id = atomic_load_explicit(&cache[s].id, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&cache[s].key, memory_order_relaxed) == method && confirms(id, method))
            return (const void *)id;
    }
    uintptr_t id = lookup(method);
    if (id && k != BUSY && atomic_compare_exchange_strong_explicit(&cache[s].key, &k, BUSY, memory_order_acquire,
                                                                   memory_order_relaxed)) {
        atomic_store_explicit(&cache[s].id, id, memory_order_relaxed);
        atomic_store_explicit(&cache[s].key, method, memory_order_release);
    }
    return (const void *)id;
}

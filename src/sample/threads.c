/* threads.c - see threads.h. */
#include "sample/threads.h"

#include <sched.h>

#define TOMBSTONE (-1)

/* The registry is process-wide: signal handlers look threads up by tid with no context. */
static js_thread slots[JS_THREADS_MAX];
static _Atomic uint32_t next_serial = 1;

static uint32_t slot_of(int tid)
{
    return ((uint32_t)tid * 2654435761u) % JS_THREADS_MAX;
}

void js_threads_reset(void)
{
    for (int i = 0; i < JS_THREADS_MAX; i++) {
        atomic_store(&slots[i].tid, 0);
        atomic_store(&slots[i].env, NULL);
        atomic_store(&slots[i].armed, 0);
        atomic_store(&slots[i].handle, -1);
        atomic_store(&slots[i].serial, 0);
    }
}

js_thread *js_threads_find(int tid)
{
    uint32_t i = slot_of(tid);
    for (int p = 0; p < JS_THREADS_MAX; p++, i = (i + 1) % JS_THREADS_MAX) {
        int cur = atomic_load_explicit(&slots[i].tid, memory_order_acquire);
        if (cur == tid) return &slots[i];
        if (cur == 0) return NULL;
    }
    return NULL;
}

/* Claims are serialised (they come from JVMTI callbacks and the rescan, never handlers). */
static atomic_flag claim_lock = ATOMIC_FLAG_INIT;

static js_thread *claim_locked(int tid, int *created)
{
    js_thread *t = js_threads_find(tid);
    if (t) return t;
    uint32_t i = slot_of(tid);
    for (int p = 0; p < JS_THREADS_MAX; p++, i = (i + 1) % JS_THREADS_MAX) {
        int cur = atomic_load(&slots[i].tid);
        if (cur == tid) return &slots[i];
        if (cur != 0 && cur != TOMBSTONE) continue;
        js_thread *s = &slots[i];
        atomic_store(&s->serial, atomic_fetch_add(&next_serial, 1));
        atomic_store(&s->env, NULL);
        atomic_store(&s->armed, 0);
        atomic_store(&s->handle, -1);
        atomic_store(&s->quiet_until_ns, 0);
        atomic_store(&s->carry, 0);
        if (atomic_compare_exchange_strong(&s->tid, &cur, tid)) {
            *created = 1;
            return s;
        }
        if (cur == tid) return s;
    }
    return NULL;
}

js_thread *js_threads_claim(int tid, int *created)
{
    *created = 0;
    while (atomic_flag_test_and_set_explicit(&claim_lock, memory_order_acquire)) sched_yield();
    js_thread *t = claim_locked(tid, created);
    atomic_flag_clear_explicit(&claim_lock, memory_order_release);
    return t;
}

void js_threads_release(js_thread *t)
{
    atomic_store(&t->env, NULL);
    atomic_store(&t->handle, -1);
    atomic_store(&t->armed, 0);
    atomic_store_explicit(&t->tid, TOMBSTONE, memory_order_release);
}

void js_threads_foreach(void (*fn)(js_thread *t, void *ctx), void *ctx)
{
    for (int i = 0; i < JS_THREADS_MAX; i++) {
        int tid = atomic_load(&slots[i].tid);
        if (tid > 0) fn(&slots[i], ctx);
    }
}

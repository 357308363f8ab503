/* threads.c - see threads.h.
 *
 * Deletion without degradation. Linear probing keeps one invariant: for every live tid at slot
 * p, the slots from its home slot up to p-1 are all non-empty (live or deleted). A lookup may
 * therefore stop at the first empty slot. A deleted slot i whose successor i+1 is empty lies on
 * no live tid's probe path (such a path would have to continue through i+1), so turning i into
 * an empty slot keeps the invariant; doing it again for i-1, i-2, ... while they are deleted
 * removes the whole run of deleted slots at the end of a cluster. Writers (claim, release) are
 * serialised by one spin flag, so only lookups run concurrently with a writer, and a lookup
 * reading the slots of a live tid's path one at a time finds each of them non-empty at the moment
 * it reads it: the invariant holds at every instant, not just between writes.
 */
#include "sample/threads.h"
#include "sample/budget.h"

#include <sched.h>

#define TOMBSTONE (-1)

/* The registry is process-wide: signal handlers look threads up by tid with no context. */
static js_thread slots[JS_THREADS_MAX];
/* Next serial to hand out; process-wide so serials never repeat, not even across sessions. */
static _Atomic uint32_t next_serial = 1;
/* Serialises claim and release (normal threads only; handlers never take it). */
static atomic_flag write_lock = ATOMIC_FLAG_INIT;

/* Home slot of tid. */
static uint32_t slot_of(int tid)
{
    return ((uint32_t)tid * 2654435761u) % JS_THREADS_MAX;
}

/* Slot after i, wrapping. */
static uint32_t next_slot(uint32_t i)
{
    return i + 1 == JS_THREADS_MAX ? 0 : i + 1;
}

/* Slot before i, wrapping. */
static uint32_t prev_slot(uint32_t i)
{
    return i == 0 ? JS_THREADS_MAX - 1 : i - 1;
}

/* Take the writers' spin flag. */
static void write_lock_take(void)
{
    while (atomic_flag_test_and_set_explicit(&write_lock, memory_order_acquire)) sched_yield();
}

/* Release the writers' spin flag. */
static void write_lock_drop(void)
{
    atomic_flag_clear_explicit(&write_lock, memory_order_release);
}

void js_threads_reset(void)
{
    write_lock_take();
    for (int i = 0; i < JS_THREADS_MAX; i++) {
        atomic_store(&slots[i].tid, 0);
        atomic_store(&slots[i].armed, 0);
        atomic_store(&slots[i].handle, -1);
        atomic_store(&slots[i].serial, 0);
        atomic_store(&slots[i].seen, 0);
    }
    write_lock_drop();
}

/* Probe for tid; returns its slot index or -1, and the number of slots examined in *probes. */
static int probe(int tid, int *probes)
{
    uint32_t i = slot_of(tid);
    int p = 0;
    while (p < JS_THREADS_MAX) {
        int cur = atomic_load_explicit(&slots[i].tid, memory_order_acquire);
        p++;
        if (cur == tid) {
            *probes = p;
            return (int)i;
        }
        if (cur == 0) break;
        i = next_slot(i);
    }
    *probes = p;
    return -1;
}

js_thread *js_threads_find(int tid)
{
    if (tid <= 0) return NULL;
    int probes;
    int i = probe(tid, &probes);
    return i < 0 ? NULL : &slots[i];
}

int js_threads_probe_len(int tid)
{
    int probes;
    probe(tid, &probes);
    return probes;
}

/* Claim with the write flag held. */
static js_thread *claim_locked(int tid, int *created)
{
    js_thread *t = js_threads_find(tid);
    if (t) return t;
    /* tid is absent: take the first deleted or empty slot on its path. */
    uint32_t i = slot_of(tid);
    for (int p = 0; p < JS_THREADS_MAX; p++, i = next_slot(i)) {
        int cur = atomic_load_explicit(&slots[i].tid, memory_order_relaxed);
        if (cur != 0 && cur != TOMBSTONE) continue;
        js_thread *s = &slots[i];
        /* The slot is not visible under tid yet: fill it, then publish the tid (release). */
        atomic_store_explicit(&s->serial, atomic_fetch_add(&next_serial, 1), memory_order_relaxed);
        atomic_store_explicit(&s->armed, 0, memory_order_relaxed);
        atomic_store_explicit(&s->handle, -1, memory_order_relaxed);
        atomic_store_explicit(&s->engine_countdown, 0, memory_order_relaxed);
        atomic_store_explicit(&s->seen, 0, memory_order_relaxed);
        js_budget_reset(s);
        atomic_store_explicit(&s->wall_tick, 0, memory_order_relaxed);
        atomic_store_explicit(&s->wall_key, 0, memory_order_relaxed);
        atomic_store_explicit(&s->wall_due, 0, memory_order_relaxed);
        atomic_store_explicit(&s->unsampled, 0, memory_order_relaxed);
        atomic_store_explicit(&s->self, 0, memory_order_relaxed);
        atomic_store_explicit(&s->tid, tid, memory_order_release);
        *created = 1;
        return s;
    }
    return NULL;
}

js_thread *js_threads_claim(int tid, int *created)
{
    *created = 0;
    if (tid <= 0) return NULL;
    write_lock_take();
    js_thread *t = claim_locked(tid, created);
    write_lock_drop();
    return t;
}

void js_threads_release(js_thread *t)
{
    write_lock_take();
    atomic_store(&t->handle, -1);
    atomic_store(&t->armed, 0);
    uint32_t i = (uint32_t)(t - slots);
    atomic_store_explicit(&t->tid, TOMBSTONE, memory_order_release);
    /* Empty the run of deleted slots that now ends the cluster (see the file comment). */
    if (atomic_load_explicit(&slots[next_slot(i)].tid, memory_order_relaxed) == 0) {
        for (int p = 0; p < JS_THREADS_MAX; p++) {
            if (atomic_load_explicit(&slots[i].tid, memory_order_relaxed) != TOMBSTONE) break;
            atomic_store_explicit(&slots[i].tid, 0, memory_order_release);
            i = prev_slot(i);
        }
    }
    write_lock_drop();
}

js_thread *js_threads_slot(uint32_t i)
{
    js_thread *t = &slots[i % JS_THREADS_MAX];
    return atomic_load(&t->tid) > 0 ? t : NULL;
}

void js_threads_foreach(void (*fn)(js_thread *t, void *ctx), void *ctx)
{
    for (int i = 0; i < JS_THREADS_MAX; i++) {
        int tid = atomic_load(&slots[i].tid);
        if (tid > 0) fn(&slots[i], ctx);
    }
}

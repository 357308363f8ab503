/* native_objects.c - the published table of loaded objects, read by handlers (see native_objects.h). */
#include "sample/native_objects.h"

#include <stdatomic.h>

/* Two table slots and their handler counts, in static memory so that a handler's count never lands in freed
 * memory: handlers use slots[cur]; a new table goes into the other slot once no handler is left in it. */
static js_nobj_table *slots[2];
static _Atomic int cur = -1;
static _Atomic int users[2];

int js_nobj_publish(js_nobj_table *t, js_nobj_table **evicted)
{
    int k = atomic_load(&cur), next = k < 0 ? 0 : 1 - k;
    if (atomic_load(&users[next]) != 0) return -1;
    *evicted = slots[next];
    t->slot = next;
    slots[next] = t;
    atomic_store(&cur, next);
    return 0;
}

const js_nobj_table *js_nobj_enter(void)
{
    for (int tries = 0; tries < 4; tries++) {
        int k = atomic_load(&cur);
        if (k < 0) return NULL;
        atomic_fetch_add(&users[k], 1);
        if (atomic_load(&cur) == k) return slots[k];
        atomic_fetch_sub(&users[k], 1);
    }
    return NULL;
}

void js_nobj_leave(const js_nobj_table *t)
{
    if (t) atomic_fetch_sub(&users[t->slot], 1);
}

const js_nobj *js_nobj_find(const js_nobj_table *t, uintptr_t pc)
{
    int lo = 0, hi = t ? t->n : 0;
    while (lo < hi) { /* past the last segment starting at or below pc */
        int mid = lo + (hi - lo) / 2;
        if (t->obj[mid].text_lo <= pc) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 && pc < t->obj[lo - 1].text_hi ? &t->obj[lo - 1] : NULL;
}

const void *js_nobj_copy_of(const js_nobj_table *t, uintptr_t addr, size_t n, uintptr_t out[3])
{
    int lo = 0, hi = t ? t->nsh : 0;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (t->sh[mid].lo <= addr) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return NULL;
    const js_nobj_shadow *s = &t->sh[lo - 1];
    if (addr >= s->hi || n > s->hi - addr) return NULL;
    if (out) out[0] = s->lo, out[1] = s->hi, out[2] = (uintptr_t)s->copy - s->lo;
    return s->copy + (addr - s->lo);
}

void js_nobj_counts(int *with_unwind, int *all, size_t *copied)
{
    const js_nobj_table *t = js_nobj_enter();
    *with_unwind = *all = 0;
    *copied = 0;
    for (int i = 0; t && i < t->n; i++) *with_unwind += t->obj[i].eh_table != 0;
    if (t) *all = t->n, *copied = t->copied;
    js_nobj_leave(t);
}

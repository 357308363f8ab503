/* jfr_read_event.c - the JFR reader's events: every record of a chunk is walked; those of the selected
 * types are decoded, kept when inside the time range, and aggregated per (stack trace, thread, class,
 * flag) with their weight (per kind, see jfr_read.h). The thread filter applies at resolution.
 */
#include "jfr_read_int.h"

#include <stdlib.h>

/* a + b, saturating. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* A Java long read as a size or count: negative values count as 0. */
static uint64_t non_negative(uint64_t v)
{
    return (int64_t)v < 0 ? 0 : v;
}

/* Hash slot of an aggregation key in a table of cap (a power of two) slots. */
static size_t agg_slot(const js_jfrr_agg_ent *e, size_t cap)
{
    uint64_t h = e->trace * 0x9e3779b97f4a7c15ull ^ e->thread * 0xc2b2ae3d27d4eb4full ^ e->cls * 0x165667b19e3779f9ull;
    h ^= e->flag;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return (size_t)(h >> 32) & (cap - 1);
}

/* Rebuilds the aggregation table with cap slots; 0 or -1. */
static int agg_rehash(js_jfrr_chunk *k, size_t cap)
{
    js_jfrr_agg_ent *t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < k->cap_agg; i++) {
        if (!k->agg[i].used) continue;
        size_t h = agg_slot(&k->agg[i], cap);
        while (t[h].used) h = (h + 1) & (cap - 1);
        t[h] = k->agg[i];
    }
    free(k->agg);
    k->agg = t;
    k->cap_agg = cap;
    return 0;
}

/* Adds one event's weight under (trace, thread, class, flag); 0 or -1 without memory. */
static int agg_add(js_jfrr_reader *r, const js_jfrr_agg_ent *key, uint64_t w)
{
    js_jfrr_chunk *k = &r->k;
    if ((k->nagg + 1) * 2 > k->cap_agg && agg_rehash(k, k->cap_agg ? k->cap_agg * 2 : 1024) != 0)
        return js_jfrr_fail(&r->cur, r->cur.pos, "out of memory aggregating events");
    size_t h = agg_slot(key, k->cap_agg);
    for (; k->agg[h].used; h = (h + 1) & (k->cap_agg - 1)) {
        js_jfrr_agg_ent *e = &k->agg[h];
        if (e->trace == key->trace && e->thread == key->thread && e->cls == key->cls && e->flag == key->flag) {
            e->weight = sat_add(e->weight, w);
            e->n++;
            return 0;
        }
    }
    k->agg[h] = *key;
    k->agg[h].weight = w;
    k->agg[h].n = 1;
    k->agg[h].used = 1;
    k->nagg++;
    return 0;
}

/* ns since the epoch of a tick value, on the chunk's time base. */
static __int128 event_time(const js_jfrr_chunk *k, uint64_t ticks)
{
    return (__int128)k->start_nanos + (__int128)(int64_t)(ticks - k->start_ticks) * 1000000000 / (__int128)k->tps;
}

/* A duration in ticks as ns (negative = 0, saturating). */
static uint64_t ticks_to_ns(const js_jfrr_chunk *k, uint64_t ticks)
{
    if ((int64_t)ticks <= 0) return 0;
    __int128 ns = (__int128)ticks * 1000000000 / (__int128)k->tps;
    return ns > (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

/* Captured value of field i, or 0. */
static uint64_t val_of(const js_jfrr_val *v, int32_t i)
{
    return i >= 0 && v[i].set ? v[i].u : 0;
}

/* The `samples` int of a wall-clock event (negative = 0). */
static uint64_t wall_samples(uint64_t v)
{
    int32_t n = (int32_t)(uint32_t)v;
    return n < 0 ? 0 : (uint64_t)n;
}

/* Decodes one selected event and aggregates it (unless outside the time range); 0 or -1. */
static int read_event(js_jfrr_reader *r, const js_jfrr_event_slot *e)
{
    js_jfrr_chunk *k = &r->k;
    js_jfrr_val v[JS_JFRR_CAPTURE];
    if (js_jfrr_decode(&r->cur, &k->meta, e->cls, NULL, v, JS_JFRR_CAPTURE) != 0) return -1;
    if (r->o->has_from || r->o->has_to) {
        __int128 t = event_time(k, val_of(v, e->time));
        if ((r->o->has_from && t < r->from) || (r->o->has_to && t >= r->to)) {
            r->st.skipped++;
            return 0;
        }
    }
    js_jfrr_agg_ent key = {.trace = val_of(v, e->stack), .thread = val_of(v, e->thread), .cls = val_of(v, e->klass)};
    uint64_t w = 1;
    switch (e->ev) {
    case JS_JFRR_EV_WALL: w = e->weight >= 0 && v[e->weight].set ? wall_samples(v[e->weight].u) : 1; break;
    case JS_JFRR_EV_TLAB: w = non_negative(val_of(v, e->weight)) ? non_negative(val_of(v, e->weight))
                                                                 : non_negative(val_of(v, e->weight2)); break;
    case JS_JFRR_EV_OUTSIDE:
    case JS_JFRR_EV_ASAMPLE: w = non_negative(val_of(v, e->weight)); break;
    case JS_JFRR_EV_LOCK: w = ticks_to_ns(k, val_of(v, e->weight)); break;
    default: break;
    }
    key.flag = e->ev == JS_JFRR_EV_OUTSIDE || e->ev == JS_JFRR_EV_ASAMPLE ? 'k' : 'i';
    return agg_add(r, &key, w);
}

/* Reads every record of the chunk from its first one, decoding the selected events; 0 or -1. */
int js_jfrr_read_events(js_jfrr_reader *r, uint64_t base, uint64_t end)
{
    js_jfrr_cur *c = &r->cur;
    for (uint64_t pos = base + JS_JFRR_HEADER; pos < end;) {
        uint64_t size, type;
        c->pos = pos;
        c->end = end;
        if (js_jfrr_varint(c, &size) != 0) return -1;
        if (size == 0) return js_jfrr_fail(c, pos, "zero-size record");
        if (size > end - pos)
            return js_jfrr_fail(c, pos, "record size %llu points past the end of the chunk", (unsigned long long)size);
        c->end = pos + size;
        if (js_jfrr_varint(c, &type) != 0) return -1;
        for (int i = 0; i < r->k.nev; i++)
            if (r->k.ev[i].id == type) {
                if (read_event(r, &r->k.ev[i]) != 0) return -1;
                break;
            }
        pos += size;
    }
    return 0;
}

/* jfr_pool.c - see jfr_pool.h. */
#include "jfr/jfr_pool.h"

#include <stdlib.h>
#include <string.h>

#include "util/hashmix.h"

#define MAX_CAP (1u << 30)

typedef uint32_t (*slot_hash)(const void *table, uint32_t value);

/* A 64-bit key folded to a 32-bit hash. */
static uint32_t mix64(uint64_t x)
{
    uint64_t h = js_mix64(x);
    return (uint32_t)h ^ (uint32_t)(h >> 32);
}

/* FNV-1a of a byte string, folded to 32 bits. */
static uint32_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return (uint32_t)h ^ (uint32_t)(h >> 32);
}

/* Make room for one more value in an open-addressing slot array (rehashing with hash); 0 or -1. */
static int grow_slots(uint32_t **slot, uint32_t *cap, uint32_t count, slot_hash hash, const void *table)
{
    if ((uint64_t)(count + 1) * 2 <= *cap) return 0;
    if (*cap >= MAX_CAP) return -1;
    uint32_t ncap = *cap ? *cap * 2 : 16;
    uint32_t *ns = calloc(ncap, sizeof *ns);
    if (!ns) return -1;
    for (uint32_t i = 0; i < *cap; i++) {
        uint32_t v = (*slot)[i];
        if (!v) continue;
        uint32_t j = hash(table, v) & (ncap - 1);
        while (ns[j]) j = (j + 1) & (ncap - 1);
        ns[j] = v;
    }
    free(*slot);
    *slot = ns;
    *cap = ncap;
    return 0;
}

/* Ensure a dense array of elem-sized items holds index need; 0 or -1. */
static int grow_array(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need < *cap) return 0;
    uint32_t ncap = *cap ? *cap : 16;
    while (ncap <= need) {
        if (ncap >= MAX_CAP) return -1;
        ncap *= 2;
    }
    void *q = realloc(*p, (size_t)ncap * elem);
    if (!q) return -1;
    *p = q;
    *cap = ncap;
    return 0;
}

/* Hash of a set slot value: the key itself. */
static uint32_t set_hash(const void *table, uint32_t key)
{
    return js_mix32(key);
}

int js_jfr_set_add(js_jfr_set *s, uint32_t key)
{
    if (js_jfr_set_has(s, key)) return 0;
    if (grow_slots(&s->slot, &s->cap, s->count, set_hash, s) != 0) return -1;
    uint32_t j = js_mix32(key) & (s->cap - 1);
    while (s->slot[j]) j = (j + 1) & (s->cap - 1);
    s->slot[j] = key;
    s->count++;
    return 1;
}

int js_jfr_set_has(const js_jfr_set *s, uint32_t key)
{
    if (!s->cap) return 0;
    for (uint32_t j = js_mix32(key) & (s->cap - 1); s->slot[j]; j = (j + 1) & (s->cap - 1))
        if (s->slot[j] == key) return 1;
    return 0;
}

uint32_t js_jfr_set_next(const js_jfr_set *s, uint32_t *i)
{
    while (*i < s->cap)
        if (s->slot[(*i)++]) return s->slot[*i - 1];
    return 0;
}

void js_jfr_set_clear(js_jfr_set *s)
{
    if (s->slot) memset(s->slot, 0, (size_t)s->cap * sizeof *s->slot);
    s->count = 0;
}

void js_jfr_set_free(js_jfr_set *s)
{
    free(s->slot);
    memset(s, 0, sizeof *s);
}

/* Hash of an id-map slot value: the hash of that id's key. */
static uint32_t idmap_hash(const void *table, uint32_t id)
{
    return mix64(((const js_jfr_idmap *)table)->keys[id]);
}

uint32_t js_jfr_idmap_find(const js_jfr_idmap *m, uint64_t key)
{
    if (!m->cap) return 0;
    for (uint32_t j = mix64(key) & (m->cap - 1); m->slot[j]; j = (j + 1) & (m->cap - 1))
        if (m->keys[m->slot[j]] == key) return m->slot[j];
    return 0;
}

uint32_t js_jfr_idmap_id(js_jfr_idmap *m, uint64_t key)
{
    uint32_t h = mix64(key), found = js_jfr_idmap_find(m, key);
    if (found) return found;
    if (grow_slots(&m->slot, &m->cap, m->count, idmap_hash, m) != 0) return 0;
    if (grow_array((void **)&m->keys, &m->kcap, m->count + 1, sizeof *m->keys) != 0) return 0;
    uint32_t id = ++m->count;
    m->keys[id] = key;
    uint32_t j = h & (m->cap - 1);
    while (m->slot[j]) j = (j + 1) & (m->cap - 1);
    m->slot[j] = id;
    return id;
}

void js_jfr_idmap_clear(js_jfr_idmap *m)
{
    if (m->slot) memset(m->slot, 0, (size_t)m->cap * sizeof *m->slot);
    m->count = 0;
}

void js_jfr_idmap_free(js_jfr_idmap *m)
{
    free(m->slot);
    free(m->keys);
    memset(m, 0, sizeof *m);
}

/* Hash of a string-table slot value: the stored hash of that id's string. */
static uint32_t strtab_hash(const void *table, uint32_t id)
{
    return ((const js_jfr_strtab *)table)->ent[id].hash;
}

/* Copy s[0..len) and a NUL into the arena; its offset, or -1 out of memory. */
static int64_t arena_copy(js_jfr_strtab *t, const char *s, size_t len)
{
    if (t->alen + len + 1 > UINT32_MAX) return -1;
    if (t->alen + len + 1 > t->acap) {
        size_t cap = t->acap ? t->acap : 4096;
        while (cap < t->alen + len + 1) cap *= 2;
        char *a = realloc(t->arena, cap);
        if (!a) return -1;
        t->arena = a;
        t->acap = cap;
    }
    int64_t off = (int64_t)t->alen;
    memcpy(t->arena + t->alen, s, len);
    t->arena[t->alen + len] = 0;
    t->alen += len + 1;
    return off;
}

uint32_t js_jfr_strtab_id(js_jfr_strtab *t, const char *s, size_t len)
{
    uint32_t h = hash_bytes(s, len);
    if (t->cap)
        for (uint32_t j = h & (t->cap - 1); t->slot[j]; j = (j + 1) & (t->cap - 1)) {
            const js_jfr_strent *e = &t->ent[t->slot[j]];
            if (e->hash == h && e->len == len && memcmp(t->arena + e->off, s, len) == 0) return t->slot[j];
        }
    if (grow_slots(&t->slot, &t->cap, t->count, strtab_hash, t) != 0) return 0;
    if (grow_array((void **)&t->ent, &t->ecap, t->count + 1, sizeof *t->ent) != 0) return 0;
    int64_t off = arena_copy(t, s, len);
    if (off < 0) return 0;
    uint32_t id = ++t->count;
    t->ent[id] = (js_jfr_strent){(uint32_t)off, (uint32_t)len, h};
    uint32_t j = h & (t->cap - 1);
    while (t->slot[j]) j = (j + 1) & (t->cap - 1);
    t->slot[j] = id;
    return id;
}

const char *js_jfr_strtab_str(const js_jfr_strtab *t, uint32_t id, size_t *len)
{
    *len = t->ent[id].len;
    return t->arena + t->ent[id].off;
}

void js_jfr_strtab_clear(js_jfr_strtab *t)
{
    if (t->slot) memset(t->slot, 0, (size_t)t->cap * sizeof *t->slot);
    t->count = 0;
    t->alen = 0;
}

void js_jfr_strtab_free(js_jfr_strtab *t)
{
    free(t->slot);
    free(t->ent);
    free(t->arena);
    memset(t, 0, sizeof *t);
}

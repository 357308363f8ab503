/* jfr_pool.h - the JFR writer's id tables (internal to jfr_write.c).
 *
 * A set of non-zero 32-bit keys; a map giving 64-bit keys dense ids 1, 2, 3...; a string table
 * giving distinct strings dense ids 1, 2, 3... (strings copied into an owned arena). Open
 * addressing, power-of-two capacity, load at most 1/2. Memory grows with the number of distinct
 * keys only; clear keeps the capacity. Not thread-safe. Iterate a set with
 * `for (uint32_t i = 0, k; (k = js_jfr_set_next(&s, &i));) ...`.
 */
#ifndef JS_JFR_POOL_H
#define JS_JFR_POOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t *slot; /* keys, 0 = empty */
    uint32_t cap, count;
} js_jfr_set;

/* Add key (!= 0): 1 if added, 0 if already present, -1 out of memory. */
int js_jfr_set_add(js_jfr_set *s, uint32_t key);
/* 1 if key is in the set. */
int js_jfr_set_has(const js_jfr_set *s, uint32_t key);
/* The next key at or after slot *i (advancing *i past it), or 0 when there is none. */
uint32_t js_jfr_set_next(const js_jfr_set *s, uint32_t *i);
void js_jfr_set_clear(js_jfr_set *s);
void js_jfr_set_free(js_jfr_set *s);

typedef struct {
    uint32_t *slot;  /* ids, 0 = empty */
    uint32_t cap;
    uint64_t *keys;  /* keys[id], id 1..count */
    uint32_t count, kcap;
} js_jfr_idmap;

/* Dense id (>= 1) of key, assigning the next one if key is new; 0 out of memory. */
uint32_t js_jfr_idmap_id(js_jfr_idmap *m, uint64_t key);
/* Dense id of key if present, else 0 (never assigns). */
uint32_t js_jfr_idmap_find(const js_jfr_idmap *m, uint64_t key);
/* Forget every key (ids restart at 1); keeps the capacity. */
void js_jfr_idmap_clear(js_jfr_idmap *m);
void js_jfr_idmap_free(js_jfr_idmap *m);

typedef struct {
    uint32_t off, len, hash;
} js_jfr_strent;

typedef struct {
    uint32_t *slot;     /* ids, 0 = empty */
    uint32_t cap;
    js_jfr_strent *ent; /* ent[id], id 1..count */
    uint32_t count, ecap;
    char *arena;        /* NUL-terminated copies */
    size_t alen, acap;
} js_jfr_strtab;

/* Dense id (>= 1) of s[0..len), copying it if new; 0 out of memory. */
uint32_t js_jfr_strtab_id(js_jfr_strtab *t, const char *s, size_t len);
/* The string of id (NUL-terminated; valid until the next insertion), its length in *len. */
const char *js_jfr_strtab_str(const js_jfr_strtab *t, uint32_t id, size_t *len);
void js_jfr_strtab_clear(js_jfr_strtab *t);
void js_jfr_strtab_free(js_jfr_strtab *t);

#endif

/* calltree.c - the call tree of a profile's stacks (see calltree.h).
 *
 * Nodes live in parallel arrays indexed by node number, in creation order; a hash table with linear probing maps
 * (parent, name id) to a node and is rebuilt at twice the size when it is half full. A walk sorts the nodes once by
 * (parent, total descending, name id), which groups each node's children in child order, and keeps one cursor per
 * level.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "output/calltree.h"

#include <stdlib.h>
#include <string.h>

#include "util/hashmix.h"

#define NONE JS_CALLTREE_NONE
#define MIN_NODES 1024

/* qsort_r order of frame indexes by name. */
static int name_order(const void *a, const void *b, void *ctx)
{
    const js_pframe *fr = ctx;
    return strcmp(fr[*(const uint32_t *)a].name, fr[*(const uint32_t *)b].name);
}

/* Fills nm with the name ids of p's frames; 0, or -1 without memory. */
int js_calltree_names_build(js_calltree_names *nm, const js_profile *p)
{
    size_t nf = p->nframes ? p->nframes : 1;
    uint32_t *by = malloc(nf * sizeof *by);
    memset(nm, 0, sizeof *nm);
    nm->id = malloc(nf * sizeof *nm->id);
    nm->name = malloc(nf * sizeof *nm->name);
    if (!by || !nm->id || !nm->name) {
        free(by);
        js_calltree_names_free(nm);
        return -1;
    }
    for (size_t i = 0; i < p->nframes; i++) by[i] = (uint32_t)i;
    qsort_r(by, p->nframes, sizeof *by, name_order, p->frames);
    for (size_t i = 0; i < p->nframes; i++) {
        const char *s = p->frames[by[i]].name;
        if (nm->n == 0 || strcmp(nm->name[nm->n - 1], s) != 0) nm->name[nm->n++] = s;
        nm->id[by[i]] = (uint32_t)(nm->n - 1);
    }
    free(by);
    return 0;
}

/* Releases what nm owns and zeroes it. */
void js_calltree_names_free(js_calltree_names *nm)
{
    free(nm->id);
    free(nm->name);
    memset(nm, 0, sizeof *nm);
}

/* Hash slot of (parent, nid) in a table of nslots (a power of two). The key is mixed whole: a product's bits 17..31
 * depended on nid alone, so a recursion (one name under each of its own nodes) put its whole chain in one probe run
 * and a stack of d frames cost d^2 probes (`convert` to tree: 1.1 s for 500 stacks of 1,500-3,000 frames). */
static size_t slot_of(uint32_t parent, uint32_t nid, size_t nslots)
{
    return (size_t)js_mix64((uint64_t)parent << 32 | nid) & (nslots - 1);
}

/* Rebuilds the slot table with nslots slots (a power of two); 0 or -1. */
static int rehash(js_calltree *t, size_t nslots)
{
    uint32_t *s = malloc(nslots * sizeof *s);
    if (!s) return -1;
    memset(s, 0xff, nslots * sizeof *s);
    for (size_t i = 1; i < t->n; i++) {
        size_t h = slot_of(t->parent[i], t->nid[i], nslots);
        while (s[h] != NONE) h = (h + 1) & (nslots - 1);
        s[h] = (uint32_t)i;
    }
    free(t->slots);
    t->slots = s;
    t->nslots = nslots;
    return 0;
}

/* Resizes one per-node array to cap elements; 0 or -1. */
static int resize(void **a, size_t cap, size_t elem)
{
    void *n = realloc(*a, cap * elem);
    if (!n) return -1;
    *a = n;
    return 0;
}

/* Appends a node; its index, or NONE without memory or node ids. */
static uint32_t new_node(js_calltree *t, uint32_t parent, uint32_t nid)
{
    if (t->n >= NONE - 1) return NONE;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : MIN_NODES;
        if (resize((void **)&t->parent, cap, sizeof *t->parent) || resize((void **)&t->nid, cap, sizeof *t->nid) ||
            resize((void **)&t->total, cap, sizeof *t->total) || resize((void **)&t->self, cap, sizeof *t->self))
            return NONE;
        t->cap = cap;
    }
    uint32_t c = (uint32_t)t->n++;
    t->parent[c] = parent;
    t->nid[c] = nid;
    t->total[c] = t->self[c] = 0;
    return c;
}

/* The child of parent named nid, created when missing; NONE on failure. */
static uint32_t child_of(js_calltree *t, uint32_t parent, uint32_t nid)
{
    if ((t->n + 1) * 2 > t->nslots && rehash(t, t->nslots * 2) != 0) return NONE;
    size_t h = slot_of(parent, nid, t->nslots);
    for (; t->slots[h] != NONE; h = (h + 1) & (t->nslots - 1), t->probes++)
        if (t->parent[t->slots[h]] == parent && t->nid[t->slots[h]] == nid) return t->slots[h];
    uint32_t c = new_node(t, parent, nid);
    if (c != NONE) t->slots[h] = c;
    return c;
}

/* Adds one stack's weight along its path from the root; 0 or -1. */
static int add_stack(js_calltree *t, const js_pstack *st, const uint32_t *id)
{
    uint32_t cur = 0;
    t->total[0] = js_weight_add(t->total[0], st->weight);
    for (uint32_t d = 0; d < st->depth; d++) {
        cur = child_of(t, cur, id[st->frames[d]]);
        if (cur == NONE) return -1;
        t->total[cur] = js_weight_add(t->total[cur], st->weight);
    }
    t->self[cur] = js_weight_add(t->self[cur], st->weight);
    if (st->depth > t->maxdepth) t->maxdepth = st->depth;
    return 0;
}

/* Builds t from p's stacks that keep accepts (NULL keeps all), named by nm; 0, or -1 without memory or node ids. */
int js_calltree_build(js_calltree *t, const js_profile *p, const js_calltree_names *nm, js_calltree_keep keep,
                      void *ctx)
{
    memset(t, 0, sizeof *t);
    if (new_node(t, NONE, NONE) != 0 || rehash(t, 2 * MIN_NODES) != 0) goto fail;
    for (size_t s = 0; s < p->nstacks; s++) {
        if (keep && !keep(p, &p->stacks[s], ctx)) continue;
        if (add_stack(t, &p->stacks[s], nm->id) != 0) goto fail;
    }
    return 0;
fail:
    js_calltree_free(t);
    return -1;
}

/* Releases what t owns and zeroes it. */
void js_calltree_free(js_calltree *t)
{
    free(t->parent);
    free(t->nid);
    free(t->total);
    free(t->self);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

/* qsort_r order of nodes: by parent, then total descending, then name. */
static int node_order(const void *a, const void *b, void *ctx)
{
    const js_calltree *t = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (t->parent[x] != t->parent[y]) return t->parent[x] < t->parent[y] ? -1 : 1;
    if (t->total[x] != t->total[y]) return t->total[x] > t->total[y] ? -1 : 1;
    return (t->nid[x] > t->nid[y]) - (t->nid[x] < t->nid[y]);
}

/* Starts a preorder walk of a built t (which must outlive it, unchanged); 0, or -1 without memory. */
int js_calltree_walk_begin(js_calltree_walk *w, const js_calltree *t)
{
    size_t levels = (size_t)t->maxdepth + 1;
    memset(w, 0, sizeof *w);
    if (t->n == 0) return -1; /* not built */
    w->t = t;
    w->last = NONE;
    w->order = malloc(t->n * sizeof *w->order);
    w->count = calloc(t->n, sizeof *w->count);
    w->first = calloc(t->n, sizeof *w->first);
    w->pos = malloc(levels * sizeof *w->pos);
    w->end = malloc(levels * sizeof *w->end);
    if (!w->order || !w->count || !w->first || !w->pos || !w->end) {
        js_calltree_walk_free(w);
        return -1;
    }
    for (size_t i = 1; i < t->n; i++) w->order[i - 1] = (uint32_t)i;
    qsort_r(w->order, t->n - 1, sizeof *w->order, node_order, (void *)t);
    for (size_t i = 0; i + 1 < t->n; i++) {
        uint32_t par = t->parent[w->order[i]];
        if (w->count[par]++ == 0) w->first[par] = i;
    }
    w->pos[0] = w->first[0];
    w->end[0] = w->first[0] + w->count[0];
    return 0;
}

/* The next node in preorder, its level (0 = children of the root) in *level; JS_CALLTREE_NONE at the end. */
uint32_t js_calltree_walk_next(js_calltree_walk *w, uint32_t *level)
{
    if (w->last != NONE && w->count[w->last]) {
        w->level++;
        w->pos[w->level] = w->first[w->last];
        w->end[w->level] = w->first[w->last] + w->count[w->last];
    }
    w->last = NONE;
    while (w->pos[w->level] == w->end[w->level]) {
        if (w->level == 0) return NONE;
        w->level--;
    }
    w->last = w->order[w->pos[w->level]++];
    *level = w->level;
    return w->last;
}

/* Skips the last node's subtree and later siblings; their count (it included), their totals added to *total. */
size_t js_calltree_walk_skip_siblings(js_calltree_walk *w, uint64_t *total)
{
    if (w->last == NONE) return 0;
    size_t from = w->pos[w->level] - 1, to = w->end[w->level];
    for (size_t i = from; i < to; i++) *total += w->t->total[w->order[i]];
    w->pos[w->level] = to;
    w->last = NONE;
    return to - from;
}

/* Releases what w owns and zeroes it. */
void js_calltree_walk_free(js_calltree_walk *w)
{
    free(w->order);
    free(w->count);
    free(w->first);
    free(w->pos);
    free(w->end);
    memset(w, 0, sizeof *w);
}

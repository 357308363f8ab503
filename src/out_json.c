/* out_json.c - the SkyWalking OAP's async-profiler analysis tree as JSON.
 *
 * Shaped like the OAP's GraphQL answer (AsyncProfilerStackTree: type + elements; AsyncProfilerStackElement:
 * id, parentId, codeSignature, total, self), one object per tree:
 *
 *   {"trees":[{"type":"EXECUTION_SAMPLE","unit":"samples","elements":[
 *     {"id":"0","parentId":"-1","codeSignature":"all","total":1006,"self":0},
 *     {"id":"1","parentId":"0","codeSignature":"app.Main.main","total":1006,"self":6},
 *     ...]}]}
 *
 * As in the OAP (FrameTreeBuilder / AsyncProfilerStackTree): element 0 is the root "all" holding every
 * stack's weight (its self = stacks without frames), ids are assigned in preorder from 0 and parentId of
 * the root is -1; nodes are keyed by frame name (frame types are not part of a node); codeSignature is the
 * frame name. Ids are written as JSON strings, as the GraphQL schema and the UI type them. Children are
 * ordered by total weight descending, then by name (the OAP leaves the order unspecified). The type
 * "OBJECT_ALLOCATION" writes two trees, as the OAP files allocations: OBJECT_ALLOCATION_IN_NEW_TLAB (stacks
 * whose leaf frame is not of kind kernel) and OBJECT_ALLOCATION_OUTSIDE_TLAB (leaf frame of kind kernel:
 * the reader's "_[k]" class frames). Strings are escaped for JSON: '"', '\\', control characters, and
 * bytes that are not valid UTF-8 (written as \ufffd), so the output is always valid UTF-8 JSON.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

#define NONE UINT32_MAX
#define MIN_NODES 1024

typedef struct {
    uint32_t *parent, *nid, *id;
    uint64_t *total, *self;
    size_t n, cap;
    uint32_t *slots; /* open addressing over (parent, nid) -> node */
    size_t nslots;
    uint32_t maxdepth;
} jtree;

/* Writes one line to err: "json output: <why>[: errno text]"; returns -1. */
static int fail(char *err, size_t errlen, const char *why, int with_errno)
{
    int e = errno;
    if (err && errlen) {
        if (with_errno) snprintf(err, errlen, "json output: %s: %s", why, e ? strerror(e) : "I/O error");
        else snprintf(err, errlen, "json output: %s", why);
    }
    return -1;
}

/* Length of the valid UTF-8 sequence starting at s (s[0] >= 0x80), or 0 if it is not valid. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xbf;
    size_t n;
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) n = 3;
    else if (c >= 0xf0 && c <= 0xf4) n = 4;
    else return 0;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return n;
}

/* Writes s as a JSON string literal (quotes included). */
static void put_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    putc('"', f);
    while (*s) {
        unsigned char c = *s;
        size_t n = 1;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\r') fputs("\\r", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c < 0x20 || c == 0x7f) fprintf(f, "\\u%04x", c);
        else if (c < 0x80) putc(c, f);
        else if ((n = utf8_len(s)) != 0) fwrite(s, 1, n, f);
        else {
            fputs("\\ufffd", f);
            n = 1;
        }
        s += n;
    }
    putc('"', f);
}

/* qsort_r order of frame indexes by name. */
static int name_order(const void *a, const void *b, void *ctx)
{
    const js_pframe *fr = ctx;
    return strcmp(fr[*(const uint32_t *)a].name, fr[*(const uint32_t *)b].name);
}

/* nid[frame]: equal names share an id, ids in name order; names[id] its name. 0 or -1. */
static int name_ids(const js_profile *p, uint32_t **nid, const char ***names)
{
    size_t nf = p->nframes ? p->nframes : 1, nn = 0;
    uint32_t *by = malloc(nf * sizeof *by);
    *nid = malloc(nf * sizeof **nid);
    *names = malloc(nf * sizeof **names);
    if (!by || !*nid || !*names) {
        free(by);
        return -1;
    }
    for (size_t i = 0; i < p->nframes; i++) by[i] = (uint32_t)i;
    qsort_r(by, p->nframes, sizeof *by, name_order, p->frames);
    for (size_t i = 0; i < p->nframes; i++) {
        const char *nm = p->frames[by[i]].name;
        if (nn == 0 || strcmp((*names)[nn - 1], nm) != 0) (*names)[nn++] = nm;
        (*nid)[by[i]] = (uint32_t)(nn - 1);
    }
    free(by);
    return 0;
}

/* Hash slot of (parent, nid). */
static size_t slot_of(uint32_t parent, uint32_t nid, size_t nslots)
{
    uint64_t h = ((uint64_t)parent << 32 | nid) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 17) & (nslots - 1);
}

/* Rebuilds the slot table with nslots slots (a power of two); 0 or -1. */
static int tree_rehash(jtree *t, size_t nslots)
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

/* Appends a node; its index, or NONE without memory. */
static uint32_t tree_new(jtree *t, uint32_t parent, uint32_t nid)
{
    if (t->n >= NONE - 1) return NONE;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : MIN_NODES;
        if (resize((void **)&t->parent, cap, sizeof *t->parent) || resize((void **)&t->nid, cap, sizeof *t->nid) ||
            resize((void **)&t->id, cap, sizeof *t->id) || resize((void **)&t->total, cap, sizeof *t->total) ||
            resize((void **)&t->self, cap, sizeof *t->self))
            return NONE;
        t->cap = cap;
    }
    uint32_t c = (uint32_t)t->n++;
    t->parent[c] = parent;
    t->nid[c] = nid;
    t->total[c] = t->self[c] = 0;
    return c;
}

/* The child of parent named nid, created when missing; NONE without memory. */
static uint32_t tree_child(jtree *t, uint32_t parent, uint32_t nid)
{
    if ((t->n + 1) * 2 > t->nslots && tree_rehash(t, t->nslots ? t->nslots * 2 : 2 * MIN_NODES) != 0) return NONE;
    size_t h = slot_of(parent, nid, t->nslots);
    for (; t->slots[h] != NONE; h = (h + 1) & (t->nslots - 1))
        if (t->parent[t->slots[h]] == parent && t->nid[t->slots[h]] == nid) return t->slots[h];
    uint32_t c = tree_new(t, parent, nid);
    if (c != NONE) t->slots[h] = c;
    return c;
}

/* Releases the tree's memory. */
static void tree_free(jtree *t)
{
    free(t->parent);
    free(t->nid);
    free(t->id);
    free(t->total);
    free(t->self);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

/* Tree part a stack belongs to: 0 = all, 1 = allocation in a new TLAB, 2 = outside a TLAB. */
static int part_of(const js_profile *p, const js_pstack *st)
{
    return st->depth && p->frames[st->frames[st->depth - 1]].type == JS_FT_KERNEL ? 2 : 1;
}

/* Builds the tree of the stacks in part (0 = all; see part_of); node 0 is the root; 0 or -1. */
static int tree_build(jtree *t, const js_profile *p, const uint32_t *nid, int part)
{
    memset(t, 0, sizeof *t);
    if (tree_new(t, NONE, NONE) != 0 || tree_rehash(t, 2 * MIN_NODES) != 0) return -1;
    for (size_t s = 0; s < p->nstacks; s++) {
        const js_pstack *st = &p->stacks[s];
        if (part && part_of(p, st) != part) continue;
        uint32_t cur = 0;
        t->total[0] += st->weight;
        for (uint32_t d = 0; d < st->depth; d++) {
            cur = tree_child(t, cur, nid[st->frames[d]]);
            if (cur == NONE) return -1;
            t->total[cur] += st->weight;
        }
        t->self[cur] += st->weight;
        if (st->depth > t->maxdepth) t->maxdepth = st->depth;
    }
    return 0;
}

/* qsort_r order of nodes: by parent, then total descending, then name. */
static int node_order(const void *a, const void *b, void *ctx)
{
    const jtree *t = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (t->parent[x] != t->parent[y]) return t->parent[x] < t->parent[y] ? -1 : 1;
    if (t->total[x] != t->total[y]) return t->total[x] > t->total[y] ? -1 : 1;
    return (t->nid[x] > t->nid[y]) - (t->nid[x] < t->nid[y]);
}

/* Writes one element; its id is the running preorder counter. */
static void put_element(FILE *f, const jtree *t, uint32_t node, const char *name, uint32_t id, int first)
{
    fprintf(f, "%s\n{\"id\":\"%u\",\"parentId\":\"%lld\",\"codeSignature\":", first ? "" : ",", id,
            node ? (long long)t->id[t->parent[node]] : -1LL);
    put_string(f, name);
    fprintf(f, ",\"total\":%llu,\"self\":%llu}", (unsigned long long)t->total[node], (unsigned long long)t->self[node]);
}

/* Writes the elements in preorder (children in order[first[n] .. first[n] + count[n])); 0 or -1. */
static int write_elements(FILE *f, jtree *t, const char *const *names, const uint32_t *order, const size_t *first,
                          const uint32_t *count)
{
    size_t levels = (size_t)t->maxdepth + 1;
    size_t *pos = malloc(levels * sizeof *pos), *end = malloc(levels * sizeof *end);
    if (!pos || !end) {
        free(pos);
        free(end);
        return -1;
    }
    uint32_t next = 1, lv = 0;
    t->id[0] = 0;
    put_element(f, t, 0, "all", 0, 1);
    pos[0] = first[0];
    end[0] = first[0] + count[0];
    while (!ferror(f)) {
        if (pos[lv] == end[lv]) {
            if (lv == 0) break;
            lv--;
            continue;
        }
        uint32_t c = order[pos[lv]++];
        t->id[c] = next++;
        put_element(f, t, c, names[t->nid[c]], t->id[c], 0);
        if (count[c]) {
            lv++;
            pos[lv] = first[c];
            end[lv] = first[c] + count[c];
        }
    }
    free(pos);
    free(end);
    return 0;
}

/* Sorts the nodes into preorder and writes them; 0 or -1 without memory. */
static int write_tree_body(FILE *f, jtree *t, const char *const *names)
{
    uint32_t *order = malloc(t->n * sizeof *order), *count = calloc(t->n, sizeof *count);
    size_t *first = calloc(t->n, sizeof *first);
    int rc = -1;
    if (!order || !count || !first) goto out;
    for (size_t i = 1; i < t->n; i++) order[i - 1] = (uint32_t)i;
    qsort_r(order, t->n - 1, sizeof *order, node_order, t);
    for (size_t i = 0; i + 1 < t->n; i++) {
        uint32_t par = t->parent[order[i]];
        if (count[par]++ == 0) first[par] = i;
    }
    rc = write_elements(f, t, names, order, first, count);
out:
    free(order);
    free(count);
    free(first);
    return rc;
}

/* Writes one {"type":..,"unit":..,"elements":[..]} object for the stacks in part; 0 or -1. */
static int write_one(FILE *f, const js_profile *p, const uint32_t *nid, const char *const *names, const char *type,
                     int part)
{
    jtree t;
    int rc = tree_build(&t, p, nid, part);
    if (rc == 0) {
        fputs("{\"type\":", f);
        put_string(f, type);
        fputs(",\"unit\":", f);
        put_string(f, p->unit[0] ? p->unit : "samples");
        fputs(",\"elements\":[", f);
        rc = write_tree_body(f, &t, names);
        fputs("\n]}", f);
    }
    tree_free(&t);
    return rc;
}

/* The analysis tree(s) of p as JSON (see the top of this file); 0, or -1 with one line in err. */
int js_write_json_tree(FILE *f, const js_profile *p, const char *type, char *err, size_t errlen)
{
    if (!f || !p) {
        errno = EINVAL;
        return fail(err, errlen, "no output file or profile", 0);
    }
    if (!type || !*type) type = "EXECUTION_SAMPLE";
    int alloc = strcmp(type, "OBJECT_ALLOCATION") == 0;
    uint32_t *nid = NULL;
    const char **names = NULL;
    int rc = name_ids(p, &nid, &names);
    errno = 0;
    if (rc == 0) {
        fputs("{\"trees\":[", f);
        if (alloc) {
            rc = write_one(f, p, nid, names, "OBJECT_ALLOCATION_IN_NEW_TLAB", 1);
            fputs(",\n", f);
            if (rc == 0) rc = write_one(f, p, nid, names, "OBJECT_ALLOCATION_OUTSIDE_TLAB", 2);
        } else {
            rc = write_one(f, p, nid, names, type, 0);
        }
        fputs("]}\n", f);
    }
    free(nid);
    free(names);
    if (rc != 0) return fail(err, errlen, "out of memory", 0);
    if (fflush(f) != 0 || ferror(f)) return fail(err, errlen, "write error", 1);
    return 0;
}

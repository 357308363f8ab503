/* out_tree.c - indented text call tree.
 *
 * Nodes are keyed by frame name (frames of the same name and different types are one node). Each line is
 * "total%  total  self  name", the name indented two spaces per level (root frames at level 0); the indent
 * stops growing at MAX_INDENT_LEVELS and deeper names are prefixed with "[level N] ". Children are sorted by
 * total weight descending, then by name. Children whose total is under 0.1% of the profile total are folded
 * into one line per parent, "... (N more)", whose total and self columns both hold the folded weight.
 * Percentages are of the sum of all stacks (stacks without frames count there only). Newlines in names are
 * written as '_'. Layout:
 *
 *   # <title>                          (only when the profile has a title)
 *   Total: 1006 samples in 5 stacks
 *
 *    total%  total   self  name
 *   100.00%   1006      0  root
 *    99.90%   1005    400    app.A
 *     0.10%      1      1    ... (1 more)
 */
#include "output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INDENT_LEVELS 64
#define NONE UINT32_MAX
#define MIN_SLOTS 1024

typedef struct {
    uint32_t *parent, *nid; /* per node: parent node, name id (ids are in name order) */
    uint64_t *total, *self;
    size_t n, cap;
    uint32_t *slots; /* open addressing over (parent, nid) -> node */
    size_t nslots;
    uint32_t maxdepth;
} tree;

/* Writes one line to err: "tree output: <why>[: errno text]"; returns -1. */
static int fail(char *err, size_t errlen, const char *why, int with_errno)
{
    int e = errno;
    if (err && errlen) {
        if (with_errno)
            snprintf(err, errlen, "tree output: %s: %s", why, e ? strerror(e) : "I/O error");
        else
            snprintf(err, errlen, "tree output: %s", why);
    }
    return -1;
}

/* Writes s with '\n' and '\r' replaced by '_'. */
static void put_text(FILE *f, const char *s)
{
    for (;;) {
        size_t n = strcspn(s, "\n\r");
        if (n) fwrite(s, 1, n, f);
        if (!s[n]) return;
        putc('_', f);
        s += n + 1;
    }
}

/* qsort_r order of frame indexes by name. */
static int name_order(const void *a, const void *b, void *ctx)
{
    const js_pframe *fr = ctx;
    return strcmp(fr[*(const uint32_t *)a].name, fr[*(const uint32_t *)b].name);
}

/* Name ids: nid[frame] (equal names share an id, ids in name order) and names[id]; count in *nnames. */
static int name_ids(const js_profile *p, uint32_t **nid, const char ***names, size_t *nnames)
{
    size_t nf = p->nframes ? p->nframes : 1;
    uint32_t *byname = malloc(nf * sizeof *byname);
    *nid = malloc(nf * sizeof **nid);
    *names = malloc(nf * sizeof **names);
    *nnames = 0;
    if (!byname || !*nid || !*names) {
        free(byname);
        return -1;
    }
    for (size_t i = 0; i < p->nframes; i++) byname[i] = (uint32_t)i;
    qsort_r(byname, p->nframes, sizeof *byname, name_order, p->frames);
    for (size_t i = 0; i < p->nframes; i++) {
        const char *nm = p->frames[byname[i]].name;
        if (*nnames == 0 || strcmp((*names)[*nnames - 1], nm) != 0) (*names)[(*nnames)++] = nm;
        (*nid)[byname[i]] = (uint32_t)(*nnames - 1);
    }
    free(byname);
    return 0;
}

/* Slot hash of (parent, nid). */
static size_t slot_of(uint32_t parent, uint32_t nid, size_t nslots)
{
    uint64_t h = ((uint64_t)parent << 32 | nid) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 17) & (nslots - 1);
}

/* Rebuilds the slot table with nslots slots (a power of two); 0 or -1. */
static int tree_rehash(tree *t, size_t nslots)
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

/* Grows one per-node array to cap elements; 0 or -1. */
static int grow(void **a, size_t cap, size_t elem)
{
    void *n = realloc(*a, cap * elem);
    if (!n) return -1;
    *a = n;
    return 0;
}

/* Appends a node; its index, or NONE when out of memory or indexes. */
static uint32_t tree_new(tree *t, uint32_t parent, uint32_t nid)
{
    if (t->n >= NONE - 1) return NONE;
    if (t->n == t->cap) {
        size_t cap = t->cap * 2;
        if (grow((void **)&t->parent, cap, sizeof *t->parent) || grow((void **)&t->nid, cap, sizeof *t->nid) ||
            grow((void **)&t->total, cap, sizeof *t->total) || grow((void **)&t->self, cap, sizeof *t->self))
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
static uint32_t tree_child(tree *t, uint32_t parent, uint32_t nid)
{
    if ((t->n + 1) * 2 > t->nslots && tree_rehash(t, t->nslots * 2) != 0) return NONE;
    size_t h = slot_of(parent, nid, t->nslots);
    for (; t->slots[h] != NONE; h = (h + 1) & (t->nslots - 1))
        if (t->parent[t->slots[h]] == parent && t->nid[t->slots[h]] == nid) return t->slots[h];
    uint32_t c = tree_new(t, parent, nid);
    if (c != NONE) t->slots[h] = c;
    return c;
}

/* Releases everything the tree owns. */
static void tree_free(tree *t)
{
    free(t->parent);
    free(t->nid);
    free(t->total);
    free(t->self);
    free(t->slots);
}

/* Builds the tree of all stacks (node 0 = the virtual root, its total = the profile total); 0 or -1. */
static int tree_build(tree *t, const js_profile *p, const uint32_t *nid)
{
    memset(t, 0, sizeof *t);
    t->cap = 1024;
    t->parent = malloc(t->cap * sizeof *t->parent);
    t->nid = malloc(t->cap * sizeof *t->nid);
    t->total = malloc(t->cap * sizeof *t->total);
    t->self = malloc(t->cap * sizeof *t->self);
    if (!t->parent || !t->nid || !t->total || !t->self || tree_rehash(t, MIN_SLOTS) != 0) return -1;
    if (tree_new(t, NONE, NONE) != 0) return -1;
    for (size_t s = 0; s < p->nstacks; s++) {
        const js_pstack *st = &p->stacks[s];
        uint32_t cur = 0;
        t->total[0] += st->weight;
        for (uint32_t d = 0; d < st->depth; d++) {
            cur = tree_child(t, cur, nid[st->frames[d]]);
            if (cur == NONE) return -1;
            t->total[cur] += st->weight;
        }
        if (st->depth) t->self[cur] += st->weight;
        if (st->depth > t->maxdepth) t->maxdepth = st->depth;
    }
    return 0;
}

/* qsort_r order of nodes: by parent, then total descending, then name. */
static int node_order(const void *a, const void *b, void *ctx)
{
    const tree *t = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (t->parent[x] != t->parent[y]) return t->parent[x] < t->parent[y] ? -1 : 1;
    if (t->total[x] != t->total[y]) return t->total[x] > t->total[y] ? -1 : 1;
    return (t->nid[x] > t->nid[y]) - (t->nid[x] < t->nid[y]);
}

/* Number of decimal digits of v. */
static int digits(uint64_t v)
{
    int n = 1;
    while (v >= 10) v /= 10, n++;
    return n;
}

typedef struct {
    FILE *f;
    uint64_t grand;
    int w;
} line_fmt;

/* Writes the columns and the indent of one line at tree level lv. */
static void put_prefix(const line_fmt *lf, uint64_t total, uint64_t self, uint32_t lv)
{
    double pc = lf->grand ? 100.0 * (double)total / (double)lf->grand : 0.0;
    uint32_t ind = lv < MAX_INDENT_LEVELS ? lv : MAX_INDENT_LEVELS;
    fprintf(lf->f, "%6.2f%%  %*llu  %*llu  %*s", pc, lf->w, (unsigned long long)total, lf->w,
            (unsigned long long)self, (int)(2 * ind), "");
    if (lv > MAX_INDENT_LEVELS) fprintf(lf->f, "[level %u] ", lv);
}

/* Preorder walk printing every node; children in order[first[n] .. first[n] + count[n]). */
static int write_nodes(FILE *f, const tree *t, const char *const *names, const uint32_t *order,
                       const size_t *first, const uint32_t *count)
{
    size_t *pos = malloc(((size_t)t->maxdepth + 1) * sizeof *pos);
    size_t *end = malloc(((size_t)t->maxdepth + 1) * sizeof *end);
    if (!pos || !end) {
        free(pos);
        free(end);
        return -1;
    }
    uint64_t grand = t->total[0];
    uint64_t threshold = grand / 1000 + (grand % 1000 ? 1 : 0); /* total < threshold <=> total < 0.1% */
    line_fmt lf = {f, grand, digits(grand) > 5 ? digits(grand) : 5};
    fprintf(f, "%7s  %*s  %*s  %s\n", "total%", lf.w, "total", lf.w, "self", "name");
    uint32_t lv = 0;
    pos[0] = first[0];
    end[0] = first[0] + count[0];
    while (!ferror(f)) {
        if (pos[lv] == end[lv]) {
            if (lv == 0) break;
            lv--;
            continue;
        }
        uint32_t c = order[pos[lv]];
        if (t->total[c] < threshold) {
            uint64_t rest = 0;
            size_t n = end[lv] - pos[lv];
            for (; pos[lv] < end[lv]; pos[lv]++) rest += t->total[order[pos[lv]]];
            put_prefix(&lf, rest, rest, lv);
            fprintf(f, "... (%zu more)\n", n);
            continue;
        }
        pos[lv]++;
        put_prefix(&lf, t->total[c], t->self[c], lv);
        put_text(f, names[t->nid[c]]);
        putc('\n', f);
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

/* Sorts the nodes and prints them; 0 or -1 on allocation failure. */
static int write_tree_body(FILE *f, const tree *t, const char *const *names)
{
    uint32_t *order = malloc(t->n * sizeof *order), *count = calloc(t->n, sizeof *count);
    size_t *first = calloc(t->n, sizeof *first);
    int rc = -1;
    if (!order || !count || !first) goto out;
    for (size_t i = 1; i < t->n; i++) order[i - 1] = (uint32_t)i;
    qsort_r(order, t->n - 1, sizeof *order, node_order, (void *)t);
    for (size_t i = 0; i + 1 < t->n; i++) {
        uint32_t par = t->parent[order[i]];
        if (count[par]++ == 0) first[par] = i;
    }
    rc = write_nodes(f, t, names, order, first, count);
out:
    free(order);
    free(count);
    free(first);
    return rc;
}

/* Call tree of p to f (see the top of this file); 0, or -1 with one line in err. */
int js_write_tree(FILE *f, const js_profile *p, char *err, size_t errlen)
{
    if (!f || !p) {
        errno = EINVAL;
        return fail(err, errlen, "no output file or profile", 0);
    }
    uint32_t *nid = NULL;
    const char **names = NULL;
    size_t nnames = 0;
    tree t;
    memset(&t, 0, sizeof t);
    int rc = name_ids(p, &nid, &names, &nnames);
    if (rc == 0) rc = tree_build(&t, p, nid);
    if (rc == 0) {
        errno = 0;
        if (p->title[0]) {
            fputs("# ", f);
            put_text(f, p->title);
            putc('\n', f);
        }
        fprintf(f, "Total: %llu %s in %zu stacks\n\n", (unsigned long long)t.total[0],
                p->unit[0] ? p->unit : "samples", p->nstacks);
        rc = write_tree_body(f, &t, names);
    }
    free(nid);
    free(names);
    tree_free(&t);
    if (rc != 0) return fail(err, errlen, "out of memory", 0);
    if (fflush(f) != 0 || ferror(f)) return fail(err, errlen, "write error", 1);
    return 0;
}

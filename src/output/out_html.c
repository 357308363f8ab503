/* out_html.c - the self-contained interactive HTML flame graph.
 *
 * The page (src/flamegraph.html, embedded at build time as js_flamegraph_html) holds two markers:
 * @@JSAMPLER_TITLE@@ inside <title> and @@JSAMPLER_DATA@@ inside a <script type="application/json">
 * element. The writer copies the template and replaces each marker: the title with HTML text
 * escaping, the data with one JSON object:
 *
 *   {"v":1,"title":"..","unit":"..","reverse":0|1,"total":W,
 *    "names":["frame", ...],          used frames only, sorted by (name, type)
 *    "types":"0171..",                one digit (js_frame_type) per name
 *    "nodes":[f,up,self, ...]}        the call tree in preorder, children sorted by name
 *
 * A node is three numbers: f indexes "names"; up says how many levels to climb from the previous
 * node before attaching (0 = child of the previous node; the first node has up 0 and hangs from
 * the implicit root "all"); self is the weight of stacks ending exactly there. The page derives
 * totals and positions.
 *
 * Every string goes through js_html_escape, which writes valid JSON (and JS) string content: '"',
 * '\\' and control characters are escaped; '<', '>', '&' and '\'' become \u003c-style escapes, so no
 * name can close the script element or open a comment; U+2028/U+2029 are escaped; bytes that are
 * not valid UTF-8 (overlong, surrogate, truncated) become \ufffd, so the page is valid UTF-8.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "flamegraph_html.h"

#define NONE UINT32_MAX
#define DEFAULT_TITLE "jsampler flame graph"
#define DEFAULT_UNIT "samples"
#define MARK_PREFIX "@@JSAMPLER_"

/* The call tree: node 0 is the implicit root; children are singly linked. */
typedef struct {
    uint32_t *frame, *parent, *child, *next;
    uint64_t *self;
    size_t n, cap;
    uint32_t *slots; /* open addressing over (parent, frame) -> node */
    size_t nslots;
} tree;

/* Reports a write failure (if errno says why, with the reason) as one line in err. */
static int fail(char *err, size_t errlen, const char *what)
{
    int e = errno;
    if (err && errlen) {
        if (e) snprintf(err, errlen, "html: %s: %s", what, strerror(e));
        else snprintf(err, errlen, "html: %s", what);
    }
    return -1;
}

/* Hash of a (parent, frame) pair for the child lookup table. */
static size_t pair_hash(uint32_t parent, uint32_t frame)
{
    uint64_t h = ((uint64_t)parent << 32 | frame) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 29));
}

/* Grows node storage so that one more node fits; 0 or -1 on allocation failure. */
static int tree_reserve(tree *t)
{
    if (t->n < t->cap) return 0;
    size_t cap = t->cap ? t->cap * 2 : 1024;
    uint32_t **arrs[4] = {&t->frame, &t->parent, &t->child, &t->next};
    for (int i = 0; i < 4; i++) {
        uint32_t *a = realloc(*arrs[i], cap * sizeof **arrs[i]);
        if (!a) return -1;
        *arrs[i] = a;
    }
    uint64_t *s = realloc(t->self, cap * sizeof *s);
    if (!s) return -1;
    t->self = s;
    t->cap = cap;
    return 0;
}

/* Rebuilds the lookup table with at least 2 * want slots; 0 or -1 on allocation failure. */
static int tree_rehash(tree *t, size_t want)
{
    size_t n = 1024;
    while (n < want * 2) n *= 2;
    uint32_t *slots = malloc(n * sizeof *slots);
    if (!slots) return -1;
    memset(slots, 0xff, n * sizeof *slots);
    for (size_t i = 1; i < t->n; i++) {
        size_t h = pair_hash(t->parent[i], t->frame[i]) & (n - 1);
        while (slots[h] != NONE) h = (h + 1) & (n - 1);
        slots[h] = (uint32_t)i;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
    return 0;
}

/* Returns the child of parent for frame, creating it; NONE on allocation failure. */
static uint32_t tree_child(tree *t, uint32_t parent, uint32_t frame)
{
    size_t mask = t->nslots - 1, h = pair_hash(parent, frame) & mask;
    for (; t->slots[h] != NONE; h = (h + 1) & mask) {
        uint32_t c = t->slots[h];
        if (t->parent[c] == parent && t->frame[c] == frame) return c;
    }
    if (t->n >= NONE - 1 || tree_reserve(t) != 0) return NONE;
    uint32_t c = (uint32_t)t->n++;
    t->frame[c] = frame;
    t->parent[c] = parent;
    t->child[c] = NONE;
    t->next[c] = t->child[parent];
    t->child[parent] = c;
    t->self[c] = 0;
    t->slots[h] = c;
    if (t->n * 2 > t->nslots && tree_rehash(t, t->n) != 0) return NONE;
    return c;
}

/* Releases everything the tree owns. */
static void tree_free(tree *t)
{
    free(t->frame);
    free(t->parent);
    free(t->child);
    free(t->next);
    free(t->self);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

/* Builds the call tree of all stacks (frames as profile indexes); 0 or -1 on allocation failure. */
static int tree_build(tree *t, const js_profile *p, uint64_t *total)
{
    memset(t, 0, sizeof *t);
    if (tree_reserve(t) != 0 || tree_rehash(t, 1024) != 0) return -1;
    t->n = 1;
    t->frame[0] = NONE;
    t->parent[0] = NONE;
    t->child[0] = NONE;
    t->next[0] = NONE;
    t->self[0] = 0;
    *total = 0;
    for (size_t s = 0; s < p->nstacks; s++) {
        const js_pstack *st = &p->stacks[s];
        uint32_t cur = 0;
        for (uint32_t d = 0; d < st->depth; d++) {
            if (st->frames[d] >= p->nframes) continue; /* defensive: skip a dangling index */
            cur = tree_child(t, cur, st->frames[d]);
            if (cur == NONE) return -1;
        }
        t->self[cur] = js_weight_add(t->self[cur], st->weight);
        *total = js_weight_add(*total, st->weight);
    }
    return 0;
}

/* qsort_r order of frame indexes by (name, type). */
static int frame_cmp(const void *a, const void *b, void *ctx)
{
    const js_profile *p = ctx;
    const js_pframe *x = &p->frames[*(const uint32_t *)a], *y = &p->frames[*(const uint32_t *)b];
    int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
    if (c) return c;
    return (x->type > y->type) - (x->type < y->type);
}

/* qsort_r order of node indexes by the rank of their frame. */
static int node_cmp(const void *a, const void *b, void *ctx)
{
    const uint32_t *rank = ((const uint32_t *const *)ctx)[0];
    const uint32_t *frame = ((const uint32_t *const *)ctx)[1];
    uint32_t x = rank[frame[*(const uint32_t *)a]], y = rank[frame[*(const uint32_t *)b]];
    return (x > y) - (x < y);
}

/* Lists the frames the tree uses in name order (*order, *nused) and maps frame -> rank (*rank). */
static int rank_frames(const js_profile *p, const tree *t, uint32_t **order, size_t *nused, uint32_t **rank)
{
    *order = NULL;
    *rank = calloc(p->nframes ? p->nframes : 1, sizeof **rank);
    if (!*rank) return -1;
    for (size_t i = 1; i < t->n; i++) (*rank)[t->frame[i]] = 1;
    size_t n = 0;
    for (size_t i = 0; i < p->nframes; i++) n += (*rank)[i];
    *order = malloc((n ? n : 1) * sizeof **order);
    if (!*order) return -1;
    n = 0;
    for (size_t i = 0; i < p->nframes; i++)
        if ((*rank)[i]) (*order)[n++] = (uint32_t)i;
    qsort_r(*order, n, sizeof **order, frame_cmp, (void *)p);
    for (size_t i = 0; i < n; i++) (*rank)[(*order)[i]] = (uint32_t)i;
    *nused = n;
    return 0;
}

/* Relinks every child list in frame-rank order; 0 or -1 on allocation failure. */
static int sort_children(tree *t, const uint32_t *rank)
{
    size_t cap = 0;
    uint32_t *buf = NULL;
    const uint32_t *ctx[2] = {rank, t->frame};
    for (size_t i = 0; i < t->n; i++) {
        size_t k = 0;
        for (uint32_t c = t->child[i]; c != NONE; c = t->next[c]) k++;
        if (k < 2) continue;
        if (k > cap) {
            uint32_t *nb = realloc(buf, k * sizeof *nb);
            if (!nb) {
                free(buf);
                return -1;
            }
            buf = nb;
            cap = k;
        }
        k = 0;
        for (uint32_t c = t->child[i]; c != NONE; c = t->next[c]) buf[k++] = c;
        qsort_r(buf, k, sizeof *buf, node_cmp, (void *)ctx);
        t->child[i] = buf[0];
        for (size_t j = 0; j + 1 < k; j++) t->next[buf[j]] = buf[j + 1];
        t->next[buf[k - 1]] = NONE;
    }
    free(buf);
    return 0;
}

/* Writes v in decimal followed by the character after (if not 0). */
static void put_u64(FILE *f, uint64_t v, char after)
{
    char b[24];
    int i = (int)sizeof b;
    if (after) b[--i] = after;
    do {
        b[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    fwrite(b + i, 1, sizeof b - (size_t)i, f);
}

/* Length of the valid UTF-8 sequence at s (2..4), or 0 if the bytes there are not one. */
static int utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    int n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) n = 3;
    else if (c >= 0xF0 && c <= 0xF4) n = 4;
    else return 0;
    if (c == 0xE0) lo = 0xA0;
    else if (c == 0xED) hi = 0x9F; /* no UTF-16 surrogates */
    else if (c == 0xF0) lo = 0x90;
    else if (c == 0xF4) hi = 0x8F;
    if (s[1] < lo || s[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return n;
}

/* Writes s as JSON string content that is inert in an HTML script element (rules at the top). */
void js_html_escape(FILE *f, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    if (!f || !s) return;
    while (*u) {
        unsigned char c = *u;
        const char *rep = NULL;
        switch (c) {
        case '"': rep = "\\\""; break;
        case '\\': rep = "\\\\"; break;
        case '\n': rep = "\\n"; break;
        case '\r': rep = "\\r"; break;
        case '\t': rep = "\\t"; break;
        default: break;
        }
        if (rep) {
            fputs(rep, f);
            u++;
        } else if (c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&' || c == '\'') {
            char b[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            fputs(b, f);
            u++;
        } else if (c < 0x80) {
            putc(c, f);
            u++;
        } else {
            int n = utf8_len(u);
            if (n == 0) {
                fputs("\\ufffd", f);
                u++;
            } else if (n == 3 && u[0] == 0xE2 && u[1] == 0x80 && (u[2] == 0xA8 || u[2] == 0xA9)) {
                fputs(u[2] == 0xA8 ? "\\u2028" : "\\u2029", f);
                u += 3;
            } else {
                fwrite(u, 1, (size_t)n, f);
                u += n;
            }
        }
    }
}

/* Writes s as HTML text: & < > " ' as entities, controls as spaces, invalid UTF-8 as U+FFFD. */
static void html_text(FILE *f, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    while (*u) {
        unsigned char c = *u;
        int n;
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default:
            if (c < 0x20 || c == 0x7f) putc(' ', f);
            else if (c < 0x80) putc(c, f);
            else if ((n = utf8_len(u)) == 0) fputs("\xEF\xBF\xBD", f);
            else {
                fwrite(u, 1, (size_t)n, f);
                u += n;
                continue;
            }
        }
        u++;
    }
}

/* The profile's title, or the default when it is empty. */
static const char *title_of(const js_profile *p)
{
    return p->title[0] ? p->title : DEFAULT_TITLE;
}

/* Writes the JSON data object (see the top of this file); 0 or -1 on allocation failure. */
static int write_data(FILE *f, const js_profile *p, int reverse)
{
    tree t;
    uint64_t total = 0;
    uint32_t *order = NULL, *rank = NULL;
    size_t nused = 0;
    int rc = -1;
    if (tree_build(&t, p, &total) != 0) goto out;
    if (rank_frames(p, &t, &order, &nused, &rank) != 0) goto out;
    if (sort_children(&t, rank) != 0) goto out;

    fputs("{\"v\":1,\"title\":\"", f);
    js_html_escape(f, title_of(p));
    fputs("\",\"unit\":\"", f);
    js_html_escape(f, p->unit[0] ? p->unit : DEFAULT_UNIT);
    fprintf(f, "\",\"reverse\":%d,\"total\":", reverse ? 1 : 0);
    put_u64(f, total, ',');
    fputs("\n\"names\":[", f);
    for (size_t i = 0; i < nused; i++) {
        fputs(i ? ",\n\"" : "\"", f);
        js_html_escape(f, p->frames[order[i]].name ? p->frames[order[i]].name : "");
        putc('"', f);
    }
    fputs("],\n\"types\":\"", f);
    for (size_t i = 0; i < nused; i++) {
        unsigned ty = p->frames[order[i]].type;
        putc(ty < JS_FT_COUNT ? (char)('0' + ty) : '0', f);
    }
    fputs("\",\n\"nodes\":[", f);
    /* Preorder walk; depth is the node's depth below the root (first level = 1). */
    uint64_t prev_depth = 0, depth = 1, count = 0;
    uint32_t n = t.child[0];
    while (n != NONE) {
        if (count) fputs(count % 16 ? "," : ",\n", f);
        count++;
        put_u64(f, rank[t.frame[n]], ',');
        put_u64(f, prev_depth + 1 - depth, ',');
        put_u64(f, t.self[n], 0);
        prev_depth = depth;
        if (t.child[n] != NONE) {
            n = t.child[n];
            depth++;
            continue;
        }
        while (n != 0 && t.next[n] == NONE) {
            n = t.parent[n];
            depth--;
        }
        n = n == 0 ? NONE : t.next[n];
    }
    fputs("]}", f);
    rc = 0;
out:
    free(order);
    free(rank);
    tree_free(&t);
    return rc;
}

/* Writes the page: the template with its markers replaced; 0, or -1 with one line in err. */
int js_write_html(FILE *f, const js_profile *p, int reverse, char *err, size_t errlen)
{
    if (!f || !p) {
        errno = EINVAL;
        return fail(err, errlen, "no output file or profile");
    }
    const char *s = js_flamegraph_html;
    size_t plen = strlen(MARK_PREFIX);
    errno = 0;
    for (;;) {
        const char *m = strstr(s, MARK_PREFIX);
        if (!m) {
            fputs(s, f);
            break;
        }
        fwrite(s, 1, (size_t)(m - s), f);
        const char *key = m + plen, *end = strstr(key, "@@");
        if (!end) {
            fputs(m, f);
            break;
        }
        if (end - key == 5 && memcmp(key, "TITLE", 5) == 0) {
            html_text(f, title_of(p));
        } else if (end - key == 4 && memcmp(key, "DATA", 4) == 0) {
            if (write_data(f, p, reverse) != 0) {
                errno = ENOMEM;
                return fail(err, errlen, "cannot build the flame graph");
            }
        }
        s = end + 2;
    }
    if (fflush(f) != 0 || ferror(f)) return fail(err, errlen, "write error");
    return 0;
}

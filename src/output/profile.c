/* profile.c - see profile.h.
 *
 * Frames are interned in an open-addressing table (linear probing, load <= 1/2, doubled on growth) keyed by
 * (name, type). Each stack owns its own frame array. Every allocation failure is reported to the caller and
 * leaves the profile valid and unchanged.
 */
#include "output/profile.h"
#include "out_int.h"

#include <stdlib.h>
#include <string.h>

#define EMPTY_SLOT UINT32_MAX
#define MIN_INDEX_CAP 64
#define MIN_FRAMES_CAP 64
#define MIN_STACKS_CAP 64
#define MAX_FRAMES (UINT32_MAX - 1u) /* UINT32_MAX is the error value and the empty slot */

static const char *const type_names[JS_FT_COUNT] = {
    "interpreted", "jit", "inlined", "native", "cpp", "kernel", "c1", "thread", "error",
};

/* Short lowercase name of a frame type; "unknown" when out of range. */
const char *js_frame_type_name(js_frame_type t)
{
    return (unsigned)t < JS_FT_COUNT ? type_names[t] : "unknown";
}

/* Empty profile; unit "samples", no title (writers then use their default). */
void js_profile_init(js_profile *p)
{
    memset(p, 0, sizeof *p);
    memcpy(p->unit, "samples", sizeof "samples");
}

/* Frees names, stacks and tables, then leaves p as after js_profile_init. */
void js_profile_free(js_profile *p)
{
    for (size_t i = 0; i < p->nframes; i++) free(p->frames[i].name);
    for (size_t i = 0; i < p->nstacks; i++) free(p->stacks[i].frames);
    free(p->frames);
    free(p->stacks);
    free(p->index);
    js_profile_init(p);
}

/* FNV-1a over the name, mixed with the type: the interning hash. */
static uint64_t frame_hash(const char *name, uint8_t type)
{
    uint64_t h = 1469598103934665603ull ^ type;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) h = (h ^ *c) * 1099511628211ull;
    return h ^ (h >> 29);
}

/* Rebuilds the interning table with cap slots (a power of two); 0 or -1 on allocation failure. */
static int index_rehash(js_profile *p, size_t cap)
{
    uint32_t *idx = malloc(cap * sizeof *idx);
    if (!idx) return -1;
    memset(idx, 0xff, cap * sizeof *idx);
    for (size_t i = 0; i < p->nframes; i++) {
        size_t h = (size_t)frame_hash(p->frames[i].name, p->frames[i].type) & (cap - 1);
        while (idx[h] != EMPTY_SLOT) h = (h + 1) & (cap - 1);
        idx[h] = (uint32_t)i;
    }
    free(p->index);
    p->index = idx;
    p->index_cap = cap;
    return 0;
}

/* Interned index of (name, type), adding a copy when new; NULL name = ""; UINT32_MAX on failure. */
uint32_t js_profile_frame(js_profile *p, const char *name, js_frame_type type)
{
    if (!name) name = "";
    uint8_t ty = (uint8_t)type;
    if (!p->index && index_rehash(p, MIN_INDEX_CAP) != 0) return UINT32_MAX;
    uint64_t hv = frame_hash(name, ty);
    size_t h = (size_t)hv & (p->index_cap - 1);
    for (; p->index[h] != EMPTY_SLOT; h = (h + 1) & (p->index_cap - 1)) {
        const js_pframe *f = &p->frames[p->index[h]];
        if (f->type == ty && strcmp(f->name, name) == 0) return p->index[h];
    }
    if (p->nframes >= MAX_FRAMES) return UINT32_MAX;
    /* Keep the load at most 1/2; if doubling fails, carry on while one slot stays empty after insertion. */
    if ((p->nframes + 1) * 2 > p->index_cap) {
        if (index_rehash(p, p->index_cap * 2) != 0 && p->nframes + 2 > p->index_cap) return UINT32_MAX;
        h = (size_t)hv & (p->index_cap - 1);
        while (p->index[h] != EMPTY_SLOT) h = (h + 1) & (p->index_cap - 1);
    }
    if (p->nframes == p->cap_frames) {
        size_t cap = p->cap_frames ? p->cap_frames * 2 : MIN_FRAMES_CAP;
        js_pframe *nf = realloc(p->frames, cap * sizeof *nf);
        if (!nf) return UINT32_MAX;
        p->frames = nf;
        p->cap_frames = cap;
    }
    char *copy = strdup(name);
    if (!copy) return UINT32_MAX;
    uint32_t id = (uint32_t)p->nframes;
    p->frames[id].name = copy;
    p->frames[id].type = ty;
    p->frames[id].java = 0;
    p->index[h] = id;
    p->nframes++;
    return id;
}

/* js_profile_frame, marking the frame a Java method. */
uint32_t js_profile_frame_java(js_profile *p, const char *name, js_frame_type type)
{
    uint32_t id = js_profile_frame(p, name, type);
    if (id != UINT32_MAX) p->frames[id].java = 1;
    return id;
}

/* Rebuild the interning table after names changed in place; 0 or -1. */
static int profile_reindex(js_profile *p)
{
    return index_rehash(p, p->index_cap ? p->index_cap : MIN_INDEX_CAP);
}

/* Appends a copy of frames (root first) with no event count. */
int js_profile_add(js_profile *p, const uint32_t *frames, uint32_t depth, uint64_t weight)
{
    return js_profile_add_n(p, frames, depth, weight, 0);
}

/* Appends a copy of frames (root first); depth 0 counts in the total only; -1 on a bad index or no memory. */
int js_profile_add_n(js_profile *p, const uint32_t *frames, uint32_t depth, uint64_t weight, uint64_t count)
{
    if (depth && !frames) return -1;
    for (uint32_t i = 0; i < depth; i++)
        if (frames[i] >= p->nframes) return -1;
    if (p->nstacks == p->cap_stacks) {
        size_t cap = p->cap_stacks ? p->cap_stacks * 2 : MIN_STACKS_CAP;
        js_pstack *ns = realloc(p->stacks, cap * sizeof *ns);
        if (!ns) return -1;
        p->stacks = ns;
        p->cap_stacks = cap;
    }
    uint32_t *copy = NULL;
    if (depth) {
        copy = malloc((size_t)depth * sizeof *copy);
        if (!copy) return -1;
        memcpy(copy, frames, (size_t)depth * sizeof *copy);
    }
    p->stacks[p->nstacks].frames = copy;
    p->stacks[p->nstacks].depth = depth;
    p->stacks[p->nstacks].weight = weight;
    p->stacks[p->nstacks].count = count;
    p->nstacks++;
    p->total = js_weight_add(p->total, weight);
    return 0;
}

/* qsort_r order of frame indexes by (name, type). */
static int frame_order(const void *a, const void *b, void *ctx)
{
    const js_pframe *fr = ctx;
    const js_pframe *x = &fr[*(const uint32_t *)a], *y = &fr[*(const uint32_t *)b];
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return (x->type > y->type) - (x->type < y->type);
}

typedef struct {
    const js_pstack *stacks;
    const uint32_t *rank;
} stack_ctx;

/* qsort_r order of stack indexes: frame ranks compared root first; a prefix sorts first. */
static int stack_order(const void *a, const void *b, void *ctx)
{
    const stack_ctx *c = ctx;
    const js_pstack *x = &c->stacks[*(const uint32_t *)a], *y = &c->stacks[*(const uint32_t *)b];
    uint32_t n = x->depth < y->depth ? x->depth : y->depth;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t rx = c->rank[x->frames[i]], ry = c->rank[y->frames[i]];
        if (rx != ry) return rx < ry ? -1 : 1;
    }
    return (x->depth > y->depth) - (x->depth < y->depth);
}

/* Same frame list (interned indexes, so equal lists mean equal names and types). */
static int same_stack(const js_pstack *x, const js_pstack *y)
{
    if (x->depth != y->depth) return 0;
    return x->depth == 0 || memcmp(x->frames, y->frames, (size_t)x->depth * sizeof *x->frames) == 0;
}

/* Sorts stacks by frame (name, type) root first and merges equal ones; -1 (p unchanged) without memory. */
int js_profile_normalize(js_profile *p)
{
    if (p->nstacks == 0) return 0;
    if (p->nstacks > UINT32_MAX) return -1;
    uint32_t *order = malloc(p->nframes ? p->nframes * sizeof *order : 1);
    uint32_t *rank = malloc(p->nframes ? p->nframes * sizeof *rank : 1);
    uint32_t *sorder = malloc(p->nstacks * sizeof *sorder);
    js_pstack *out = malloc(p->nstacks * sizeof *out);
    int rc = -1;
    if (!order || !rank || !sorder || !out) goto done;
    for (size_t i = 0; i < p->nframes; i++) order[i] = (uint32_t)i;
    qsort_r(order, p->nframes, sizeof *order, frame_order, p->frames);
    for (size_t i = 0; i < p->nframes; i++) rank[order[i]] = (uint32_t)i;
    for (size_t i = 0; i < p->nstacks; i++) sorder[i] = (uint32_t)i;
    stack_ctx c = {p->stacks, rank};
    qsort_r(sorder, p->nstacks, sizeof *sorder, stack_order, &c);
    /* Nothing can fail from here on: rebuild the stack array, merging runs of equal stacks. */
    size_t n = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < p->nstacks; i++) {
        js_pstack *s = &p->stacks[sorder[i]];
        total = js_weight_add(total, s->weight);
        if (n && same_stack(&out[n - 1], s)) {
            out[n - 1].weight = js_weight_add(out[n - 1].weight, s->weight);
            out[n - 1].count = js_weight_add(out[n - 1].count, s->count);
            free(s->frames);
        } else {
            out[n++] = *s;
        }
    }
    free(p->stacks);
    p->stacks = out;
    p->cap_stacks = p->nstacks;
    p->nstacks = n;
    p->total = total;
    out = NULL;
    rc = 0;
done:
    free(order);
    free(rank);
    free(sorder);
    free(out);
    return rc;
}

/* Length in bytes of the UTF-8 character starting at s (1 for a stray byte), never past the NUL. */
static size_t char_len(const char *s)
{
    size_t n = 1;
    if ((unsigned char)s[0] >= 0xc0)
        while (n < 4 && ((unsigned char)s[n] & 0xc0) == 0x80) n++;
    return n;
}

/* Glob match of the first plen bytes of pat against all of s: '*' any run, '?' one UTF-8 character.
 * Iterative with one backtrack point (the last '*'), so linear-times-pattern, never exponential. */
static int glob_match_n(const char *pat, size_t plen, const char *s)
{
    size_t pi = 0, star = (size_t)-1;
    const char *mark = NULL;
    while (*s) {
        if (pi < plen && pat[pi] == '*') {
            star = pi++;
            mark = s;
        } else if (pi < plen && pat[pi] == '?') {
            pi++;
            s += char_len(s);
        } else if (pi < plen && pat[pi] == *s) {
            pi++;
            s++;
        } else if (star != (size_t)-1) {
            pi = star + 1;
            mark += char_len(mark);
            s = mark;
        } else {
            return 0;
        }
    }
    while (pi < plen && pat[pi] == '*') pi++;
    return pi == plen;
}

/* 1 if all of s matches pattern ('*' any run, '?' one UTF-8 character, other bytes literal). */
int js_glob_match(const char *pattern, const char *s)
{
    if (!pattern || !s) return 0;
    return glob_match_n(pattern, strlen(pattern), s);
}

/* 1 if name matches any non-empty '|'-separated pattern in pats. */
static int match_any(const char *pats, const char *name)
{
    for (const char *p = pats; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len && glob_match_n(p, len, name)) return 1;
        if (!bar) break;
        p = bar + 1;
    }
    return 0;
}

/* 1 if pats holds at least one non-empty pattern. */
static int has_pattern(const char *pats)
{
    if (!pats) return 0;
    for (; *pats; pats++)
        if (*pats != '|') return 1;
    return 0;
}

enum { M_UNKNOWN = 0, M_NO = 1, M_YES = 2 };

/* Length of name without a ":LINE" suffix and a "(signature)" (the decorations of lines and sig). */
static size_t bare_len(const char *name)
{
    size_t n = strlen(name);
    size_t d = n;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9') d--;
    if (d < n && d > 0 && name[d - 1] == ':') n = d - 1;
    const char *paren = memchr(name, '(', n);
    return paren && paren != name ? (size_t)(paren - name) : n;
}

/* 1 if name, or name without its line and signature decorations, matches any pattern in pats. */
static int name_matches(const char *pats, const char *name)
{
    if (match_any(pats, name)) return 1;
    size_t n = bare_len(name);
    if (n == strlen(name)) return 0;
    char bare[1024];
    if (n >= sizeof bare) n = sizeof bare - 1;
    memcpy(bare, name, n);
    bare[n] = 0;
    return match_any(pats, bare);
}

/* 1 if frame f matches pats: by its name, and a Java method also by its name with slashes. */
static int frame_name_matches(const js_profile *p, uint32_t f, const char *pats)
{
    const js_pframe *fr = &p->frames[f];
    if (name_matches(pats, fr->name)) return 1;
    char alt[1024];
    return fr->java && name_matches(pats, js_java_name(fr->name, fr->type, JS_JN_SLASHES, alt, sizeof alt));
}

/* Whether frame f matches pats, memoised in cache (may be NULL: then computed every time). */
static int frame_matches(const js_profile *p, uint8_t *cache, uint32_t f, const char *pats)
{
    if (!cache) return frame_name_matches(p, f, pats);
    if (cache[f] == M_UNKNOWN) cache[f] = frame_name_matches(p, f, pats) ? M_YES : M_NO;
    return cache[f] == M_YES;
}

/* Drops stacks failing include / matching exclude ('|'-separated globs, empty ones ignored). */
void js_profile_filter(js_profile *p, const char *include, const char *exclude)
{
    int inc = has_pattern(include), exc = has_pattern(exclude);
    if (!inc && !exc) return;
    /* Memo tables are an optimisation only: without memory the patterns are matched per frame. */
    uint8_t *icache = inc ? calloc(p->nframes ? p->nframes : 1, 1) : NULL;
    uint8_t *ecache = exc ? calloc(p->nframes ? p->nframes : 1, 1) : NULL;
    size_t n = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < p->nstacks; i++) {
        js_pstack *s = &p->stacks[i];
        int keep = !inc;
        for (uint32_t d = 0; d < s->depth && !keep; d++) keep = frame_matches(p, icache, s->frames[d], include);
        for (uint32_t d = 0; d < s->depth && keep && exc; d++)
            if (frame_matches(p, ecache, s->frames[d], exclude)) keep = 0;
        if (!keep) {
            free(s->frames);
            continue;
        }
        total = js_weight_add(total, s->weight);
        p->stacks[n++] = *s;
    }
    p->nstacks = n;
    p->total = total;
    free(icache);
    free(ecache);
}

/* ---- Java method names as async-profiler writes them (js_profile_java_names, js_java_name) ----
 *
 * A Java frame is named "pkg.Class.method", then "(signature)" with sig and ":LINE" with lines. The class is the
 * part before the last '.' that comes before any '(' or ':'; JS_JN_SLASHES writes its dots as '/' (the JVM's
 * internal form, what async-profiler writes in collapsed stacks, trees and flame graphs), JS_JN_SIMPLE drops its
 * package, JS_JN_NORM drops a hidden class's address, JS_JN_HIDDEN writes a hidden class's address after a '/' as
 * Class.getName does (JVMTI names it after a '.'), JS_JN_ANN appends the frame's kind.
 */
/* The kind suffix of a Java frame type, "" for other types. */
static const char *ann_suffix(uint8_t type)
{
    switch (type) {
    case JS_FT_JIT: return "_[j]";
    case JS_FT_INLINED: return "_[i]";
    case JS_FT_INTERPRETED: return "_[0]";
    case JS_FT_C1: return "_[1]";
    default: return "";
    }
}

/* norm: the length of class name c[0..n) without a hidden class's address: the part after its last '.' or '/' when
 * that starts with a digit ("Foo$$Lambda/0x0000000800c01234" -> "Foo$$Lambda"), as async-profiler cuts it. */
static size_t norm_len(const char *c, size_t n)
{
    for (size_t i = n; i > 1; i--)
        if (c[i - 1] == '.' || c[i - 1] == '/') return c[i] >= '0' && c[i] <= '9' ? i - 1 : n;
    return n;
}

char *js_java_name(const char *name, uint8_t type, unsigned style, char *out, size_t outlen)
{
    if (!outlen) return out;
    size_t end = strcspn(name, "(:"), dot = end;
    while (dot > 0 && name[dot - 1] != '.') dot--;
    size_t cls = dot ? dot - 1 : 0; /* the class part is name[0..cls) */
    size_t keep = (style & JS_JN_NORM) ? norm_len(name, cls) : cls; /* the class part written */
    size_t from = 0;
    if ((style & JS_JN_SIMPLE) && cls) { /* the package: up to the last '.' not followed by a digit */
        size_t p = cls;
        while (p > 0 && (name[p - 1] != '.' || (name[p] >= '0' && name[p] <= '9'))) p--;
        from = p;
    }
    size_t o = 0;
    for (size_t i = from; name[i] && o + 1 < outlen; i++) {
        if (i == keep && keep < cls) i = cls; /* the hidden suffix or lambda counter left out */
        int hidden = i < cls && name[i] == '.' && name[i + 1] >= '0' && name[i + 1] <= '9'; /* "Foo$$Lambda.0x12" */
        out[o++] = i < cls && name[i] == '.' && ((style & JS_JN_SLASHES) || (hidden && (style & JS_JN_HIDDEN)))
                       ? '/' : name[i];
    }
    out[o] = 0;
    if (style & JS_JN_ANN) {
        const char *sfx = ann_suffix(type);
        size_t k = strlen(sfx);
        if (o + k < outlen) memcpy(out + o, sfx, k + 1);
    }
    return out;
}

int js_profile_java_names(js_profile *p, unsigned style)
{
    if (!style) return 0;
    for (size_t i = 0; i < p->nframes; i++) {
        js_pframe *f = &p->frames[i];
        if (!f->java) continue;
        size_t cap = strlen(f->name) + 8;
        char *n = malloc(cap);
        if (!n) return -1;
        js_java_name(f->name, f->type, style, n, cap);
        free(f->name);
        f->name = n;
    }
    return profile_reindex(p);
}

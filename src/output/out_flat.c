/* out_flat.c - flat profile: the top N methods by self weight and by total (inclusive) weight.
 *
 * A "method" is a frame name: frames of the same name and different types (JIT, inlined, ...) are one method.
 * Thread root frames (JS_FT_THREAD) are not methods and are left out. Self weight is the weight of stacks whose
 * leaf frame is the method; total weight counts each stack once per method it contains, however many times
 * (recursion). Rows with zero weight are not listed; ties are broken by name, so the output is deterministic.
 * Percentages are of the profile's total weight (the sum of all stacks, also those without frames).
 * Newlines in names are written as '_'. Layout (numbers right-aligned to the widest value):
 *
 *   # <title>                          (only when the profile has a title)
 *   Total: 1006 samples in 5 stacks
 *
 *   Top 2 methods by self samples:
 *    self    self%  total   total%  method
 *     600   59.64%    600   59.64%  app.A
 *     305   30.32%    305   30.32%  app.B
 *
 *   Top 2 methods by total samples:
 *   (same columns)
 *
 *   Stacks whose walk failed: 12 samples (1.19%)       (only when some leaf is a walk-failure pseudo-frame)
 *        10    0.99%  [unknown_Java]
 *
 * Pseudo-frames that are not failures ([no_Java_frame], [not_Java_thread], and the [truncated] root of a stack cut
 * at the walker's depth) are not counted there.
 */
#include "output/output.h"
#include "out_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TOP 20
#define NO_METHOD UINT32_MAX

typedef struct {
    const char **name; /* method -> name (borrowed from the profile) */
    uint64_t *self, *total;
    size_t n;
} methods;

/* One line in err, "flat output: <why>[: errno text]"; returns -1. */
static int fail(char *err, size_t errlen, const char *why, int with_errno)
{
    return js_out_fail("flat output", err, errlen, why, with_errno);
}

/* Writes s with '\n' and '\r' replaced by '_'. */
static void put_text(FILE *f, const char *s)
{
    js_out_put_replacing(f, s, "\n\r");
}

/* qsort_r order of frame indexes by name. */
static int name_order(const void *a, const void *b, void *ctx)
{
    const js_pframe *fr = ctx;
    return strcmp(fr[*(const uint32_t *)a].name, fr[*(const uint32_t *)b].name);
}

/* Releases the method table. */
static void methods_free(methods *m)
{
    free(m->name);
    free(m->self);
    free(m->total);
}

/* Maps frames to methods (mid[frame], NO_METHOD for threads) and sums self/total per method; 0 or -1. */
static int methods_build(const js_profile *p, methods *m)
{
    size_t nf = p->nframes ? p->nframes : 1;
    uint32_t *byname = malloc(nf * sizeof *byname), *mid = malloc(nf * sizeof *mid);
    size_t *stamp = NULL;
    int rc = -1;
    memset(m, 0, sizeof *m);
    if (!byname || !mid) goto out;
    size_t k = 0;
    for (size_t i = 0; i < p->nframes; i++) {
        mid[i] = NO_METHOD;
        if (p->frames[i].type != JS_FT_THREAD) byname[k++] = (uint32_t)i;
    }
    qsort_r(byname, k, sizeof *byname, name_order, p->frames);
    m->name = malloc((k ? k : 1) * sizeof *m->name);
    m->self = calloc(k ? k : 1, sizeof *m->self);
    m->total = calloc(k ? k : 1, sizeof *m->total);
    stamp = calloc(k ? k : 1, sizeof *stamp);
    if (!m->name || !m->self || !m->total || !stamp) goto out;
    for (size_t i = 0; i < k; i++) {
        const char *nm = p->frames[byname[i]].name;
        if (m->n == 0 || strcmp(m->name[m->n - 1], nm) != 0) m->name[m->n++] = nm;
        mid[byname[i]] = (uint32_t)(m->n - 1);
    }
    for (size_t s = 0; s < p->nstacks; s++) {
        const js_pstack *st = &p->stacks[s];
        for (uint32_t d = 0; d < st->depth; d++) {
            uint32_t id = mid[st->frames[d]];
            if (id == NO_METHOD || stamp[id] == s + 1) continue;
            stamp[id] = s + 1; /* counted for this stack already */
            m->total[id] = js_weight_add(m->total[id], st->weight);
        }
        uint32_t leaf = st->depth ? mid[st->frames[st->depth - 1]] : NO_METHOD;
        if (leaf != NO_METHOD) m->self[leaf] = js_weight_add(m->self[leaf], st->weight);
    }
    rc = 0;
out:
    free(byname);
    free(mid);
    free(stamp);
    return rc;
}

/* qsort_r order of method ids: self weight descending, then name. */
static int by_self(const void *a, const void *b, void *ctx)
{
    const methods *m = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (m->self[x] != m->self[y]) return m->self[x] > m->self[y] ? -1 : 1;
    return strcmp(m->name[x], m->name[y]);
}

/* qsort_r order of method ids: total weight descending, then name. */
static int by_total(const void *a, const void *b, void *ctx)
{
    const methods *m = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (m->total[x] != m->total[y]) return m->total[x] > m->total[y] ? -1 : 1;
    return strcmp(m->name[x], m->name[y]);
}

/* Percentage of w in total (0 when total is 0). */
static double pct(uint64_t w, uint64_t total)
{
    return total ? 100.0 * (double)w / (double)total : 0.0;
}

/* Number of decimal digits of v. */
static int digits(uint64_t v)
{
    int n = 1;
    while (v >= 10) v /= 10, n++;
    return n;
}

/* One table: the top rows of ids (already sorted) whose key weight (self or total) is non-zero. */
static void write_table(FILE *f, const methods *m, const uint32_t *ids, int top, int by_self_key, uint64_t total,
                        const char *unit)
{
    const uint64_t *key = by_self_key ? m->self : m->total;
    size_t rows = 0;
    while (rows < m->n && rows < (size_t)top && key[ids[rows]] > 0) rows++;
    int w = digits(total) > 5 ? digits(total) : 5;
    fprintf(f, "\nTop %zu methods by %s %s:\n", rows, by_self_key ? "self" : "total", unit);
    fprintf(f, "%*s  %7s  %*s  %7s  %s\n", w, "self", "self%", w, "total", "total%", "method");
    for (size_t i = 0; i < rows && !ferror(f); i++) {
        uint32_t id = ids[i];
        fprintf(f, "%*llu  %6.2f%%  %*llu  %6.2f%%  ", w, (unsigned long long)m->self[id], pct(m->self[id], total),
                w, (unsigned long long)m->total[id], pct(m->total[id], total));
        put_text(f, m->name[id]);
        putc('\n', f);
    }
}

/* 1 if a leaf frame names a failed stack walk. */
static int failed_walk(const js_pframe *fr)
{
    return fr->type == JS_FT_ERROR && fr->name[0] == '[' && strcmp(fr->name, "[no_Java_frame]") != 0 &&
           strcmp(fr->name, "[not_Java_thread]") != 0 && strcmp(fr->name, JS_TRUNCATED_FRAME) != 0;
}

/* The share of failed walks, per reason (leaf pseudo-frame); nothing when there are none. m gives the
 * names' self weights. */
static void write_failures(FILE *f, const js_profile *p, const methods *m, uint64_t total, const char *unit)
{
    uint64_t failed = 0;
    for (size_t s = 0; s < p->nstacks; s++) {
        const js_pstack *st = &p->stacks[s];
        if (st->depth && failed_walk(&p->frames[st->frames[st->depth - 1]])) failed = js_weight_add(failed, st->weight);
    }
    if (!failed) return;
    fprintf(f, "\nStacks whose walk failed: %llu %s (%.2f%%)\n", (unsigned long long)failed, unit, pct(failed, total));
    int w = digits(total) > 5 ? digits(total) : 5;
    for (size_t i = 0; i < m->n; i++) {
        js_pframe probe = {.name = (char *)m->name[i], .type = JS_FT_ERROR};
        if (!m->self[i] || !failed_walk(&probe)) continue;
        fprintf(f, "%*llu  %6.2f%%  ", w, (unsigned long long)m->self[i], pct(m->self[i], total));
        put_text(f, m->name[i]);
        putc('\n', f);
    }
}

/* Flat profile of p to f (see the top of this file); top_n <= 0 means 20; 0, or -1 with one line in err. */
int js_write_flat(FILE *f, const js_profile *p, int top_n, char *err, size_t errlen)
{
    if (!f || !p) {
        errno = EINVAL;
        return fail(err, errlen, "no output file or profile", 0);
    }
    if (top_n <= 0) top_n = DEFAULT_TOP;
    methods m;
    if (methods_build(p, &m) != 0) {
        methods_free(&m);
        return fail(err, errlen, "out of memory", 0);
    }
    uint32_t *ids = malloc((m.n ? m.n : 1) * sizeof *ids);
    if (!ids) {
        methods_free(&m);
        return fail(err, errlen, "out of memory", 0);
    }
    uint64_t total = 0;
    for (size_t s = 0; s < p->nstacks; s++) total += p->stacks[s].weight;
    const char *unit = p->unit[0] ? p->unit : "samples";
    errno = 0;
    if (p->title[0]) {
        fputs("# ", f);
        put_text(f, p->title);
        putc('\n', f);
    }
    fprintf(f, "Total: %llu %s in %zu stacks\n", (unsigned long long)total, unit, p->nstacks);
    for (size_t i = 0; i < m.n; i++) ids[i] = (uint32_t)i;
    qsort_r(ids, m.n, sizeof *ids, by_self, &m);
    write_table(f, &m, ids, top_n, 1, total, unit);
    qsort_r(ids, m.n, sizeof *ids, by_total, &m);
    write_table(f, &m, ids, top_n, 0, total, unit);
    write_failures(f, p, &m, total, unit);
    free(ids);
    methods_free(&m);
    if (fflush(f) != 0 || ferror(f)) return fail(err, errlen, "write error", 1);
    return 0;
}

/* out_collapsed.c - collapsed stacks ("frame;frame;frame weight").
 *
 * One line per distinct stack, root first, lines sorted by frame names (so the output is the same whatever
 * order the stacks were added in, normalized or not). Frames are written by name only: frames with the same
 * name and different types print alike, so their stacks are merged into one line. Inside a name, ';', '\n'
 * and '\r' (which would break the format) are written as '_', and an empty name is written "_". Stacks without frames are not written (their
 * weight has no frame to sit on); lines with weight 0 are.
 */
#include "output/output.h"
#include "out_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One line in err, "collapsed output: <why>[: errno text]"; returns -1. */
static int fail(char *err, size_t errlen, const char *why, int with_errno)
{
    return js_out_fail("collapsed output", err, errlen, why, with_errno);
}

/* Writes name with ';', '\n', '\r' replaced by '_', and an empty name as "_" (a frame read from "_[k]" has none:
 * written as nothing, a stack of it alone was a line without frames). */
static void put_name(FILE *f, const char *s)
{
    js_out_put_replacing(f, *s ? s : "_", ";\n\r");
}

/* qsort_r order of frame indexes by name. */
static int name_order(const void *a, const void *b, void *ctx)
{
    const js_pframe *fr = ctx;
    return strcmp(fr[*(const uint32_t *)a].name, fr[*(const uint32_t *)b].name);
}

typedef struct {
    const js_pstack *stacks;
    const uint32_t *rank;
} order_ctx;

/* Compares two stacks by the name ranks of their frames, root first; a prefix sorts first. */
static int stack_cmp(const order_ctx *c, uint32_t a, uint32_t b)
{
    const js_pstack *x = &c->stacks[a], *y = &c->stacks[b];
    uint32_t n = x->depth < y->depth ? x->depth : y->depth;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t rx = c->rank[x->frames[i]], ry = c->rank[y->frames[i]];
        if (rx != ry) return rx < ry ? -1 : 1;
    }
    return (x->depth > y->depth) - (x->depth < y->depth);
}

/* qsort_r adapter for stack_cmp. */
static int stack_order(const void *a, const void *b, void *ctx)
{
    return stack_cmp(ctx, *(const uint32_t *)a, *(const uint32_t *)b);
}

/* Fills rank (frame -> rank of its name, equal names equal rank) and sorder (stacks in output order). */
static int build_order(const js_profile *p, uint32_t *rank, uint32_t *sorder)
{
    uint32_t *byname = malloc(p->nframes ? p->nframes * sizeof *byname : 1);
    if (!byname) return -1;
    for (size_t i = 0; i < p->nframes; i++) byname[i] = (uint32_t)i;
    qsort_r(byname, p->nframes, sizeof *byname, name_order, p->frames);
    uint32_t r = 0;
    for (size_t i = 0; i < p->nframes; i++) {
        if (i && strcmp(p->frames[byname[i]].name, p->frames[byname[i - 1]].name) != 0) r++;
        rank[byname[i]] = r;
    }
    free(byname);
    for (size_t i = 0; i < p->nstacks; i++) sorder[i] = (uint32_t)i;
    order_ctx c = {p->stacks, rank};
    qsort_r(sorder, p->nstacks, sizeof *sorder, stack_order, &c);
    return 0;
}

/* Writes the lines: runs of equal name lists are merged; stops early once the stream has failed. */
static void write_lines(FILE *f, const js_profile *p, const uint32_t *rank, const uint32_t *sorder)
{
    order_ctx c = {p->stacks, rank};
    for (size_t i = 0; i < p->nstacks && !ferror(f);) {
        const js_pstack *s = &p->stacks[sorder[i]];
        uint64_t w = 0;
        size_t j = i;
        for (; j < p->nstacks && stack_cmp(&c, sorder[i], sorder[j]) == 0; j++)
            w = js_weight_add(w, p->stacks[sorder[j]].weight);
        i = j;
        if (s->depth == 0) continue;
        for (uint32_t d = 0; d < s->depth; d++) {
            if (d) putc(';', f);
            put_name(f, p->frames[s->frames[d]].name);
        }
        fprintf(f, " %llu\n", (unsigned long long)w);
    }
}

/* Collapsed stacks of p to f (see the top of this file); 0, or -1 with one line in err. */
int js_write_collapsed(FILE *f, const js_profile *p, char *err, size_t errlen)
{
    if (!f || !p) {
        errno = EINVAL;
        return fail(err, errlen, "no output file or profile", 0);
    }
    if (p->nstacks > UINT32_MAX) return fail(err, errlen, "too many stacks", 0);
    uint32_t *rank = malloc(p->nframes ? p->nframes * sizeof *rank : 1);
    uint32_t *sorder = malloc(p->nstacks ? p->nstacks * sizeof *sorder : 1);
    if (!rank || !sorder || build_order(p, rank, sorder) != 0) {
        free(rank);
        free(sorder);
        return fail(err, errlen, "out of memory", 0);
    }
    errno = 0;
    write_lines(f, p, rank, sorder);
    free(rank);
    free(sorder);
    if (fflush(f) != 0 || ferror(f)) return fail(err, errlen, "write error", 1);
    return 0;
}

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
#include "output/calltree.h"
#include "output/output.h"
#include "out_int.h"

#include <errno.h>
#include <string.h>

#define MAX_INDENT_LEVELS 64

/* One line in err, "tree output: <why>[: errno text]"; returns -1. */
static int fail(char *err, size_t errlen, const char *why, int with_errno)
{
    return js_out_fail("tree output", err, errlen, why, with_errno);
}

/* Writes s with '\n' and '\r' replaced by '_'. */
static void put_text(FILE *f, const char *s)
{
    js_out_put_replacing(f, s, "\n\r");
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

/* Prints every node below the root in preorder, folding children under 0.1% of the total; 0 or -1. */
static int write_nodes(FILE *f, const js_calltree *t, const js_calltree_names *nm)
{
    js_calltree_walk w;
    if (js_calltree_walk_begin(&w, t) != 0) return -1;
    uint64_t grand = t->total[0];
    uint64_t threshold = grand / 1000 + (grand % 1000 ? 1 : 0); /* total < threshold <=> total < 0.1% */
    line_fmt lf = {f, grand, digits(grand) > 5 ? digits(grand) : 5};
    fprintf(f, "%7s  %*s  %*s  %s\n", "total%", lf.w, "total", lf.w, "self", "name");
    uint32_t c, lv;
    while (!ferror(f) && (c = js_calltree_walk_next(&w, &lv)) != JS_CALLTREE_NONE) {
        if (t->total[c] < threshold) {
            uint64_t rest = 0;
            size_t n = js_calltree_walk_skip_siblings(&w, &rest);
            put_prefix(&lf, rest, rest, lv);
            fprintf(f, "... (%zu more)\n", n);
            continue;
        }
        put_prefix(&lf, t->total[c], t->self[c], lv);
        put_text(f, nm->name[t->nid[c]]);
        putc('\n', f);
    }
    js_calltree_walk_free(&w);
    return 0;
}

/* Writes the title and total lines, then the tree; 0 or -1 without memory. */
static int write_all(FILE *f, const js_profile *p, const js_calltree *t, const js_calltree_names *nm)
{
    if (p->title[0]) {
        fputs("# ", f);
        put_text(f, p->title);
        putc('\n', f);
    }
    fprintf(f, "Total: %llu %s in %zu stacks\n\n", (unsigned long long)t->total[0], p->unit[0] ? p->unit : "samples",
            p->nstacks);
    return write_nodes(f, t, nm);
}

/* Call tree of p to f (see the top of this file); 0, or -1 with one line in err. */
int js_write_tree(FILE *f, const js_profile *p, char *err, size_t errlen)
{
    if (!f || !p) {
        errno = EINVAL;
        return fail(err, errlen, "no output file or profile", 0);
    }
    js_calltree_names nm;
    js_calltree t;
    int rc = js_calltree_names_build(&nm, p);
    if (rc == 0) {
        rc = js_calltree_build(&t, p, &nm, NULL, NULL);
        errno = 0;
        if (rc == 0) rc = write_all(f, p, &t, &nm);
        js_calltree_free(&t);
    }
    js_calltree_names_free(&nm);
    if (rc != 0) return fail(err, errlen, "out of memory", 0);
    if (fflush(f) != 0 || ferror(f)) return fail(err, errlen, "write error", 1);
    return 0;
}

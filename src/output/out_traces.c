/* out_traces.c - the heaviest stacks, one block each, leaf first (async-profiler's "traces" output).
 *
 *   # <title>                                   (only when the profile has a title)
 *   Total: 1006 samples in 5 stacks
 *
 *   --- 600 samples (59.64%), 600 samples
 *     [ 0] app.A.leaf
 *     [ 1] app.Main.main
 *
 * The first number is the stack's weight in the profile's unit, the last the events behind it (samples,
 * allocations, contentions; the weight again where the count is not known). Stacks are ordered by weight
 * (heaviest first; ties by their order in the profile), top_n of them (0 = 100). Thread roots are frames like any
 * other. Newlines in names are written as '_'.
 */
#include "output/output.h"
#include "out_int.h"

#include <errno.h>
#include <stdlib.h>

#define DEFAULT_TOP 100

/* qsort_r order of stack indexes: weight descending, then index. */
static int by_weight(const void *a, const void *b, void *ctx)
{
    const js_pstack *s = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (s[x].weight != s[y].weight) return s[x].weight > s[y].weight ? -1 : 1;
    return (x > y) - (x < y);
}

int js_write_traces(FILE *f, const js_profile *p, int top_n, char *err, size_t errlen)
{
    if (!f || !p) {
        errno = EINVAL;
        return js_out_fail("traces output", err, errlen, "no output file or profile", 0);
    }
    uint32_t *ids = malloc((p->nstacks ? p->nstacks : 1) * sizeof *ids);
    if (!ids) return js_out_fail("traces output", err, errlen, "out of memory", 0);
    uint64_t total = 0;
    for (size_t i = 0; i < p->nstacks; i++) ids[i] = (uint32_t)i, total += p->stacks[i].weight;
    qsort_r(ids, p->nstacks, sizeof *ids, by_weight, p->stacks);
    const char *unit = p->unit[0] ? p->unit : "samples";
    errno = 0;
    if (p->title[0]) {
        fputs("# ", f);
        js_out_put_replacing(f, p->title, "\n\r");
        putc('\n', f);
    }
    fprintf(f, "Total: %llu %s in %zu stacks\n", (unsigned long long)total, unit, p->nstacks);
    size_t rows = top_n > 0 ? (size_t)top_n : DEFAULT_TOP;
    for (size_t r = 0; r < p->nstacks && r < rows && !ferror(f); r++) {
        const js_pstack *s = &p->stacks[ids[r]];
        uint64_t n = s->count ? s->count : s->weight;
        fprintf(f, "\n--- %llu %s (%.2f%%), %llu sample%s\n", (unsigned long long)s->weight, unit,
                total ? 100.0 * (double)s->weight / (double)total : 0.0, (unsigned long long)n, n == 1 ? "" : "s");
        for (uint32_t d = 0; d < s->depth; d++) {
            fprintf(f, "  [%2u] ", d);
            js_out_put_replacing(f, p->frames[s->frames[s->depth - 1 - d]].name, "\n\r");
            putc('\n', f);
        }
    }
    free(ids);
    if (fflush(f) != 0 || ferror(f)) return js_out_fail("traces output", err, errlen, "write error", 1);
    return 0;
}

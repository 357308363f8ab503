/* fuzz_collapsed.c - libFuzzer target for the collapsed-stacks reader (src/output/collapsed_read.c; `jsampler
 * convert` on another profiler's output; docs/FUZZING.md), and the writers that follow it.
 *
 * Each input is a collapsed file, read from memory; a profile read is written in every text format (collapsed,
 * flat, tree, JSON; HTML for one input in eight: a page is 100 KB) to /dev/null, and as collapsed text read again.
 * Invariants beyond the sanitizers: a refused file names its line in one line ("fuzz:LINE: why"); a read
 * profile's total is the sum of its stacks; what the collapsed writer writes is always read back (it escapes
 * what would break a line) and keeps every weight that sits on a frame.
 */
#include "fuzz_util.h"

#include "output/collapsed_read.h"
#include "output/output.h"
#include "output/profile.h"

static FILE *sink;

/* Opens the output sink. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    sink = fopen("/dev/null", "w");
    return 0;
}

/* Reads len bytes of text into p; the reader's code, err filled. */
static int read_text(const char *text, size_t len, js_profile *p, char *err, size_t errlen)
{
    FILE *f = len ? fmemopen((void *)text, len, "r") : fopen("/dev/null", "r");
    FZ_CHECK(f != NULL, "fmemopen");
    int rc = js_collapsed_read(f, "fuzz", p, err, errlen);
    fclose(f);
    return rc;
}

/* libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    js_profile p;
    js_profile_init(&p);
    char err[512] = "";
    int rc = read_text((const char *)data, size, &p, err, sizeof err);
    FZ_CHECK(rc == 0 || (rc == -1 && strncmp(err, "fuzz:", 5) == 0 && !strchr(err, '\n')), "rc %d, '%s'", rc, err);
    if (rc == 0) {
        uint64_t sum = 0, framed = 0;
        for (size_t i = 0; i < p.nstacks; i++) {
            sum = js_weight_add(sum, p.stacks[i].weight);
            if (p.stacks[i].depth) framed = js_weight_add(framed, p.stacks[i].weight);
        }
        FZ_CHECK(sum == p.total, "total %llu, stacks sum to %llu", (unsigned long long)p.total,
                 (unsigned long long)sum);
        js_write_flat(sink, &p, 10, err, sizeof err);
        js_write_tree(sink, &p, err, sizeof err);
        if (size % 8 == 0) js_write_html(sink, &p, (int)(size & 8), err, sizeof err); /* 100 KB a page: 1 in 8 */
        js_write_json_tree(sink, &p, NULL, err, sizeof err);
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        FZ_CHECK(m && js_write_collapsed(m, &p, err, sizeof err) == 0, "collapsed: %s", err);
        fclose(m);
        js_profile q;
        js_profile_init(&q);
        rc = read_text(text, len, &q, err, sizeof err);
        FZ_CHECK(rc == 0, "the collapsed writer's output is refused: %s", err);
        FZ_CHECK(q.total == framed, "written and read back: total %llu, %llu on frames before",
                 (unsigned long long)q.total, (unsigned long long)framed);
        free(text);
        js_profile_free(&q);
    }
    js_profile_free(&p);
    return 0;
}

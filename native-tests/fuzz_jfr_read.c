/* fuzz_jfr_read.c - libFuzzer target for the JFR reader (build and run: make fuzz-jfr).
 *
 * Each input is a whole file, read from memory four times, once per event kind, with the option sets
 * test_jfr_read.c's corpus replay uses (threads roots, lines, a thread glob, a time range), then written as
 * JSON and collapsed output to /dev/null. Invariants checked beyond the sanitizers: a failed read names a
 * byte offset in its one-line message; a successful read's profile total equals the sum of its stacks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfr/jfr_read.h"
#include "output/output.h"
#include "output/profile.h"

/* Reads data once with options o and checks the invariants; aborts on a violation. */
static void one_pass(const uint8_t *data, size_t size, const js_jfr_read_opts *o, FILE *sink)
{
    js_profile p;
    js_profile_init(&p);
    char err[512] = "";
    int rc = js_jfr_read_mem(data, size, "fuzz", o, &p, NULL, err, sizeof err);
    if (rc != 0 && (!strstr(err, "fuzz: offset ") || strchr(err, '\n'))) {
        fprintf(stderr, "bad error message: '%s'\n", err);
        abort();
    }
    if (rc == 0) {
        uint64_t sum = 0;
        for (size_t i = 0; i < p.nstacks; i++) sum += p.stacks[i].weight;
        if (sum != p.total || js_profile_normalize(&p) != 0) abort();
        if (sink) {
            js_write_json_tree(sink, &p, o->kind == JS_JFR_READ_ALLOC ? "OBJECT_ALLOCATION" : NULL, err, sizeof err);
            js_write_collapsed(sink, &p, err, sizeof err);
        }
    }
    js_profile_free(&p);
}

/* libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink) sink = fopen("/dev/null", "w");
    for (int kind = 0; kind <= JS_JFR_READ_LOCK; kind++) {
        js_jfr_read_opts o = {.kind = (js_jfr_read_kind)kind, .threads = 1, .lines = kind & 1,
                              .thread = kind == JS_JFR_READ_ALLOC ? "m*" : NULL};
        if (kind == JS_JFR_READ_LOCK) o.has_from = o.has_to = 1, o.from_ns = 1000, o.to_ns = 4000000000;
        one_pass(data, size, &o, sink);
    }
    return 0;
}

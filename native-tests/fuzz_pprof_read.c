/* fuzz_pprof_read.c - libFuzzer target for the pprof reader (make fuzz-pprof; replayed as a native test).
 *
 * Each input is a whole file (gzip-compressed or a bare Profile message), read from memory three times: with the
 * default sample type, with thread roots and lines, and with --sample-type samples; at most 64 MiB inflated, so a
 * bomb ends quickly. Invariants checked beyond the sanitizers: a failed read names a byte offset in its one-line
 * message; a successful read's total equals the sum of its stacks, and written back as pprof (one Sample per stack)
 * and read again it keeps that total.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/pprof.h"
#include "output/profile.h"

/* Reads data with o and checks the invariants; aborts on a violation. */
static void one_pass(const uint8_t *data, size_t size, const js_pprof_read_opts *o)
{
    js_profile p;
    js_profile_init(&p);
    char err[512] = "";
    js_pprof_read_info info;
    int rc = js_pprof_read_mem(data, size, "fuzz", o, &p, &info, err, sizeof err);
    if (rc != 0 && (strncmp(err, "fuzz: offset ", 13) != 0 || strchr(err, '\n'))) {
        fprintf(stderr, "bad error message: '%s'\n", err);
        abort();
    }
    if (rc == 0) {
        uint64_t sum = 0;
        for (size_t i = 0; i < p.nstacks; i++) sum += p.stacks[i].weight;
        if (sum != p.total || js_profile_normalize(&p) != 0) abort();
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        js_pprof_opts wo = {.kind = JS_PPROF_VALUE, .event = info.type, .unit = info.unit, .aggregate = 1, .level = 1};
        if (!f || js_write_pprof(f, &p, &wo, NULL, err, sizeof err) != 0 || fclose(f) != 0) abort();
        js_profile q;
        js_profile_init(&q);
        js_pprof_read_opts ro = {.max_bytes = 64u << 20};
        if (js_pprof_read_mem(buf, len, "again", &ro, &q, NULL, err, sizeof err) != 0) {
            fprintf(stderr, "our own pprof not read back: '%s'\n", err);
            abort();
        }
        if (p.total < (1ull << 62) && q.total != p.total) {
            fprintf(stderr, "total %llu read back as %llu\n", (unsigned long long)p.total, (unsigned long long)q.total);
            abort();
        }
        js_profile_free(&q);
        free(buf);
    }
    js_profile_free(&p);
}

/* libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    js_pprof_read_opts o[] = {
        {.max_bytes = 64u << 20},
        {.threads = 1, .lines = 1, .max_bytes = 64u << 20},
        {.sample_type = "samples", .max_bytes = 64u << 20},
    };
    for (size_t i = 0; i < sizeof o / sizeof o[0]; i++) one_pass(data, size, &o[i]);
    return 0;
}

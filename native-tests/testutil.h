/* testutil.h - small helpers shared by the cmocka tests: capture a writer's output as text, and build a
 * profile from a literal collapsed string (an independent, minimal parser, so the reader under test is not
 * used to build its own expectations). Include after <cmocka.h>. */
#ifndef JS_TESTUTIL_H
#define JS_TESTUTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* open_memstream, fmemopen */
#endif
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/profile.h"

#define TU_UNUSED __attribute__((unused))
#define TU_MAX_DEPTH 4096

/* Install fn for signo (SA_SIGINFO, restarting, nothing blocked), the handler before in *old if old (asserts). */
TU_UNUSED static void tu_install(int signo, void (*fn)(int, siginfo_t *, void *), struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(signo, &sa, old), 0);
}

/* An in-memory output stream: open with tu_open, read the text with tu_text. */
typedef struct {
    FILE *f;
    char *buf;
    size_t len;
} tu_out;

/* Opens an in-memory stream (asserts). */
TU_UNUSED static void tu_open(tu_out *o)
{
    o->buf = NULL;
    o->len = 0;
    o->f = open_memstream(&o->buf, &o->len);
    assert_non_null(o->f);
}

/* Closes the stream and returns its text (heap, NUL-terminated, caller frees). */
TU_UNUSED static char *tu_text(tu_out *o)
{
    assert_int_equal(fclose(o->f), 0);
    o->f = NULL;
    assert_int_equal(strlen(o->buf), o->len); /* no NUL inside */
    return o->buf;
}

/* A read-only stream over text (which must outlive it), for readers; caller fcloses. */
TU_UNUSED static FILE *tu_input(const char *text)
{
    size_t n = strlen(text);
    FILE *f = n ? fmemopen((void *)text, n, "r") : fopen("/dev/null", "r");
    assert_non_null(f);
    return f;
}

/* Adds the stacks of a literal collapsed text ("a;b;c 3\n...", no blank lines, no suffixes) to p: a first frame
 * in brackets ("[main tid=1]") is a thread frame, every other frame has type t. Asserts on malformed text:
 * this is for writing expectations, not for testing the reader. */
TU_UNUSED static void tu_add_collapsed(js_profile *p, const char *text, js_frame_type t)
{
    uint32_t ids[TU_MAX_DEPTH];
    char name[1024];
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        const char *end = nl ? nl : line + strlen(line);
        const char *sp = end;
        while (sp > line && sp[-1] != ' ') sp--;
        assert_true(sp > line + 1); /* "frames weight" */
        uint64_t w = strtoull(sp, NULL, 10);
        uint32_t depth = 0;
        for (const char *fr = line; fr < sp;) {
            const char *semi = fr;
            while (semi < sp - 1 && *semi != ';') semi++;
            size_t n = (size_t)(semi - fr);
            assert_true(n < sizeof name && depth < TU_MAX_DEPTH);
            memcpy(name, fr, n);
            name[n] = 0;
            int thread = depth == 0 && n >= 2 && name[0] == '[' && name[n - 1] == ']';
            ids[depth] = js_profile_frame(p, name, thread ? JS_FT_THREAD : t);
            assert_int_not_equal(ids[depth], UINT32_MAX);
            depth++;
            fr = semi + 1;
        }
        assert_int_equal(js_profile_add(p, ids, depth, w), 0);
        line = nl ? nl + 1 : end;
    }
}

/* Initialises p and fills it from a literal collapsed text (JIT frames, bracketed roots are threads). */
TU_UNUSED static void tu_profile(js_profile *p, const char *text)
{
    js_profile_init(p);
    tu_add_collapsed(p, text, JS_FT_JIT);
}

/* The profile's stacks as collapsed text in stored order (names joined by ';'; heap, caller frees). */
TU_UNUSED static char *tu_stacks(const js_profile *p)
{
    tu_out o;
    tu_open(&o);
    for (size_t s = 0; s < p->nstacks; s++) {
        for (uint32_t d = 0; d < p->stacks[s].depth; d++)
            fprintf(o.f, "%s%s", d ? ";" : "", p->frames[p->stacks[s].frames[d]].name);
        fprintf(o.f, " %llu\n", (unsigned long long)p->stacks[s].weight);
    }
    return tu_text(&o);
}

/* Asserts two strings are equal, printing both on mismatch (cmocka's own message truncates). */
#define tu_assert_text(got, want)                                                                   \
    do {                                                                                            \
        const char *g_ = (got), *w_ = (want);                                                       \
        if (strcmp(g_, w_) != 0) print_error("--- got:\n%s\n--- want:\n%s\n---\n", g_, w_);         \
        assert_string_equal(g_, w_);                                                                \
    } while (0)

#endif

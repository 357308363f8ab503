/* test_profile.c - the resolved profile (profile.c): interning, growth to 100k frames, adding stacks,
 * normalize (merging, deterministic sort), include/exclude filters and the glob matcher. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output/profile.h"
#include "testutil.h"

#define UNUSED __attribute__((unused))

/* A fresh profile is empty, counts samples and has no title. */
static void test_init_and_free(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    assert_int_equal(p.nframes, 0);
    assert_int_equal(p.nstacks, 0);
    assert_int_equal(p.total, 0);
    assert_string_equal(p.unit, "samples");
    assert_string_equal(p.title, "");
    js_profile_free(&p);
    js_profile_free(&p); /* free leaves an empty profile: freeing again is harmless */
    assert_int_equal(js_profile_frame(&p, "again", JS_FT_JIT), 0); /* and it is usable */
    js_profile_free(&p);
}

/* Same (name, type) gives the same index; another type or name a new one; names are copies. */
static void test_interning(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    char buf[32] = "java.lang.Thread.run";
    uint32_t a = js_profile_frame(&p, buf, JS_FT_JIT);
    uint32_t b = js_profile_frame(&p, "java.lang.Thread.run", JS_FT_JIT);
    uint32_t c = js_profile_frame(&p, "java.lang.Thread.run", JS_FT_INLINED);
    uint32_t d = js_profile_frame(&p, "java.lang.Thread.ru", JS_FT_JIT);
    uint32_t e = js_profile_frame(&p, NULL, JS_FT_NATIVE);
    uint32_t f = js_profile_frame(&p, "", JS_FT_NATIVE);
    assert_int_equal(a, 0);
    assert_int_equal(b, a);
    assert_int_equal(c, 1);
    assert_int_equal(d, 2);
    assert_int_equal(e, 3);
    assert_int_equal(f, e); /* NULL is the empty name */
    assert_int_equal(p.nframes, 4);
    buf[0] = 'X';
    assert_string_equal(p.frames[a].name, "java.lang.Thread.run");
    assert_int_equal(p.frames[c].type, JS_FT_INLINED);
    assert_int_equal(js_profile_frame(&p, "java.lang.Thread.run", JS_FT_INLINED), c);
    js_profile_free(&p);
}

/* 100k distinct frames: dense indexes in insertion order, every one found again, the table stays sparse. */
static void test_growth_100k(void **state UNUSED)
{
    enum { N = 100000 };
    js_profile p;
    js_profile_init(&p);
    char name[64];
    for (uint32_t i = 0; i < N; i++) {
        snprintf(name, sizeof name, "pkg.Class%u.method", i);
        assert_int_equal(js_profile_frame(&p, name, (js_frame_type)(i % JS_FT_COUNT)), i);
    }
    assert_int_equal(p.nframes, N);
    assert_true(p.cap_frames >= N);
    assert_true(p.index_cap >= 2 * (size_t)N);
    assert_int_equal(p.index_cap & (p.index_cap - 1), 0); /* a power of two */
    for (uint32_t i = 0; i < N; i++) {
        snprintf(name, sizeof name, "pkg.Class%u.method", i);
        assert_int_equal(js_profile_frame(&p, name, (js_frame_type)(i % JS_FT_COUNT)), i);
        assert_string_equal(p.frames[i].name, name);
        assert_int_equal(p.frames[i].type, i % JS_FT_COUNT);
    }
    /* the same names with another type are new frames */
    snprintf(name, sizeof name, "pkg.Class%u.method", 7u);
    assert_int_equal(js_profile_frame(&p, name, JS_FT_JIT), N); /* index 7 was a thread frame */
    assert_int_equal(p.nframes, N + 1);
    js_profile_free(&p);
}

/* Stacks are copied; the total sums weights; an empty stack counts in the total; bad indexes are refused. */
static void test_add(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    uint32_t fr[3] = {js_profile_frame(&p, "a", JS_FT_JIT), js_profile_frame(&p, "b", JS_FT_JIT), 0};
    fr[2] = fr[0];
    assert_int_equal(js_profile_add(&p, fr, 3, 5), 0);
    fr[1] = fr[0];
    assert_int_equal(p.stacks[0].frames[1], 1); /* a copy, not the caller's array */
    assert_int_equal(js_profile_add(&p, NULL, 0, 7), 0);
    assert_int_equal(p.total, 12);
    uint32_t bad[2] = {0, 2};
    assert_int_equal(js_profile_add(&p, bad, 2, 1), -1);
    assert_int_equal(js_profile_add(&p, NULL, 2, 1), -1);
    assert_int_equal(p.nstacks, 2);
    assert_int_equal(p.total, 12);
    js_profile_free(&p);
}

/* Weights saturate: a total or a merged stack never wraps round to a small number. */
static void test_weights_saturate(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    uint32_t a = js_profile_frame(&p, "a", JS_FT_JIT);
    assert_int_equal(js_profile_add(&p, &a, 1, UINT64_MAX - 1), 0);
    assert_int_equal(js_profile_add(&p, &a, 1, 5), 0);
    assert_true(p.total == UINT64_MAX);
    assert_int_equal(js_profile_normalize(&p), 0);
    assert_int_equal(p.nstacks, 1);
    assert_true(p.stacks[0].weight == UINT64_MAX);
    assert_true(p.total == UINT64_MAX);
    js_profile_filter(&p, "a", NULL);
    assert_true(p.total == UINT64_MAX);
    js_profile_free(&p);
}

/* Normalize merges equal stacks and sorts by names root first, a prefix before its extensions. */
static void test_normalize_merge_sort(void **state UNUSED)
{
    js_profile p;
    tu_profile(&p, "main;b;c 1\n"
                   "main;a 2\n"
                   "main;b 3\n"
                   "main;b;c 4\n"
                   "main 5\n"
                   "main;a 6\n"
                   "aux;z 7\n");
    assert_int_equal(p.total, 28);
    assert_int_equal(js_profile_normalize(&p), 0);
    char *s = tu_stacks(&p);
    tu_assert_text(s, "aux;z 7\n"
                      "main 5\n"
                      "main;a 8\n"
                      "main;b 3\n"
                      "main;b;c 5\n");
    free(s);
    assert_int_equal(p.nstacks, 5);
    assert_int_equal(p.total, 28);
    assert_int_equal(js_profile_normalize(&p), 0); /* idempotent */
    assert_int_equal(p.nstacks, 5);
    js_profile_free(&p);

    js_profile_init(&p);
    assert_int_equal(js_profile_normalize(&p), 0); /* empty */
    js_profile_free(&p);
}

/* Sorting is by name, not by frame index, and a name with two types gives two stacks ordered by type. */
static void test_normalize_by_name_and_type(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    uint32_t z = js_profile_frame(&p, "z", JS_FT_JIT), a = js_profile_frame(&p, "a", JS_FT_JIT);
    uint32_t mi = js_profile_frame(&p, "m", JS_FT_INLINED), mj = js_profile_frame(&p, "m", JS_FT_JIT);
    uint32_t s1[2] = {a, mi}, s2[2] = {a, mj}, s3[1] = {z}, s4[2] = {a, mi};
    assert_int_equal(js_profile_add(&p, s1, 2, 1), 0);
    assert_int_equal(js_profile_add(&p, s3, 1, 2), 0);
    assert_int_equal(js_profile_add(&p, s2, 2, 3), 0);
    assert_int_equal(js_profile_add(&p, s4, 2, 4), 0);
    assert_int_equal(js_profile_add(&p, NULL, 0, 9), 0);
    assert_int_equal(js_profile_normalize(&p), 0);
    assert_int_equal(p.nstacks, 4);
    assert_int_equal(p.stacks[0].depth, 0); /* the empty stack sorts first, kept for the total */
    assert_int_equal(p.stacks[0].weight, 9);
    assert_int_equal(p.stacks[1].frames[1], mj); /* JIT (1) before inlined (2) */
    assert_int_equal(p.stacks[1].weight, 3);
    assert_int_equal(p.stacks[2].frames[1], mi);
    assert_int_equal(p.stacks[2].weight, 5);
    assert_int_equal(p.stacks[3].frames[0], z);
    assert_int_equal(p.total, 19);
    js_profile_free(&p);
}

/* Two profiles holding the same stacks added in different orders normalize to the same list. */
static void test_normalize_deterministic(void **state UNUSED)
{
    enum { N = 2000 };
    js_profile x, y;
    js_profile_init(&x);
    js_profile_init(&y);
    char n1[32], n2[32];
    for (int k = 0; k < 2; k++) {
        js_profile *p = k ? &y : &x;
        for (int j = 0; j < N; j++) {
            int i = k ? N - 1 - j : (j * 7919) % N;
            snprintf(n1, sizeof n1, "C%d.m", i % 37);
            snprintf(n2, sizeof n2, "D%d.m", i % 101);
            uint32_t fr[3] = {js_profile_frame(p, "root", JS_FT_JIT), js_profile_frame(p, n1, JS_FT_JIT),
                              js_profile_frame(p, n2, JS_FT_JIT)};
            assert_int_equal(js_profile_add(p, fr, 1 + (uint32_t)(i % 3), (uint64_t)i), 0);
        }
        assert_int_equal(js_profile_normalize(p), 0);
    }
    char *a = tu_stacks(&x), *b = tu_stacks(&y);
    assert_string_equal(a, b);
    assert_int_equal(x.total, y.total);
    assert_int_equal(x.total, (uint64_t)N * (N - 1) / 2);
    free(a);
    free(b);
    js_profile_free(&x);
    js_profile_free(&y);
}

/* Glob corner cases: empty strings, stars, '?', literal bytes, UTF-8, backtracking, NULL. */
static void test_glob(void **state UNUSED)
{
    static const struct {
        const char *pat, *s;
        int want;
    } t[] = {
        {"", "", 1},
        {"", "a", 0},
        {"*", "", 1},
        {"*", "anything.at.all", 1},
        {"**", "x", 1},
        {"?", "", 0},
        {"?", "a", 1},
        {"?", "ab", 0},
        {"a?c", "abc", 1},
        {"a?c", "ac", 0},
        {"abc", "abc", 1},
        {"abc", "abcd", 0},
        {"abc", "ab", 0},
        {"ABC", "abc", 0}, /* case-sensitive */
        {"java.*", "java.lang.Thread.run", 1},
        {"java.*", "javax.swing.X", 0},
        {"*.run", "java.lang.Thread.run", 1},
        {"*.run", "java.lang.Thread.runner", 0},
        {"*Thread*", "java.lang.Thread.run", 1},
        {"*ab*ab", "xxabyyab", 1},
        {"*ab*ab", "xxabyyaba", 0},
        {"a*b*c", "abbbc", 1},
        {"a*b*c", "abcbx", 0},
        {"a*", "a", 1},
        {"*a", "a", 1},
        {"*a", "ba", 1},
        {"*a", "ab", 0},
        {"?x", "\xc3\xa9x", 1}, /* '?' is one UTF-8 character ("é") */
        {"x?", "x\xe2\x82\xac", 1}, /* a 3-byte one ("€") */
        {"??", "\xc3\xa9", 0},
        {"[unknown*]", "[unknown_Java]", 1}, /* brackets are literal */
        {"a|b", "a|b", 1}, /* '|' is literal here; the filter splits on it */
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        int got = js_glob_match(t[i].pat, t[i].s);
        if (got != t[i].want) print_error("glob '%s' vs '%s': got %d\n", t[i].pat, t[i].s, got);
        assert_int_equal(got, t[i].want);
    }
    assert_int_equal(js_glob_match(NULL, "a"), 0);
    assert_int_equal(js_glob_match("a", NULL), 0);

    /* A pathological pattern against a long string finishes quickly (no exponential backtracking). */
    char *s = malloc(20001);
    memset(s, 'a', 20000);
    s[20000] = 0;
    clock_t t0 = clock();
    assert_int_equal(js_glob_match("*a*a*a*a*a*a*a*a*b", s), 0);
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
    free(s);
}

static const char *const FILTER_INPUT = "main;app.A;util.X 1\n"
                                        "main;app.B;util.Y 2\n"
                                        "main;lib.C 4\n"
                                        "gc;[GC_active] 8\n"
                                        "main;app.A;lib.C 16\n";

/* Runs the filter on a fresh copy of FILTER_INPUT; returns the remaining stacks as text. */
static char *filtered(const char *inc, const char *exc, uint64_t *total)
{
    js_profile p;
    tu_profile(&p, FILTER_INPUT);
    js_profile_filter(&p, inc, exc);
    char *s = tu_stacks(&p);
    *total = p.total;
    js_profile_free(&p);
    return s;
}

/* With lines and sig the names carry ":LINE" and "(signature)": a pattern for the bare name still matches,
 * and so does one written for the decorated name. */
static void test_filter_decorated_names(void **state UNUSED)
{
    js_profile p;
    tu_profile(&p, "main;app.A.run:12;app.A.burn:40 5\nmain;app.B.run(I)V;app.B.idle(J)J:7 3\nmain:3;lib.C 2\n");
    js_profile_filter(&p, "app.A.burn", NULL);
    assert_int_equal(p.total, 5);
    js_profile_free(&p);
    tu_profile(&p, "main;app.A.run:12;app.A.burn:40 5\nmain;app.B.run(I)V;app.B.idle(J)J:7 3\nmain:3;lib.C 2\n");
    js_profile_filter(&p, "app.B.idle", "app.A.*");
    assert_int_equal(p.total, 3);
    js_profile_free(&p);
    tu_profile(&p, "main;app.A.run:12;app.A.burn:40 5\nmain;app.B.run(I)V;app.B.idle(J)J:7 3\nmain:3;lib.C 2\n");
    js_profile_filter(&p, "app.A.burn:40|*(I)V", NULL);
    assert_int_equal(p.total, 8);
    js_profile_free(&p);
    tu_profile(&p, "main;app.A.run:12;app.A.burn:40 5\nmain;app.B.run(I)V;app.B.idle(J)J:7 3\nmain:3;lib.C 2\n");
    js_profile_filter(&p, NULL, "main"); /* "main:3" is main with a line */
    assert_int_equal(p.total, 0);
    js_profile_free(&p);
}

/* include keeps stacks with any matching frame, exclude drops them; '|' separates; total recomputed. */
static void test_filter(void **state UNUSED)
{
    uint64_t total;
    char *s = filtered(NULL, NULL, &total);
    assert_int_equal(total, 31);
    free(s);
    s = filtered("", "", &total); /* empty = no filter */
    assert_int_equal(total, 31);
    free(s);
    s = filtered("||", "|", &total); /* only separators: no filter either */
    assert_int_equal(total, 31);
    free(s);

    s = filtered("app.*", NULL, &total);
    tu_assert_text(s, "main;app.A;util.X 1\nmain;app.B;util.Y 2\nmain;app.A;lib.C 16\n");
    assert_int_equal(total, 19);
    free(s);

    s = filtered("app.A|lib.?", "", &total);
    tu_assert_text(s, "main;app.A;util.X 1\nmain;lib.C 4\nmain;app.A;lib.C 16\n");
    assert_int_equal(total, 21);
    free(s);

    s = filtered(NULL, "lib.*", &total);
    tu_assert_text(s, "main;app.A;util.X 1\nmain;app.B;util.Y 2\ngc;[GC_active] 8\n");
    assert_int_equal(total, 11);
    free(s);

    s = filtered("app.*", "*.C|util.Y", &total);
    tu_assert_text(s, "main;app.A;util.X 1\n");
    assert_int_equal(total, 1);
    free(s);

    s = filtered("[GC*", NULL, &total); /* brackets are plain characters */
    tu_assert_text(s, "gc;[GC_active] 8\n");
    free(s);

    s = filtered("app", NULL, &total); /* whole-name match: "app" matches no frame */
    tu_assert_text(s, "");
    assert_int_equal(total, 0);
    free(s);

    s = filtered(NULL, "*", &total); /* everything excluded */
    tu_assert_text(s, "");
    assert_int_equal(total, 0);
    free(s);
}

/* Empty stacks have no frame to match: kept without include, dropped with one. */
static void test_filter_empty_stack(void **state UNUSED)
{
    js_profile p;
    tu_profile(&p, "a;b 1\n");
    assert_int_equal(js_profile_add(&p, NULL, 0, 5), 0);
    js_profile_filter(&p, NULL, "zzz");
    assert_int_equal(p.nstacks, 2);
    assert_int_equal(p.total, 6);
    js_profile_filter(&p, "a", NULL);
    assert_int_equal(p.nstacks, 1);
    assert_int_equal(p.total, 1);
    js_profile_free(&p);
}

/* Short type names, and a safe answer out of range. */
static void test_type_names(void **state UNUSED)
{
    static const char *const want[JS_FT_COUNT] = {"interpreted", "jit", "inlined", "native", "cpp",
                                                  "kernel",      "c1",  "thread",  "error"};
    for (int t = 0; t < JS_FT_COUNT; t++) assert_string_equal(js_frame_type_name((js_frame_type)t), want[t]);
    assert_string_equal(js_frame_type_name(JS_FT_COUNT), "unknown");
    assert_string_equal(js_frame_type_name((js_frame_type)-1), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_and_free),
        cmocka_unit_test(test_interning),
        cmocka_unit_test(test_growth_100k),
        cmocka_unit_test(test_add),
        cmocka_unit_test(test_weights_saturate),
        cmocka_unit_test(test_normalize_merge_sort),
        cmocka_unit_test(test_normalize_by_name_and_type),
        cmocka_unit_test(test_normalize_deterministic),
        cmocka_unit_test(test_glob),
        cmocka_unit_test(test_filter),
        cmocka_unit_test(test_filter_decorated_names),
        cmocka_unit_test(test_filter_empty_stack),
        cmocka_unit_test(test_type_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_calltree.c - the call tree shared by the tree writers: name ids, building (all stacks or a filtered part),
 * the preorder walk with its child order and sibling skipping, and trees large enough to rehash many times. */
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

#include "output/calltree.h"
#include "output/profile.h"
#include "testutil.h"

#define UNUSED __attribute__((unused))

/* Name ids and the tree of p's stacks that keep accepts (asserts). */
static void build(js_calltree_names *nm, js_calltree *t, const js_profile *p, js_calltree_keep keep, void *ctx)
{
    assert_int_equal(js_calltree_names_build(nm, p), 0);
    assert_int_equal(js_calltree_build(t, p, nm, keep, ctx), 0);
}

/* The walk of t as lines "<indent>name total self" (heap, caller frees). */
static char *walk_text(const js_calltree *t, const js_calltree_names *nm)
{
    js_calltree_walk w;
    tu_out o;
    uint32_t c, lv;
    assert_int_equal(js_calltree_walk_begin(&w, t), 0);
    tu_open(&o);
    while ((c = js_calltree_walk_next(&w, &lv)) != JS_CALLTREE_NONE)
        fprintf(o.f, "%*s%s %llu %llu\n", (int)(2 * lv), "", nm->name[t->nid[c]], (unsigned long long)t->total[c],
                (unsigned long long)t->self[c]);
    assert_int_equal(js_calltree_walk_next(&w, &lv), JS_CALLTREE_NONE); /* stays at the end */
    js_calltree_walk_free(&w);
    return tu_text(&o);
}

/* Equal names of different types share an id; ids follow strcmp order; an empty profile has no names. */
static void test_names(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    uint32_t b = js_profile_frame(&p, "b", JS_FT_JIT), a = js_profile_frame(&p, "a", JS_FT_JIT);
    uint32_t b2 = js_profile_frame(&p, "b", JS_FT_INLINED), up = js_profile_frame(&p, "B", JS_FT_JIT);
    js_calltree_names nm;
    assert_int_equal(js_calltree_names_build(&nm, &p), 0);
    assert_int_equal(nm.n, 3);
    assert_int_equal(nm.id[up], 0);
    assert_int_equal(nm.id[a], 1);
    assert_int_equal(nm.id[b], 2);
    assert_int_equal(nm.id[b2], 2);
    assert_string_equal(nm.name[0], "B");
    assert_string_equal(nm.name[2], "b");
    js_calltree_names_free(&nm);
    js_calltree_names_free(&nm); /* zeroed: a second free is harmless */
    js_profile_free(&p);
    js_profile_init(&p);
    assert_int_equal(js_calltree_names_build(&nm, &p), 0);
    assert_int_equal(nm.n, 0);
    js_calltree_names_free(&nm);
    js_profile_free(&p);
}

/* Root totals, self of stacks without frames in the root, paths merged by name, maxdepth, child order. */
static void test_build_and_walk(void **state UNUSED)
{
    js_profile p;
    tu_profile(&p, "r;a;x 10\n"
                   "r;b 7\n"
                   "r;a 3\n"
                   "r;c 7\n"
                   "s 1\n");
    uint32_t fr[2] = {js_profile_frame(&p, "r", JS_FT_INTERPRETED), js_profile_frame(&p, "b", JS_FT_NATIVE)};
    assert_int_equal(js_profile_add(&p, fr, 2, 2), 0); /* same names, other types: the same node */
    assert_int_equal(js_profile_add(&p, NULL, 0, 5), 0);
    js_calltree_names nm;
    js_calltree t;
    build(&nm, &t, &p, NULL, NULL);
    assert_int_equal(t.n, 7); /* root, r, a, x, b, c, s */
    assert_int_equal(t.total[0], 35);
    assert_int_equal(t.self[0], 5);
    assert_int_equal(t.parent[0], JS_CALLTREE_NONE);
    assert_int_equal(t.maxdepth, 3);
    char *s = walk_text(&t, &nm);
    tu_assert_text(s, "r 29 0\n"
                      "  a 13 3\n"
                      "    x 10 10\n"
                      "  b 9 9\n"
                      "  c 7 7\n"
                      "s 1 1\n");
    free(s);
    js_calltree_free(&t);
    js_calltree_free(&t);
    js_calltree_names_free(&nm);
    js_profile_free(&p);
}

/* js_calltree_keep: stacks whose leaf name starts with the character *ctx. */
static int leaf_starts_with(const js_profile *p, const js_pstack *st, void *ctx)
{
    return st->depth && p->frames[st->frames[st->depth - 1]].name[0] == *(const char *)ctx;
}

/* A filter builds a part: totals and maxdepth count only the stacks it keeps; an empty part is a lone root. */
static void test_build_filtered(void **state UNUSED)
{
    js_profile p;
    tu_profile(&p, "m;k;x1 4\n"
                   "m;y 2\n"
                   "m;k;x2 1\n"
                   "n;x3 8\n");
    js_calltree_names nm;
    js_calltree t;
    char want = 'x';
    build(&nm, &t, &p, leaf_starts_with, &want);
    assert_int_equal(t.total[0], 13);
    assert_int_equal(t.maxdepth, 3);
    char *s = walk_text(&t, &nm);
    tu_assert_text(s, "n 8 0\n"
                      "  x3 8 8\n"
                      "m 5 0\n"
                      "  k 5 0\n"
                      "    x1 4 4\n"
                      "    x2 1 1\n");
    free(s);
    js_calltree_free(&t);
    want = 'q';
    assert_int_equal(js_calltree_build(&t, &p, &nm, leaf_starts_with, &want), 0);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.total[0], 0);
    s = walk_text(&t, &nm);
    tu_assert_text(s, "");
    free(s);
    js_calltree_free(&t);
    js_calltree_names_free(&nm);
    js_profile_free(&p);
}

/* Skipping drops the subtree of the node just returned and its later siblings, then the walk goes on above. */
static void test_walk_skip_siblings(void **state UNUSED)
{
    js_profile p;
    tu_profile(&p, "a;b;x 5\n"
                   "a;c;y 3\n"
                   "a;d 2\n"
                   "e 1\n");
    js_calltree_names nm;
    js_calltree t;
    build(&nm, &t, &p, NULL, NULL);
    js_calltree_walk w;
    assert_int_equal(js_calltree_walk_begin(&w, &t), 0);
    uint32_t lv = 99, c = js_calltree_walk_next(&w, &lv);
    assert_string_equal(nm.name[t.nid[c]], "a");
    assert_int_equal(lv, 0);
    uint64_t rest = 100;
    assert_int_equal(js_calltree_walk_skip_siblings(&w, &rest), 2); /* a and e, nothing below a */
    assert_int_equal(rest, 111);
    assert_int_equal(js_calltree_walk_next(&w, &lv), JS_CALLTREE_NONE);
    js_calltree_walk_free(&w);

    assert_int_equal(js_calltree_walk_begin(&w, &t), 0);
    c = js_calltree_walk_next(&w, &lv); /* a */
    c = js_calltree_walk_next(&w, &lv); /* b */
    assert_string_equal(nm.name[t.nid[c]], "b");
    assert_int_equal(lv, 1);
    rest = 0;
    assert_int_equal(js_calltree_walk_skip_siblings(&w, &rest), 3); /* b, c, d; x and y unseen */
    assert_int_equal(rest, 10);
    assert_int_equal(js_calltree_walk_skip_siblings(&w, &rest), 0); /* nothing pending */
    c = js_calltree_walk_next(&w, &lv);
    assert_string_equal(nm.name[t.nid[c]], "e");
    assert_int_equal(lv, 0);
    assert_int_equal(js_calltree_walk_next(&w, &lv), JS_CALLTREE_NONE);
    js_calltree_walk_free(&w);
    js_calltree_free(&t);
    js_calltree_names_free(&nm);
    js_profile_free(&p);
}

/* Many nodes (the slot table grows many times): every path found again, totals add up at every node. */
static void test_large_rehash(void **state UNUSED)
{
    enum { WIDE = 20000, DEEP = 3000 };
    js_profile p;
    js_profile_init(&p);
    uint32_t *fr = malloc(DEEP * sizeof *fr);
    char name[32];
    assert_non_null(fr);
    fr[0] = js_profile_frame(&p, "root", JS_FT_JIT);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < WIDE; i++) {
            snprintf(name, sizeof name, "w%05d", i);
            fr[1] = js_profile_frame(&p, name, JS_FT_JIT);
            assert_int_equal(js_profile_add(&p, fr, 2, (uint64_t)i + 1), 0);
        }
    for (int i = 0; i < DEEP; i++) fr[i] = js_profile_frame(&p, i % 3 ? "r1" : "r2", JS_FT_JIT);
    assert_int_equal(js_profile_add(&p, fr, DEEP, 7), 0);
    free(fr);
    js_calltree_names nm;
    js_calltree t;
    build(&nm, &t, &p, NULL, NULL);
    assert_int_equal(t.n, 1 + 1 + WIDE + DEEP);
    assert_int_equal(t.maxdepth, DEEP);
    assert_true(t.nslots >= 2 * t.n);
    uint64_t *below = calloc(t.n, sizeof *below);
    assert_non_null(below);
    for (size_t i = 1; i < t.n; i++) below[t.parent[i]] += t.total[i];
    for (size_t i = 0; i < t.n; i++) assert_int_equal(t.total[i], below[i] + t.self[i]);
    free(below);
    js_calltree_walk w;
    assert_int_equal(js_calltree_walk_begin(&w, &t), 0);
    uint32_t c, lv, prev = JS_CALLTREE_NONE;
    size_t seen = 0;
    while ((c = js_calltree_walk_next(&w, &lv)) != JS_CALLTREE_NONE) {
        if (prev != JS_CALLTREE_NONE && lv == 1 && t.parent[c] == t.parent[prev]) /* w19999 first */
            assert_true(t.total[prev] >= t.total[c]);
        prev = c;
        seen++;
    }
    assert_int_equal(seen, t.n - 1);
    js_calltree_walk_free(&w);
    js_calltree_free(&t);
    js_calltree_names_free(&nm);
    js_profile_free(&p);
}

/* A recursion (one name under each of its own nodes, 20,000 deep, added 3 times) is looked up with about one slot
 * per frame: the slot of (parent, name) depends on both (it once depended on the name alone for tables under 2^15
 * slots, and such a chain was one probe run: 367 million probes here). */
static void test_recursion_spread(void **state UNUSED)
{
    enum { DEPTH = 20000, TIMES = 3 };
    js_profile p;
    js_profile_init(&p);
    uint32_t *fr = malloc(DEPTH * sizeof *fr);
    assert_non_null(fr);
    for (int i = 0; i < DEPTH; i++) fr[i] = js_profile_frame(&p, "Deep.recurse", JS_FT_JIT);
    for (int k = 0; k < TIMES; k++) assert_int_equal(js_profile_add(&p, fr, DEPTH - (uint32_t)k, 1), 0);
    free(fr);
    js_calltree_names nm;
    js_calltree t;
    build(&nm, &t, &p, NULL, NULL);
    assert_int_equal(t.n, 1 + DEPTH);
    assert_int_equal(t.total[DEPTH - 1], 2); /* node i is i deep: the two deepest stacks pass DEPTH-1 */
    assert_int_equal(t.total[DEPTH], 1);
    printf("  %llu probes past the first slot in %d lookups\n", (unsigned long long)t.probes, DEPTH * TIMES);
    assert_true(t.probes < (uint64_t)DEPTH * TIMES);
    js_calltree_free(&t);
    js_calltree_names_free(&nm);
    js_profile_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_build_and_walk),
        cmocka_unit_test(test_build_filtered),
        cmocka_unit_test(test_walk_skip_siblings),
        cmocka_unit_test(test_large_rehash),
        cmocka_unit_test(test_recursion_spread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

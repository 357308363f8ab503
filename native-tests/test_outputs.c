/* test_outputs.c - the text writers (collapsed, flat, tree), format names and extensions, and the collapsed
 * reader: exact texts for known profiles, hostile names, recursion, folding, round trips, malformed input
 * naming its line, and write/read errors. */
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

#include "output/collapsed_read.h"
#include "output/output.h"
#include "output/profile.h"
#include "testutil.h"

#define UNUSED __attribute__((unused))

enum { W_COLLAPSED, W_FLAT, W_TREE, W_TRACES };

/* Runs one writer into f; its return code. */
static int run_writer(int which, FILE *f, const js_profile *p, int top, char *err, size_t errlen)
{
    switch (which) {
    case W_COLLAPSED: return js_write_collapsed(f, p, err, errlen);
    case W_FLAT: return js_write_flat(f, p, top, err, errlen);
    case W_TRACES: return js_write_traces(f, p, top, err, errlen);
    default: return js_write_tree(f, p, err, errlen);
    }
}

/* The writer's output for p as a heap string (caller frees); requires success. */
static char *output_of(int which, const js_profile *p, int top)
{
    tu_out o;
    char err[256] = "";
    tu_open(&o);
    int rc = run_writer(which, o.f, p, top, err, sizeof err);
    if (rc != 0) print_error("writer %d: %s\n", which, err);
    assert_int_equal(rc, 0);
    return tu_text(&o);
}

/* Reads text with the collapsed reader into p (initialised here); returns the reader's code, err filled. */
static int read_text(const char *text, size_t len, js_profile *p, char *err, size_t errlen)
{
    js_profile_init(p);
    FILE *f = len ? fmemopen((void *)text, len, "r") : tu_input(text);
    assert_non_null(f);
    err[0] = 0;
    int rc = js_collapsed_read(f, "in", p, err, errlen);
    fclose(f);
    return rc;
}

/* ---- collapsed writer ---------------------------------------------------------------------------- */

/* Sorted by names, duplicates merged, stacks without frames left out, independent of insertion order. */
static void test_collapsed_exact(void **state UNUSED)
{
    js_profile p;
    tu_profile(&p, "b;c 2\n"
                   "a;b 1\n"
                   "a 3\n"
                   "b;c 4\n"
                   "a;b;c;d 0\n");
    assert_int_equal(js_profile_add(&p, NULL, 0, 9), 0);
    char *s = output_of(W_COLLAPSED, &p, 0);
    tu_assert_text(s, "a 3\n"
                      "a;b 1\n"
                      "a;b;c;d 0\n"
                      "b;c 6\n");
    free(s);
    /* normalizing first changes nothing */
    assert_int_equal(js_profile_normalize(&p), 0);
    s = output_of(W_COLLAPSED, &p, 0);
    tu_assert_text(s, "a 3\na;b 1\na;b;c;d 0\nb;c 6\n");
    free(s);
    js_profile_free(&p);

    js_profile_init(&p); /* empty profile: empty output */
    s = output_of(W_COLLAPSED, &p, 0);
    tu_assert_text(s, "");
    free(s);
    js_profile_free(&p);
}

/* ';', '\n' and '\r' inside names become '_'; spaces and other bytes are kept. */
static void test_collapsed_hostile_names(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    uint32_t fr[3] = {js_profile_frame(&p, "[main tid=1]", JS_FT_THREAD),
                      js_profile_frame(&p, "x;y", JS_FT_JIT),
                      js_profile_frame(&p, "line\nbreak\r<\xc3\xa9>", JS_FT_NATIVE)};
    assert_int_equal(js_profile_add(&p, fr, 3, 12), 0);
    char *s = output_of(W_COLLAPSED, &p, 0);
    tu_assert_text(s, "[main tid=1];x_y;line_break_<\xc3\xa9> 12\n");
    free(s);
    js_profile_free(&p);
}

/* An empty name (the reader's frame of "_[k]") is written "_": a stack of it alone is still a line with a frame,
 * read back (found by fuzz_collapsed: the line " 5" was refused). */
static void test_collapsed_empty_name(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    uint32_t e = js_profile_frame(&p, "", JS_FT_KERNEL), a = js_profile_frame(&p, "a", JS_FT_JIT);
    assert_int_equal(js_profile_add(&p, &e, 1, 5), 0);
    uint32_t fr[3] = {a, e, a};
    assert_int_equal(js_profile_add(&p, fr, 3, 2), 0);
    char *s = output_of(W_COLLAPSED, &p, 0);
    tu_assert_text(s, "_ 5\na;_;a 2\n");
    free(s);
    js_profile_free(&p);
}

/* Frames with one name and different types print alike: their stacks are one line. */
static void test_collapsed_merges_types(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    uint32_t r = js_profile_frame(&p, "r", JS_FT_JIT);
    uint32_t a[2] = {r, js_profile_frame(&p, "X.m", JS_FT_JIT)}, b[2] = {r, js_profile_frame(&p, "X.m", JS_FT_INLINED)};
    assert_int_equal(js_profile_add(&p, a, 2, 3), 0);
    assert_int_equal(js_profile_add(&p, b, 2, 4), 0);
    char *s = output_of(W_COLLAPSED, &p, 0);
    tu_assert_text(s, "r;X.m 7\n");
    free(s);
    js_profile_free(&p);
}

/* ---- flat writer --------------------------------------------------------------------------------- */

static const char *const FLAT_INPUT = "[main tid=1];Main.main;A.a;B.b;A.a;C.c 10\n"
                                      "[main tid=1];Main.main;A.a;C.c 20\n"
                                      "[main tid=1];Main.main;B.b 30\n"
                                      "[worker tid=2];W.run;C.c 40\n";

/* Exact text: self and total tables, recursion counted once, thread frames left out, ties by name. */
static void test_flat_exact(void **state UNUSED)
{
    js_profile p;
    tu_profile(&p, FLAT_INPUT);
    snprintf(p.title, sizeof p.title, "T");
    char *s = output_of(W_FLAT, &p, 0);
    tu_assert_text(s, "# T\n"
                      "Total: 100 samples in 4 stacks\n"
                      "\n"
                      "Top 2 methods by self samples:\n"
                      " self    self%  total   total%  method\n"
                      "   70   70.00%     70   70.00%  C.c\n"
                      "   30   30.00%     40   40.00%  B.b\n"
                      "\n"
                      "Top 5 methods by total samples:\n"
                      " self    self%  total   total%  method\n"
                      "   70   70.00%     70   70.00%  C.c\n"
                      "    0    0.00%     60   60.00%  Main.main\n"
                      "   30   30.00%     40   40.00%  B.b\n"
                      "    0    0.00%     40   40.00%  W.run\n"
                      "    0    0.00%     30   30.00%  A.a\n");
    free(s);

    s = output_of(W_FLAT, &p, 1); /* top 1 */
    tu_assert_text(s, "# T\n"
                      "Total: 100 samples in 4 stacks\n"
                      "\n"
                      "Top 1 methods by self samples:\n"
                      " self    self%  total   total%  method\n"
                      "   70   70.00%     70   70.00%  C.c\n"
                      "\n"
                      "Top 1 methods by total samples:\n"
                      " self    self%  total   total%  method\n"
                      "   70   70.00%     70   70.00%  C.c\n");
    free(s);
    js_profile_free(&p);
}

/* Percentages with decimals, wide numbers widen the columns, the unit is used, top 0 means 20. */
/* Adds one stack of (name, type) frames, root first. */
static void add_typed(js_profile *p, uint64_t w, int n, const char *const *names, const uint8_t *types)
{
    uint32_t ids[8];
    for (int i = 0; i < n; i++) ids[i] = js_profile_frame(p, names[i], types[i]);
    assert_int_equal(js_profile_add(p, ids, (uint32_t)n, w), 0);
}

/* Failed walks are summed per reason; [no_Java_frame] and a [truncated] root are not failures. */
static void test_flat_failed_walks(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    add_typed(&p, 95, 2, (const char *const[]){"M.main", "M.a"}, (const uint8_t[]){JS_FT_JIT, JS_FT_JIT});
    add_typed(&p, 3, 2, (const char *const[]){"M.main", "[unknown_Java]"}, (const uint8_t[]){JS_FT_JIT, JS_FT_ERROR});
    add_typed(&p, 1, 3, (const char *const[]){JS_TRUNCATED_FRAME, "M.main", "M.b"},
              (const uint8_t[]){JS_FT_ERROR, JS_FT_JIT, JS_FT_JIT});
    add_typed(&p, 1, 1, (const char *const[]){"[no_Java_frame]"}, (const uint8_t[]){JS_FT_ERROR});
    char *s = output_of(W_FLAT, &p, 1);
    const char *tail = strstr(s, "\nStacks whose walk failed");
    assert_non_null(tail);
    tu_assert_text(tail, "\nStacks whose walk failed: 3 samples (3.00%)\n"
                         "    3    3.00%  [unknown_Java]\n");
    free(s);
    js_profile_free(&p);
    js_profile_init(&p); /* no failure: no section */
    add_typed(&p, 5, 1, (const char *const[]){"[no_Java_frame]"}, (const uint8_t[]){JS_FT_ERROR});
    s = output_of(W_FLAT, &p, 1);
    assert_null(strstr(s, "walk failed"));
    free(s);
    js_profile_free(&p);
}

static void test_flat_widths_and_default_top(void **state UNUSED)
{
    js_profile p;
    tu_profile(&p, "r;a 1234567\nr;b 2\nr;c 1\n");
    snprintf(p.unit, sizeof p.unit, "ns");
    char *s = output_of(W_FLAT, &p, 0);
    tu_assert_text(s, "Total: 1234570 ns in 3 stacks\n"
                      "\n"
                      "Top 3 methods by self ns:\n"
                      "   self    self%    total   total%  method\n"
                      "1234567  100.00%  1234567  100.00%  a\n"
                      "      2    0.00%        2    0.00%  b\n"
                      "      1    0.00%        1    0.00%  c\n"
                      "\n"
                      "Top 4 methods by total ns:\n"
                      "   self    self%    total   total%  method\n"
                      "      0    0.00%  1234570  100.00%  r\n"
                      "1234567  100.00%  1234567  100.00%  a\n"
                      "      2    0.00%        2    0.00%  b\n"
                      "      1    0.00%        1    0.00%  c\n");
    free(s);
    js_profile_free(&p);

    /* 25 leaf methods: top 0 and top -3 both list 20 rows; 3.70% style rounding. */
    js_profile_init(&p);
    char line[64];
    for (int i = 0; i < 25; i++) {
        snprintf(line, sizeof line, "m%02d %d", i, i + 1);
        tu_add_collapsed(&p, line, JS_FT_JIT);
    }
    for (int top = 0; top >= -3; top -= 3) {
        s = output_of(W_FLAT, &p, top);
        assert_non_null(strstr(s, "Top 20 methods by self samples:\n"));
        assert_non_null(strstr(s, "Top 20 methods by total samples:\n"));
        assert_non_null(strstr(s, "   25    7.69%     25    7.69%  m24\n")); /* 25 / 325 */
        assert_non_null(strstr(s, "    6    1.85%      6    1.85%  m05\n")); /* the 20th */
        assert_null(strstr(s, "m04"));
        free(s);
    }
    js_profile_free(&p);
}

/* Same method under two types is one row; an empty profile still has both (empty) tables. */
static void test_flat_merges_types_and_empty(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    uint32_t a[1] = {js_profile_frame(&p, "X.m", JS_FT_JIT)}, b[1] = {js_profile_frame(&p, "X.m", JS_FT_INLINED)};
    assert_int_equal(js_profile_add(&p, a, 1, 1), 0);
    assert_int_equal(js_profile_add(&p, b, 1, 3), 0);
    char *s = output_of(W_FLAT, &p, 5);
    assert_non_null(strstr(s, "Top 1 methods by self samples:\n self    self%  total   total%  method\n"
                              "    4  100.00%      4  100.00%  X.m\n"));
    free(s);
    js_profile_free(&p);

    js_profile_init(&p);
    s = output_of(W_FLAT, &p, 0);
    tu_assert_text(s, "Total: 0 samples in 0 stacks\n"
                      "\n"
                      "Top 0 methods by self samples:\n"
                      " self    self%  total   total%  method\n"
                      "\n"
                      "Top 0 methods by total samples:\n"
                      " self    self%  total   total%  method\n");
    free(s);
    js_profile_free(&p);
}

/* ---- tree writer --------------------------------------------------------------------------------- */

/* Children by total descending, self and total per node, nodes under 0.1% folded per parent. */
static void test_tree_exact(void **state UNUSED)
{
    js_profile p;
    tu_profile(&p, "root;a;x 1000\n"
                   "root;a;y 500\n"
                   "root;b 497\n"
                   "root;d 1\n"
                   "root;c 1\n"
                   "root;a;z 1\n");
    char *s = output_of(W_TREE, &p, 0);
    tu_assert_text(s, "Total: 2000 samples in 6 stacks\n"
                      "\n"
                      " total%  total   self  name\n"
                      "100.00%   2000      0  root\n"
                      " 75.05%   1501      0    a\n"
                      " 50.00%   1000   1000      x\n"
                      " 25.00%    500    500      y\n"
                      "  0.05%      1      1      ... (1 more)\n"
                      " 24.85%    497    497    b\n"
                      "  0.10%      2      2    ... (2 more)\n");
    free(s);
    js_profile_free(&p);
}

/* Exactly 0.1% is kept; equal totals sort by name; self and children together; several roots. */
static void test_tree_threshold_and_ties(void **state UNUSED)
{
    js_profile p;
    tu_profile(&p, "m;k 1\n"
                   "m 499\n"
                   "z;q 250\n"
                   "b;q 250\n");
    snprintf(p.title, sizeof p.title, "Ties");
    char *s = output_of(W_TREE, &p, 0);
    tu_assert_text(s, "# Ties\n"
                      "Total: 1000 samples in 4 stacks\n"
                      "\n"
                      " total%  total   self  name\n"
                      " 50.00%    500    499  m\n"
                      "  0.10%      1      1    k\n"
                      " 25.00%    250      0  b\n"
                      " 25.00%    250    250    q\n"
                      " 25.00%    250      0  z\n"
                      " 25.00%    250    250    q\n");
    free(s);
    js_profile_free(&p);
}

/* A 10,000-deep stack: one line per level, the indent stops growing, deep lines say their level. */
static void test_tree_deep(void **state UNUSED)
{
    enum { DEEP = 10000 };
    js_profile p;
    js_profile_init(&p);
    uint32_t *fr = malloc(DEEP * sizeof *fr);
    assert_non_null(fr);
    for (int i = 0; i < DEEP; i++) fr[i] = js_profile_frame(&p, i % 2 ? "Rec.a" : "Rec.b", JS_FT_JIT);
    assert_int_equal(js_profile_add(&p, fr, DEEP, 3), 0);
    free(fr);
    char *s = output_of(W_TREE, &p, 0);
    int lines = 0;
    for (const char *c = s; *c; c++) lines += *c == '\n';
    assert_int_equal(lines, 3 + DEEP);
    char want[256];
    snprintf(want, sizeof want, "\n100.00%%      3      0  %128s[level 65] Rec.a\n", "");
    assert_non_null(strstr(s, want));
    snprintf(want, sizeof want, "\n100.00%%      3      3  %128s[level 9999] Rec.a\n", "");
    assert_non_null(strstr(s, want));
    snprintf(want, sizeof want, "\n100.00%%      3      0  %128sRec.b\n", ""); /* level 64: no tag yet */
    assert_non_null(strstr(s, want));
    free(s);
    js_profile_free(&p);
}

/* ---- format names and extensions ----------------------------------------------------------------- */

/* Every extension, case-insensitively; only the last component counts; names of all formats. */
static void test_format_from_path(void **state UNUSED)
{
    static const struct {
        const char *path;
        js_out_format f;
    } t[] = {
        {"p.html", JS_OUT_HTML},
        {"dir/x/p.htm", JS_OUT_HTML},
        {"P.HTML", JS_OUT_HTML},
        {"p.HtM", JS_OUT_HTML},
        {"p.collapsed", JS_OUT_COLLAPSED},
        {"p.Folded", JS_OUT_COLLAPSED},
        {"p.txt", JS_OUT_FLAT},
        {"p.TXT", JS_OUT_FLAT},
        {"p.tree", JS_OUT_TREE},
        {"p.jfr", JS_OUT_JFR},
        {"p.JSON", JS_OUT_JSON_TREE},
        {"p.html.gz", JS_OUT_NONE},
        {"profile", JS_OUT_NONE},
        {"p.", JS_OUT_NONE},
        {"dir.html/profile", JS_OUT_NONE},
        {".html", JS_OUT_NONE},
        {"", JS_OUT_NONE},
        {"p.xhtml", JS_OUT_NONE},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (js_out_format_from_path(t[i].path) != t[i].f) print_error("path '%s'\n", t[i].path);
        assert_int_equal(js_out_format_from_path(t[i].path), t[i].f);
    }
    assert_int_equal(js_out_format_from_path(NULL), JS_OUT_NONE);
    assert_string_equal(js_out_format_name(JS_OUT_NONE), "none");
    assert_string_equal(js_out_format_name(JS_OUT_COLLAPSED), "collapsed");
    assert_string_equal(js_out_format_name(JS_OUT_FLAT), "flat");
    assert_string_equal(js_out_format_name(JS_OUT_TREE), "tree");
    assert_string_equal(js_out_format_name(JS_OUT_HTML), "html");
    assert_string_equal(js_out_format_name(JS_OUT_JFR), "jfr");
    assert_string_equal(js_out_format_name(JS_OUT_JSON_TREE), "json");
    assert_string_equal(js_out_format_name((js_out_format)99), "unknown");
}

/* ---- collapsed reader ---------------------------------------------------------------------------- */

/* collapsed -> profile -> collapsed gives the same text, and the frames the expected types. */
static void test_read_round_trip(void **state UNUSED)
{
    static const char text[] = "[main tid=1];java.lang.Thread.run;app.Main.work;[unknown_Java] 2\n"
                               "[main tid=1];java.lang.Thread.run;app.Main.work;__memmove_avx 5\n"
                               "[main tid=1];java.lang.Thread.run;app.Main.work;app.Main.work 1\n"
                               "[worker 2 tid=7];a b.c;\xc3\xa9t\xc3\xa9.x 18446744073709551\n"
                               "solo 0\n"
                               "std::vector<int>::push_back;memcpy 3\n";
    js_profile p;
    char err[256];
    assert_int_equal(read_text(text, 0, &p, err, sizeof err), 0);
    assert_int_equal(p.nstacks, 6);
    char *s = output_of(W_COLLAPSED, &p, 0);
    tu_assert_text(s, text);
    free(s);
    static const struct {
        const char *name;
        js_frame_type t;
    } types[] = {
        {"[main tid=1]", JS_FT_THREAD},   {"java.lang.Thread.run", JS_FT_JIT}, {"[unknown_Java]", JS_FT_ERROR},
        {"__memmove_avx", JS_FT_NATIVE},  {"a b.c", JS_FT_JIT},                {"solo", JS_FT_NATIVE},
        {"std::vector<int>::push_back", JS_FT_NATIVE},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t k = 0;
        while (k < p.nframes && strcmp(p.frames[k].name, types[i].name) != 0) k++;
        assert_true(k < p.nframes);
        if (p.frames[k].type != types[i].t) print_error("frame '%s'\n", types[i].name);
        assert_int_equal(p.frames[k].type, types[i].t);
    }
    js_profile_free(&p);
}

/* async-profiler suffixes set the type and are stripped; unknown suffixes are part of the name. */
static void test_read_suffixes(void **state UNUSED)
{
    static const struct {
        const char *raw, *name;
        int first;
        js_frame_type t;
    } t[] = {
        {"A.b_[j]", "A.b", 0, JS_FT_JIT},        {"A.b_[i]", "A.b", 0, JS_FT_INLINED},
        {"do_syscall_64_[k]", "do_syscall_64", 0, JS_FT_KERNEL},
        {"A.b_[0]", "A.b", 0, JS_FT_INTERPRETED}, {"A.b_[1]", "A.b", 0, JS_FT_C1},
        {"[tid=5]_[j]", "[tid=5]", 1, JS_FT_JIT}, {"A.b_[x]", "A.b_[x]", 0, JS_FT_JIT},
        {"x_[x]", "x_[x]", 0, JS_FT_NATIVE},      {"[main]", "[main]", 1, JS_FT_ERROR},
        {"[main tid=12]", "[main tid=12]", 1, JS_FT_THREAD}, {"[tid=7]", "[tid=7]", 1, JS_FT_THREAD},
        {"[deopt]", "[deopt]", 1, JS_FT_ERROR},  {"[x tid=]", "[x tid=]", 1, JS_FT_ERROR},
        {"[xtid=3]", "[xtid=3]", 1, JS_FT_ERROR}, {"[a tid=3] b", "[a tid=3] b", 1, JS_FT_NATIVE},
        {"[GC_active]", "[GC_active]", 0, JS_FT_ERROR}, {"[", "[", 1, JS_FT_NATIVE},
        {"_[j]", "", 0, JS_FT_JIT},               {"", "", 0, JS_FT_NATIVE},
        {"a::b.c", "a::b.c", 0, JS_FT_NATIVE},   {"Foo.bar(I)J", "Foo.bar(I)J", 0, JS_FT_JIT},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        snprintf(buf, sizeof buf, "%s", t[i].raw);
        js_frame_type ty = js_collapsed_frame_type(buf, t[i].first);
        if (ty != t[i].t || strcmp(buf, t[i].name) != 0) print_error("raw '%s' -> '%s' %d\n", t[i].raw, buf, ty);
        assert_int_equal(ty, t[i].t);
        assert_string_equal(buf, t[i].name);
    }
    /* the same through the reader: stripped names, types kept apart */
    js_profile p;
    char err[256];
    assert_int_equal(read_text("[t];A.b_[j];A.b_[i] 1\n[t];A.b_[j] 2\n", 0, &p, err, sizeof err), 0);
    assert_int_equal(p.nframes, 3);
    assert_string_equal(p.frames[1].name, "A.b");
    assert_int_equal(p.frames[1].type, JS_FT_JIT);
    assert_string_equal(p.frames[2].name, "A.b");
    assert_int_equal(p.frames[2].type, JS_FT_INLINED);
    assert_int_equal(p.total, 3);
    js_profile_free(&p);
}

/* Blank lines, CRLF, a tab before the weight, no final newline, empty input are all fine. */
static void test_read_lenient_whitespace(void **state UNUSED)
{
    js_profile p;
    char err[256];
    assert_int_equal(read_text("a;b\t3\r\n\n  \r\n\t\nc 4", 0, &p, err, sizeof err), 0);
    char *s = tu_stacks(&p);
    tu_assert_text(s, "a;b 3\nc 4\n");
    free(s);
    js_profile_free(&p);
    assert_int_equal(read_text("", 0, &p, err, sizeof err), 0);
    assert_int_equal(p.nstacks, 0);
    js_profile_free(&p);
}

/* Each malformed line stops the read with "in:LINE: why", one line. */
static void test_read_malformed(void **state UNUSED)
{
    static const struct {
        const char *text, *want;
    } t[] = {
        {"a;b 1\nno_weight_here\n", "in:2: no weight (expected 'frame;frame;... weight')"},
        {"a 1\n\na x1\n", "in:3: weight 'x1' is not a non-negative integer"},
        {"a -1\n", "in:1: weight '-1' is not a non-negative integer"},
        {"a 1.5\n", "in:1: weight '1.5' is not a non-negative integer"},
        {"a 18446744073709551616\n", "in:1: weight '18446744073709551616' is not a non-negative integer"},
        {"a \n", "in:1: weight '' is not a non-negative integer"},
        {"x 1\ny 2\n 5\n", "in:3: no frames before the weight"},
    };
    char err[256];
    js_profile p;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        assert_int_equal(read_text(t[i].text, 0, &p, err, sizeof err), -1);
        tu_assert_text(err, t[i].want);
        js_profile_free(&p);
    }
    static const char nul[] = "a 1\nb\0c 2\n";
    assert_int_equal(read_text(nul, sizeof nul - 1, &p, err, sizeof err), -1);
    tu_assert_text(err, "in:2: NUL byte in line");
    js_profile_free(&p);
}

/* A line of exactly JS_COLLAPSED_LINE_MAX bytes is read; one byte more is refused with its line number. */
static void test_read_line_cap(void **state UNUSED)
{
    size_t max = JS_COLLAPSED_LINE_MAX;
    char *text = malloc(max + 16);
    assert_non_null(text);
    memcpy(text, "ok 1\n", 5);
    memset(text + 5, 'a', max - 2);
    memcpy(text + 5 + max - 2, " 7\n", 4); /* line 2: max - 2 frame bytes + " 7" = max bytes */
    js_profile p;
    char err[256];
    assert_int_equal(read_text(text, strlen(text), &p, err, sizeof err), 0);
    assert_int_equal(p.nstacks, 2);
    assert_int_equal(strlen(p.frames[1].name), max - 2);
    js_profile_free(&p);

    memset(text + 5, 'a', max - 1);
    memcpy(text + 5 + max - 1, " 7\n", 4); /* max + 1 bytes */
    assert_int_equal(read_text(text, strlen(text), &p, err, sizeof err), -1);
    tu_assert_text(err, "in:2: line longer than 1048576 bytes");
    js_profile_free(&p);
    free(text);
}

/* ---- I/O errors ---------------------------------------------------------------------------------- */

/* Every writer fails with one line on a full device, a read-only stream, and no stream. */
static void test_write_errors(void **state UNUSED)
{
    js_profile p;
    tu_profile(&p, FLAT_INPUT);
    char err[256];
    for (int w = W_COLLAPSED; w <= W_TREE; w++) {
        FILE *full = fopen("/dev/full", "w");
        if (full) {
            memset(err, 0, sizeof err);
            assert_int_equal(run_writer(w, full, &p, 0, err, sizeof err), -1);
            if (!strstr(err, "No space left on device")) print_error("writer %d: %s\n", w, err);
            assert_non_null(strstr(err, "write error: No space left on device"));
            assert_null(strchr(err, '\n'));
            fclose(full);
        }
        FILE *ro = fopen("/dev/null", "r");
        assert_non_null(ro);
        memset(err, 0, sizeof err);
        assert_int_equal(run_writer(w, ro, &p, 0, err, sizeof err), -1);
        assert_non_null(strstr(err, "write error"));
        assert_null(strchr(err, '\n'));
        fclose(ro);
        memset(err, 0, sizeof err);
        assert_int_equal(run_writer(w, NULL, &p, 0, err, sizeof err), -1);
        assert_true(err[0] != 0);
        assert_int_equal(run_writer(w, stdout, NULL, 0, err, sizeof err), -1);
    }
    assert_non_null(strstr(err, "tree output:"));
    js_profile_free(&p);
}

/* A stream that cannot be read gives a read error naming the input. */
static void test_read_error(void **state UNUSED)
{
    FILE *wo = fopen("/dev/null", "w");
    assert_non_null(wo);
    js_profile p;
    js_profile_init(&p);
    char err[256] = "";
    assert_int_equal(js_collapsed_read(wo, "in.collapsed", &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "in.collapsed: read error"));
    fclose(wo);
    assert_int_equal(js_collapsed_read(NULL, NULL, &p, err, sizeof err), -1);
    js_profile_free(&p);
}


/* ---- async-profiler's names and the traces output ------------------------------------------------ */

/* A profile with Java method frames (marked), a native frame with dots and an allocation class frame. */
static void java_profile(js_profile *p)
{
    js_profile_init(p);
    uint32_t a[4] = {js_profile_frame_java(p, "app.Main.main", JS_FT_INTERPRETED),
                     js_profile_frame_java(p, "java.util.HashMap.get(Ljava/lang/Object;)Ljava/lang/Object;:556", JS_FT_JIT),
                     js_profile_frame(p, "foo.constprop.0", JS_FT_NATIVE),
                     js_profile_frame(p, "java.lang.String_[i]", JS_FT_INLINED)};
    uint32_t b[2] = {a[0], js_profile_frame_java(p, "Top.run", JS_FT_INLINED)};
    assert_int_equal(js_profile_add_n(p, a, 4, 30, 3), 0);
    assert_int_equal(js_profile_add_n(p, b, 2, 70, 7), 0);
}

/* Java method frames get the class in its internal form, without its package, or their kind; others stay. */
static void test_java_names(void **state UNUSED)
{
    char buf[256];
    assert_string_equal(js_java_name("java.lang.String.length", JS_FT_JIT, JS_JN_SLASHES, buf, sizeof buf),
                        "java/lang/String.length");
    assert_string_equal(js_java_name("a.b.C$D.<init>(Ljava/lang/String;)V:12", JS_FT_JIT, JS_JN_SLASHES, buf, sizeof buf),
                        "a/b/C$D.<init>(Ljava/lang/String;)V:12");
    assert_string_equal(js_java_name("a.b.C.m", JS_FT_JIT, JS_JN_SIMPLE | JS_JN_SLASHES, buf, sizeof buf), "C.m");
    assert_string_equal(js_java_name("Top.run", JS_FT_INLINED, JS_JN_SLASHES | JS_JN_ANN, buf, sizeof buf), "Top.run_[i]");
    assert_string_equal(js_java_name("a.B.m", JS_FT_INTERPRETED, JS_JN_ANN, buf, sizeof buf), "a.B.m_[0]");
    assert_string_equal(js_java_name("a.B.m", JS_FT_C1, JS_JN_ANN, buf, sizeof buf), "a.B.m_[1]");
    assert_string_equal(js_java_name("main", JS_FT_JIT, JS_JN_SLASHES | JS_JN_SIMPLE, buf, sizeof buf), "main");
    /* a hidden class as JVMTI names it: its address after a '/' (Class.getName), dropped by norm */
    const char *lambda = "app.Cpu$$Lambda.0x0000000800c01234.run";
    assert_string_equal(js_java_name(lambda, JS_FT_JIT, JS_JN_HIDDEN, buf, sizeof buf), "app.Cpu$$Lambda/0x0000000800c01234.run");
    assert_string_equal(js_java_name(lambda, JS_FT_JIT, JS_JN_SLASHES, buf, sizeof buf), "app/Cpu$$Lambda/0x0000000800c01234.run");
    assert_string_equal(js_java_name(lambda, JS_FT_JIT, JS_JN_NORM | JS_JN_SLASHES, buf, sizeof buf), "app/Cpu$$Lambda.run");
    assert_string_equal(js_java_name(lambda, JS_FT_JIT, JS_JN_NORM | JS_JN_HIDDEN, buf, sizeof buf), "app.Cpu$$Lambda.run");
    assert_string_equal(js_java_name(lambda, JS_FT_JIT, JS_JN_SIMPLE | JS_JN_HIDDEN, buf, sizeof buf),
                        "Cpu$$Lambda/0x0000000800c01234.run");
    assert_string_equal(js_java_name("app.Cpu$$Lambda$14.0x12.run", JS_FT_JIT, JS_JN_NORM | JS_JN_SIMPLE, buf, sizeof buf),
                        "Cpu$$Lambda$14.run");
    js_profile p;
    java_profile(&p);
    assert_int_equal(js_profile_java_names(&p, JS_JN_SLASHES), 0);
    char *out = output_of(W_COLLAPSED, &p, 0);
    assert_string_equal(out, "app/Main.main;Top.run 70\n"
                             "app/Main.main;java/util/HashMap.get(Ljava/lang/Object_)Ljava/lang/Object_:556;"
                             "foo.constprop.0;java.lang.String_[i] 30\n");
    free(out);
    js_profile_free(&p);
}

/* Filters match a Java frame in either spelling, so patterns written for dotted and for slashed names both work. */
static void test_filter_either_spelling(void **state UNUSED)
{
    const char *pats[] = {"java.util.*", "java/util/*", "*HashMap.get", "app/Main.main"};
    for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++) {
        js_profile p;
        java_profile(&p);
        js_profile_filter(&p, pats[i], "");
        if (i < 3) assert_int_equal(p.total, 30);
        else assert_int_equal(p.total, 100);
        js_profile_free(&p);
    }
    js_profile p;
    java_profile(&p);
    js_profile_filter(&p, "foo/constprop.0", ""); /* a native frame is matched by its name only */
    assert_int_equal(p.total, 0);
    js_profile_free(&p);
}

/* traces: the heaviest stacks first, weight, share and events, frames leaf first; top N. */
static void test_traces_exact(void **state UNUSED)
{
    js_profile p;
    java_profile(&p);
    snprintf(p.unit, sizeof p.unit, "bytes");
    char *out = output_of(W_TRACES, &p, 0);
    assert_string_equal(out, "Total: 100 bytes in 2 stacks\n"
                             "\n--- 70 bytes (70.00%), 7 samples\n  [ 0] Top.run\n  [ 1] app.Main.main\n"
                             "\n--- 30 bytes (30.00%), 3 samples\n  [ 0] java.lang.String_[i]\n  [ 1] foo.constprop.0\n"
                             "  [ 2] java.util.HashMap.get(Ljava/lang/Object;)Ljava/lang/Object;:556\n  [ 3] app.Main.main\n");
    free(out);
    out = output_of(W_TRACES, &p, 1);
    assert_null(strstr(out, "30 bytes"));
    assert_non_null(strstr(out, "70 bytes"));
    free(out);
    js_profile_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collapsed_exact),
        cmocka_unit_test(test_collapsed_hostile_names),
        cmocka_unit_test(test_collapsed_empty_name),
        cmocka_unit_test(test_collapsed_merges_types),
        cmocka_unit_test(test_flat_exact),
        cmocka_unit_test(test_flat_widths_and_default_top),
        cmocka_unit_test(test_flat_failed_walks),
        cmocka_unit_test(test_flat_merges_types_and_empty),
        cmocka_unit_test(test_tree_exact),
        cmocka_unit_test(test_tree_threshold_and_ties),
        cmocka_unit_test(test_tree_deep),
        cmocka_unit_test(test_format_from_path),
        cmocka_unit_test(test_read_round_trip),
        cmocka_unit_test(test_read_suffixes),
        cmocka_unit_test(test_read_lenient_whitespace),
        cmocka_unit_test(test_read_malformed),
        cmocka_unit_test(test_read_line_cap),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_read_error),
        cmocka_unit_test(test_java_names),
        cmocka_unit_test(test_filter_either_spelling),
        cmocka_unit_test(test_traces_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

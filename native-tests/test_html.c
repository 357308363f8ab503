/* test_html.c - the HTML flame-graph writer (out_html.c): escaping of hostile names, a well-formed
 * page (no raw "</script" or '<' in the data, valid JSON, valid UTF-8, every name present escaped),
 * the exact tree encoding, defaults, empty and large profiles, and write errors. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* open_memstream, strndup */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "output/profile.h"

#define UNUSED __attribute__((unused))
#define DATA_OPEN "<script id=\"fg-data\" type=\"application/json\">"

/* ---- helpers -------------------------------------------------------------------------------- */

/* js_html_escape(s) into a heap string (caller frees). */
static char *escaped(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    js_html_escape(f, s);
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* Writes the page for p into a heap string (caller frees); requires success. */
static char *page_of(const js_profile *p, int reverse)
{
    char *buf = NULL, err[256] = "";
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    int rc = js_write_html(f, p, reverse, err, sizeof err);
    if (rc != 0) print_error("js_write_html: %s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(strlen(buf), len); /* no NUL byte inside the page */
    return buf;
}

/* The data region of a page (between the fg-data open tag and the next "</script"), as a heap copy. */
static char *data_of(const char *page)
{
    const char *a = strstr(page, DATA_OPEN);
    assert_non_null(a);
    a += strlen(DATA_OPEN);
    const char *b = strstr(a, "</script");
    assert_non_null(b);
    return strndup(a, (size_t)(b - a));
}

/* Count of non-overlapping occurrences of needle in s. */
static int count_of(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + strlen(needle), needle)) n++;
    return n;
}

/* The data region with newlines removed (the writer may wrap long arrays). */
static char *flat(const char *data)
{
    char *o = strdup(data), *w = o;
    for (const char *r = data; *r; r++)
        if (*r != '\n') *w++ = *r;
    *w = 0;
    return o;
}

/* Adds a stack of names (root first, all of one type) with weight w. */
static void add(js_profile *p, js_frame_type t, uint64_t w, int n, ...)
{
    uint32_t fr[64];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        fr[i] = js_profile_frame(p, va_arg(ap, const char *), t);
        assert_int_not_equal(fr[i], UINT32_MAX);
    }
    va_end(ap);
    assert_int_equal(js_profile_add(p, fr, (uint32_t)n, w), 0);
}

/* ---- a small strict JSON validator (RFC 8259) ------------------------------------------------ */

static const char *j_value(const char *s, int depth);

/* Skips JSON whitespace. */
static const char *j_ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    return s;
}

/* End of the JSON string at s, or NULL if it is not one. */
static const char *j_string(const char *s)
{
    if (*s++ != '"') return NULL;
    for (;;) {
        unsigned char c = (unsigned char)*s++;
        if (c == '"') return s;
        if (c < 0x20) return NULL;
        if (c == '\\') {
            c = (unsigned char)*s++;
            if (c == 'u') {
                for (int i = 0; i < 4; i++, s++)
                    if (!strchr("0123456789abcdefABCDEF", *s) || !*s) return NULL;
            } else if (!strchr("\"\\/bfnrt", c) || !c) {
                return NULL;
            }
        }
    }
}

/* End of the JSON number at s, or NULL if it is not one. */
static const char *j_number(const char *s)
{
    if (*s == '-') s++;
    if (*s == '0') s++;
    else if (*s >= '1' && *s <= '9') while (*s >= '0' && *s <= '9') s++;
    else return NULL;
    if (*s == '.') {
        if (!(*++s >= '0' && *s <= '9')) return NULL;
        while (*s >= '0' && *s <= '9') s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (!(*s >= '0' && *s <= '9')) return NULL;
        while (*s >= '0' && *s <= '9') s++;
    }
    return s;
}

/* End of the JSON value at s (after whitespace), or NULL if it is not one. */
static const char *j_value(const char *s, int depth)
{
    if (depth > 64) return NULL;
    s = j_ws(s);
    if (*s == '{' || *s == '[') {
        char close = *s == '{' ? '}' : ']';
        int obj = *s == '{';
        s = j_ws(s + 1);
        if (*s == close) return s + 1;
        for (;;) {
            if (obj) {
                if (!(s = j_string(j_ws(s)))) return NULL;
                s = j_ws(s);
                if (*s++ != ':') return NULL;
            }
            if (!(s = j_value(s, depth + 1))) return NULL;
            s = j_ws(s);
            if (*s == close) return s + 1;
            if (*s++ != ',') return NULL;
        }
    }
    if (*s == '"') return j_string(s);
    if (!strncmp(s, "true", 4)) return s + 4;
    if (!strncmp(s, "false", 5)) return s + 5;
    if (!strncmp(s, "null", 4)) return s + 4;
    return j_number(s);
}

/* The whole text is exactly one JSON value. */
static int json_valid(const char *s)
{
    const char *e = j_value(s, 0);
    return e && *j_ws(e) == 0;
}

/* Every byte sequence in s is valid UTF-8 (no overlongs, surrogates or values past U+10FFFF). */
static int utf8_valid(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        unsigned c = *s, n = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2
                                         : c >= 0xF0 && c <= 0xF4 ? 3 : 9;
        if (n == 9) return 0;
        uint32_t cp = n ? c & (0x3F >> n) : c;
        for (unsigned i = 1; i <= n; i++) {
            if ((s[i] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | (s[i] & 0x3F);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        s += n + 1;
    }
    return 1;
}

/* ---- tests ------------------------------------------------------------------------------------ */

/* Each hostile input maps to exactly this escaped text. */
static void test_escape_table(void **state UNUSED)
{
    static const struct { const char *in, *out; } cases[] = {
        {"plain.Name$1.run(I)V", "plain.Name$1.run(I)V"},
        {"</script>", "\\u003c/script\\u003e"},
        {"</SCRIPT><!--", "\\u003c/SCRIPT\\u003e\\u003c!--"},
        {"a&b<c>d\"e'f\\g", "a\\u0026b\\u003cc\\u003ed\\\"e\\u0027f\\\\g"},
        {"\x01\t\n\r\x1f\x7f", "\\u0001\\t\\n\\r\\u001f\\u007f"},
        {"\xc3\xbc\xe6\x96\xb9\xf0\x9f\x94\xa5", "\xc3\xbc\xe6\x96\xb9\xf0\x9f\x94\xa5"}, /* ü方🔥 stay raw */
        {"a\xe2\x80\xa8" "b\xe2\x80\xa9", "a\\u2028b\\u2029"},
        {"\xff", "\\ufffd"},
        {"\xc0\x80", "\\ufffd\\ufffd"},              /* overlong NUL (modified UTF-8) */
        {"x\xe6\x96", "x\\ufffd\\ufffd"},             /* truncated at the end */
        {"\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd"},    /* UTF-16 surrogate */
        {"\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"}, /* past U+10FFFF */
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = escaped(cases[i].in);
        if (strcmp(got, cases[i].out) != 0) print_error("case %zu: got '%s', want '%s'\n", i, got, cases[i].out);
        assert_string_equal(got, cases[i].out);
        free(got);
    }
    char *none = escaped(NULL);
    assert_string_equal(none, "");
    free(none);
    js_html_escape(NULL, "ignored");
}

static const char *const HOSTILE[] = {
    "</script><script>alert(1)</script>",
    "</ScRiPt >",
    "<!-- <script>",
    "a&amp;b&lt;c",
    "q\"uo'te\\back\\\\slash",
    "ctl\x01\x02\x1b[31m\x7f",
    "tab\tnew\nline\rcr",
    "java.lang.String.\xc3\xa9t\xc3\xa9\xe6\x96\xb9\xe6\xb3\x95\xf0\x9f\x94\xa5",
    "ls\xe2\x80\xa8ps\xe2\x80\xa9",
    "bad\xff\xfe utf8 \xc0\x80",
    "${alert(3)}`backtick`",
    "]]></x>",
};
#define NHOSTILE (sizeof HOSTILE / sizeof HOSTILE[0])

/* A page from hostile names and title is well formed and carries every name, escaped. */
static void test_page_well_formed(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    snprintf(p.title, sizeof p.title, "%s", "T </title><script>alert(2)</script> & \"q\" 'a' \x01");
    for (size_t i = 0; i < NHOSTILE; i++) add(&p, (js_frame_type)(i % JS_FT_COUNT), 10 + i, 2, "root", HOSTILE[i]);
    add(&p, JS_FT_JIT, 5, 3, "root", HOSTILE[0], HOSTILE[1]);
    char *page = page_of(&p, 0);

    assert_int_equal(strncmp(page, "<!DOCTYPE html>", 15), 0);
    assert_non_null(strstr(page, "</html>"));
    assert_null(strstr(page, "@@JSAMPLER_"));
    assert_int_equal(count_of(page, "<script"), 3); /* the data element, the page's script, the frames block */
    assert_int_equal(count_of(page, "</script"), 3);
    assert_int_equal(count_of(page, "<title>"), 1);
    assert_non_null(strstr(page,
        "<title>T &lt;/title&gt;&lt;script&gt;alert(2)&lt;/script&gt; &amp; &quot;q&quot; &#39;a&#39;  </title>"));
    assert_true(utf8_valid(page));

    char *data = data_of(page);
    for (const char *c = data; *c; c++) {
        assert_true(*c != '<' && *c != '>' && *c != '&');
        assert_true((unsigned char)*c >= 0x20 || *c == '\n');
    }
    if (!json_valid(data)) print_error("data is not valid JSON: %.200s\n", data);
    assert_true(json_valid(data));
    for (size_t i = 0; i < NHOSTILE; i++) {
        char *e = escaped(HOSTILE[i]);
        size_t n = strlen(e);
        char *q = malloc(n + 3);
        q[0] = '"';
        memcpy(q + 1, e, n);
        q[n + 1] = '"';
        q[n + 2] = 0;
        if (!strstr(data, q)) print_error("name %zu (%s) is missing from the data\n", i, q);
        assert_non_null(strstr(data, q));
        free(q);
        free(e);
    }
    assert_non_null(strstr(data, "\"title\":\"T \\u003c/title\\u003e\\u003cscript\\u003ealert(2)"));
    free(data);
    free(page);
    js_profile_free(&p);
}

/* The exact encoding: names sorted, children sorted, duplicate stacks merged, empty stacks in the total. */
static void test_tree_encoding(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    add(&p, JS_FT_JIT, 200, 6, "root", "app.M", "app.D", "app.H", "app.D", "app.A");
    add(&p, JS_FT_JIT, 300, 4, "root", "app.M", "app.D", "app.B");
    add(&p, JS_FT_JIT, 400, 4, "root", "app.M", "app.D", "app.A");
    add(&p, JS_FT_JIT, 100, 4, "root", "app.M", "app.D", "app.C");
    add(&p, JS_FT_JIT, 5, 4, "root", "app.M", "app.D", "app.B"); /* same stack again: merged */
    uint32_t none = 0;
    int empty_kept = js_profile_add(&p, &none, 0, 7) == 0; /* an empty stack counts in the total only */
    char *page = page_of(&p, 1), *d = data_of(page), *fd = flat(d);
    assert_true(json_valid(d));
    assert_non_null(strstr(fd, empty_kept ? "\"unit\":\"samples\",\"reverse\":1,\"total\":1012,"
                                          : "\"unit\":\"samples\",\"reverse\":1,\"total\":1005,"));
    assert_non_null(strstr(fd, "\"names\":[\"app.A\",\"app.B\",\"app.C\",\"app.D\",\"app.H\",\"app.M\",\"root\"]"));
    assert_non_null(strstr(fd, "\"types\":\"1111111\""));
    /* root, M, D, {A 400, B 305, C 100, H, {D, {A 200}}} as (name, levels up, self). */
    const char *nodes = "\"nodes\":[6,0,0,5,0,0,3,0,0,0,0,400,1,1,305,2,1,100,4,1,0,3,0,0,0,0,200]}";
    if (!strstr(fd, nodes)) print_error("data: %s\n", fd);
    assert_non_null(strstr(fd, nodes));
    free(fd);
    free(d);
    free(page);
    js_profile_free(&p);

    /* One name with two frame types: two frames, ordered by type, two sibling nodes. */
    js_profile_init(&p);
    add(&p, JS_FT_INLINED, 3, 1, "X.m");
    add(&p, JS_FT_JIT, 4, 1, "X.m");
    uint32_t two[2] = {js_profile_frame(&p, "X.m", JS_FT_JIT), js_profile_frame(&p, "sys_read", JS_FT_KERNEL)};
    assert_int_equal(js_profile_add(&p, two, 2, 1), 0);
    page = page_of(&p, 0);
    d = data_of(page);
    fd = flat(d);
    assert_non_null(strstr(fd, "\"reverse\":0,\"total\":8,"));
    assert_non_null(strstr(fd, "\"names\":[\"X.m\",\"X.m\",\"sys_read\"],\"types\":\"125\""));
    assert_non_null(strstr(fd, "\"nodes\":[0,0,4,2,0,1,1,2,3]}"));
    free(fd);
    free(d);
    free(page);
    js_profile_free(&p);
}

/* Empty title and unit give the defaults; an empty profile is still a valid page. */
static void test_defaults_and_empty(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    p.title[0] = 0;
    p.unit[0] = 0;
    char *page = page_of(&p, 0), *d = data_of(page);
    assert_non_null(strstr(page, "<title>jsampler flame graph</title>"));
    assert_true(json_valid(d));
    char *fd = flat(d);
    assert_non_null(strstr(fd, "\"title\":\"jsampler flame graph\",\"unit\":\"samples\",\"reverse\":0,\"total\":0,"));
    assert_non_null(strstr(fd, "\"names\":[],\"types\":\"\",\"nodes\":[]}"));
    free(fd);
    free(d);
    free(page);

    snprintf(p.unit, sizeof p.unit, "bytes");
    add(&p, JS_FT_CPP, 42, 1, "malloc");
    page = page_of(&p, 0);
    assert_non_null(strstr(page, "\"unit\":\"bytes\""));
    free(page);
    js_profile_free(&p);
}

/* 100k distinct frames and a 10,000-deep stack: valid JSON, every node present, no raw '<'. */
static void test_large(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    char name[64];
    uint32_t fr[3];
    fr[0] = js_profile_frame(&p, "Main.main", JS_FT_JIT);
    for (int i = 0; i < 100000; i++) {
        snprintf(name, sizeof name, "pkg.C%d.run", i % 1000);
        fr[1] = js_profile_frame(&p, name, JS_FT_JIT);
        snprintf(name, sizeof name, "leaf.L%d.work<%d>", i, i);
        fr[2] = js_profile_frame(&p, name, JS_FT_INTERPRETED);
        assert_int_equal(js_profile_add(&p, fr, 3, 1 + (uint64_t)(i % 7)), 0);
    }
    enum { DEEP = 10000 };
    uint32_t *deep = malloc(DEEP * sizeof *deep);
    for (int i = 0; i < DEEP; i++) deep[i] = js_profile_frame(&p, i % 2 ? "Rec.a" : "Rec.b", JS_FT_JIT);
    assert_int_equal(js_profile_add(&p, deep, DEEP, 1000), 0);
    free(deep);

    char *page = page_of(&p, 0), *d = data_of(page);
    assert_true(json_valid(d));
    assert_null(strchr(d, '<'));
    assert_non_null(strstr(d, "\"leaf.L99999.work\\u003c99999\\u003e\""));
    /* nodes: Main.main, 1000 parents, 100,000 leaves, 10,000 deep: 3 numbers each */
    const char *n = strstr(d, "\"nodes\":[");
    assert_non_null(n);
    int commas = 0;
    for (const char *c = n; *c; c++) commas += *c == ',';
    assert_int_equal(commas + 1, 3 * (1 + 1000 + 100000 + DEEP));
    free(d);
    free(page);
    js_profile_free(&p);
}

/* A failing stream gives -1 and one line in err. */
static void test_write_errors(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    add(&p, JS_FT_JIT, 1, 2, "a", "b");
    char err[256];

    FILE *ro = fopen("/dev/null", "r"); /* a read-only stream: every write fails */
    assert_non_null(ro);
    memset(err, 0, sizeof err);
    assert_int_equal(js_write_html(ro, &p, 0, err, sizeof err), -1);
    assert_true(err[0] != 0);
    assert_null(strchr(err, '\n'));
    fclose(ro);

    FILE *full = fopen("/dev/full", "w");
    if (full) {
        memset(err, 0, sizeof err);
        assert_int_equal(js_write_html(full, &p, 0, err, sizeof err), -1);
        assert_true(err[0] != 0);
        assert_null(strchr(err, '\n'));
        fclose(full);
    }
    memset(err, 0, sizeof err);
    assert_int_equal(js_write_html(NULL, &p, 0, err, sizeof err), -1);
    assert_true(err[0] != 0);
    js_profile_free(&p);
}


/* The frames block async-profiler's converter reads: its names, one per distinct name, and the tree in preorder with
 * each node's total, key = name index << 3 | type. */
static void test_frames_block(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    add(&p, JS_FT_JIT, 7, 2, "a/Main.main", "b/B.run");
    add(&p, JS_FT_JIT, 5, 3, "a/Main.main", "it's", "k");
    add(&p, JS_FT_KERNEL, 2, 3, "a/Main.main", "it's", "k");
    add(&p, JS_FT_THREAD, 1, 1, "[t tid=1]");
    char *page = page_of(&p, 0);
    const char *b = strstr(page, "<script id=\"fg-frames\" type=\"text/plain\">\n");
    assert_non_null(b);
    assert_string_equal(strstr(b, "const cpool"),
                        "const cpool = [\n'all',\n' [t tid=1]',\n' a/Main.main',\n' b/B.run',\n' it\\'s',\n' k',\n];\n\n"
                        /* the thread root as native (3); a/Main.main JIT (2 << 3 | 1) and, a node of its own,
                         * kernel (2 << 3 | 5) */
                        "f(0,0,0,15)\nf(11,1,0,1)\nf(17,1,0,12)\nf(25,2,0,7)\nf(33,2,0,5)\nf(41,3,0,5)\n"
                        "f(21,1,0,2)\nf(37,2,0,2)\nf(45,3,0,2)\n\n"
                        "</script>\n</body>\n</html>\n");
    free(page);
    js_profile_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape_table),
        cmocka_unit_test(test_page_well_formed),
        cmocka_unit_test(test_tree_encoding),
        cmocka_unit_test(test_defaults_and_empty),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_frames_block),
    };
    return cmocka_run_group_tests_name("html", tests, NULL, NULL);
}

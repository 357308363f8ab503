/* collapsed_read.c - see collapsed_read.h. */
#include "output/collapsed_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WEIGHT_SHOWN 32 /* bytes of a bad weight quoted in the error */

typedef struct {
    uint32_t *v;
    size_t n, cap;
} id_buf;

static const struct {
    char tag;
    js_frame_type type;
} suffixes[] = {
    {'j', JS_FT_JIT}, {'i', JS_FT_INLINED}, {'k', JS_FT_KERNEL}, {'0', JS_FT_INTERPRETED}, {'1', JS_FT_C1},
};

/* 1 if name (len bytes, in brackets) ends like a thread root: "...[ or space]tid=DIGITS]". */
static int thread_root(const char *name, size_t len)
{
    size_t i = len - 1;
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') i--;
    return i < len - 1 && i >= 5 && memcmp(name + i - 4, "tid=", 4) == 0 && (name[i - 5] == '[' || name[i - 5] == ' ');
}

/* See collapsed_read.h: suffix, then brackets, then the Java-method look. */
js_frame_type js_collapsed_frame_type(char *name, int first)
{
    size_t len = strlen(name);
    if (len >= 4 && name[len - 4] == '_' && name[len - 3] == '[' && name[len - 1] == ']') {
        for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
            if (name[len - 2] != suffixes[i].tag) continue;
            name[len - 4] = 0;
            return suffixes[i].type;
        }
    }
    if (len >= 2 && name[0] == '[' && name[len - 1] == ']') return first && thread_root(name, len) ? JS_FT_THREAD : JS_FT_ERROR;
    if (strchr(name, '.') && !strstr(name, "::")) return JS_FT_JIT;
    return JS_FT_NATIVE;
}

enum { LINE_OK = 0, LINE_EOF, LINE_TOO_LONG, LINE_NUL, LINE_NOMEM };

#define LINE_FIRST_CAP 4096 /* a line buffer's first size: it doubles up to JS_COLLAPSED_LINE_MAX as lines need */

/* A line buffer: grown as lines need, never past JS_COLLAPSED_LINE_MAX + 1 bytes. */
typedef struct {
    char *b;
    size_t cap;
} line_buf;

/* Reads one line (without '\n') into lb, NUL-terminated, length in *len. */
static int read_line(FILE *f, line_buf *lb, size_t *len)
{
    size_t n = 0;
    int c;
    while ((c = getc_unlocked(f)) != EOF && c != '\n') {
        if (c == 0) return LINE_NUL;
        if (n == JS_COLLAPSED_LINE_MAX) return LINE_TOO_LONG;
        if (n + 1 >= lb->cap) {
            size_t cap = lb->cap * 2 > JS_COLLAPSED_LINE_MAX + 1 ? JS_COLLAPSED_LINE_MAX + 1 : lb->cap * 2;
            char *b = realloc(lb->b, cap);
            if (!b) return LINE_NOMEM;
            lb->b = b, lb->cap = cap;
        }
        lb->b[n++] = (char)c;
    }
    lb->b[n] = 0;
    *len = n;
    return c == EOF && n == 0 ? LINE_EOF : LINE_OK;
}

/* Parses s as an unsigned decimal that fits in 64 bits; 0 or -1. */
static int parse_weight(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s) return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* Appends id to b, growing it by doubling; 0 or -1. */
static int push_id(id_buf *b, uint32_t id)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        uint32_t *v = realloc(b->v, cap * sizeof *v);
        if (!v) return -1;
        b->v = v;
        b->cap = cap;
    }
    b->v[b->n++] = id;
    return 0;
}

/* Parses one line (modified in place) and adds its stack to p; 0, 1 for a blank line, or -1 with why. */
static int parse_line(char *line, size_t len, js_profile *p, id_buf *ids, char *why, size_t whylen)
{
    if (len && line[len - 1] == '\r') line[--len] = 0;
    if (strspn(line, " \t") == len) return 1;
    char *sp = strrchr(line, ' '), *tab = strrchr(line, '\t');
    if (!sp || (tab && tab > sp)) sp = tab;
    if (!sp) {
        snprintf(why, whylen, "no weight (expected 'frame;frame;... weight')");
        return -1;
    }
    *sp = 0;
    uint64_t w;
    if (parse_weight(sp + 1, &w) != 0) {
        snprintf(why, whylen, "weight '%.*s' is not a non-negative integer", MAX_WEIGHT_SHOWN, sp + 1);
        return -1;
    }
    if (sp == line) {
        snprintf(why, whylen, "no frames before the weight");
        return -1;
    }
    ids->n = 0;
    for (char *fr = line;;) {
        char *semi = strchr(fr, ';');
        if (semi) *semi = 0;
        js_frame_type t = js_collapsed_frame_type(fr, ids->n == 0);
        uint32_t id = js_profile_frame(p, fr, t);
        if (id == UINT32_MAX || push_id(ids, id) != 0) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        if (!semi) break;
        fr = semi + 1;
    }
    if (js_profile_add(p, ids->v, (uint32_t)ids->n, w) != 0) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    return 0;
}

/* See collapsed_read.h. */
int js_collapsed_read(FILE *f, const char *name, js_profile *p, char *err, size_t errlen)
{
    if (!name) name = "input";
    if (!f || !p) {
        snprintf(err, errlen, "%s: no input file or profile", name);
        return -1;
    }
    line_buf lb = {malloc(LINE_FIRST_CAP), LINE_FIRST_CAP};
    id_buf ids = {NULL, 0, 0};
    char why[256] = "";
    size_t lineno = 0, len = 0;
    int rc = 0;
    if (!lb.b) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    errno = 0;
    for (;;) {
        int r = read_line(f, &lb, &len);
        if (r == LINE_EOF || ferror(f)) break;
        lineno++;
        if (r == LINE_TOO_LONG) {
            snprintf(why, sizeof why, "line longer than %d bytes", JS_COLLAPSED_LINE_MAX);
            rc = -1;
        } else if (r == LINE_NUL) {
            snprintf(why, sizeof why, "NUL byte in line");
            rc = -1;
        } else if (r == LINE_NOMEM) {
            snprintf(why, sizeof why, "out of memory for a line");
            rc = -1;
        } else if (parse_line(lb.b, len, p, &ids, why, sizeof why) < 0) {
            rc = -1;
        }
        if (rc != 0) {
            snprintf(err, errlen, "%s:%zu: %s", name, lineno, why);
            break;
        }
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: read error: %s", name, errno ? strerror(errno) : "I/O error");
        rc = -1;
    }
    free(lb.b);
    free(ids.v);
    return rc;
}

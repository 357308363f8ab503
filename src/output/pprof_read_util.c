/* pprof_read_util.c - what the pprof reader's steps share (pprof_read_int.h): its one-line error, the growth of its
 * tables within their caps, and its string table. */
#include "pprof_read_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int js_pprofr_fail(js_pprofr *r, uint64_t off, const char *fmt, ...)
{
    if (r->err && r->errlen) {
        int n = snprintf(r->err, r->errlen, "%s: offset %llu: ", r->name, (unsigned long long)off);
        if (n >= 0 && (size_t)n < r->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
        for (char *c = r->err; *c; c++) /* names from the input stay on the one line */
            if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    }
    return -1;
}

int js_pprofr_grow(js_pprofr *r, void **arr, size_t n, size_t *cap, size_t sz, size_t max, const char *what)
{
    if (n < *cap) return 0;
    if (n >= max) return js_pprofr_fail(r, r->base + r->pos, "more than %zu %s", max, what);
    size_t c = *cap ? *cap * 2 : 64;
    if (c > max) c = max;
    void *a = realloc(*arr, c * sz);
    if (!a) return js_pprofr_fail(r, r->base + r->pos, "out of memory for %zu %s", c, what);
    *arr = a;
    *cap = c;
    return 0;
}

const char *js_pprofr_string(const js_pprofr *r, int64_t i, size_t *len)
{
    if (i < 0 || (uint64_t)i >= r->nstr) return NULL;
    uint64_t end = (uint64_t)i + 1 < r->nstr ? r->str_off[i + 1] : r->nstrbytes;
    *len = (size_t)(end - r->str_off[i]);
    return r->strbytes ? r->strbytes + r->str_off[i] : ""; /* only empty strings so far: no bytes kept */
}

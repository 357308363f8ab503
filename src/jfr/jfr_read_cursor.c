/* jfr_read_cursor.c - the JFR reader's low layer: a bounded cursor over the input through a read window,
 * LEB128 varints, raw bytes, counts, and strings in encodings 0-5 (kept in an arena, or skipped).
 *
 * Every read is checked against the end of the current record; every count is checked against the bytes
 * left before anything is done with it. An error is one line naming its byte offset (js_jfrr_fail).
 */
#include "jfr_read_int.h"

#include <errno.h>
#include <sanitizer/asan_interface.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_MAX (1u << 30) /* bytes of kept strings per chunk */

/* ---- cursor ------------------------------------------------------------------------------------------ */

/* Writes "NAME: offset OFF: what" into c->err (first error only; control characters become '?'); returns -1. */
int js_jfrr_fail(js_jfrr_cur *c, uint64_t off, const char *fmt, ...)
{
    if (c->err && c->errlen && !c->err[0]) {
        char what[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        for (char *w = what; *w; w++) /* names from the file must not break the one-line message */
            if ((unsigned char)*w < 0x20 || *w == 0x7f) *w = '?';
        snprintf(c->err, c->errlen, "%s: offset %llu: %s", c->name, (unsigned long long)off, what);
    }
    return -1;
}

/* Makes [pos, pos + n) available in the window (n <= c->wcap, pos + n <= end); 0 or -1. */
static int cur_fill(js_jfrr_cur *c, size_t n)
{
    if (c->pos >= c->wstart && c->pos - c->wstart + n <= c->wlen) return 0;
    uint64_t avail = c->fsize - c->pos;
    size_t want = avail < c->wcap ? (size_t)avail : c->wcap;
    if (want < n) return js_jfrr_fail(c, c->pos, "unexpected end of file");
    errno = 0;
    if (c->read_at(c->ctx, c->pos, c->win, want) != 0) {
        c->wlen = 0;
        return js_jfrr_fail(c, c->pos, "read error: %s", errno ? strerror(errno) : "short read");
    }
    c->wstart = c->pos;
    c->wlen = want;
    return 0;
}

/* Reads one varint (up to 9 bytes, the 9th carrying 8 bits) at the cursor; 0 or -1. */
int js_jfrr_varint(js_jfrr_cur *c, uint64_t *v)
{
    uint64_t left = c->end > c->pos ? c->end - c->pos : 0;
    size_t n = left < 9 ? (size_t)left : 9;
    if (n == 0) return js_jfrr_fail(c, c->pos, "record ends inside a value");
    if (cur_fill(c, n) != 0) return -1;
    const uint8_t *p = c->win + (c->pos - c->wstart);
    uint64_t r = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 8) {
            r |= (uint64_t)p[8] << 56;
            c->pos += 9;
            *v = r;
            return 0;
        }
        r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            c->pos += i + 1;
            *v = r;
            return 0;
        }
    }
    return js_jfrr_fail(c, c->pos, "value runs past the end of the record");
}

/* Reads one raw byte; 0 or -1. */
int js_jfrr_u8(js_jfrr_cur *c, uint8_t *v)
{
    if (c->pos >= c->end) return js_jfrr_fail(c, c->pos, "record ends inside a value");
    if (cur_fill(c, 1) != 0) return -1;
    *v = c->win[c->pos - c->wstart];
    c->pos++;
    return 0;
}

/* Skips n bytes inside the record; 0 or -1. */
int js_jfrr_skip(js_jfrr_cur *c, uint64_t n)
{
    if (n > c->end - c->pos) return js_jfrr_fail(c, c->pos, "value runs past the end of the record");
    c->pos += n;
    return 0;
}

/* Copies n bytes (n <= bytes left in the record) to dst through the window; 0 or -1. */
static int cur_take(js_jfrr_cur *c, uint8_t *dst, size_t n)
{
    while (n) {
        size_t part = n < c->wcap ? n : c->wcap;
        if (cur_fill(c, part) != 0) return -1;
        memcpy(dst, c->win + (c->pos - c->wstart), part);
        c->pos += part;
        dst += part;
        n -= part;
    }
    return 0;
}

/* Reads a count and rejects one larger than the bytes left in the record; 0 or -1. */
int js_jfrr_count(js_jfrr_cur *c, uint64_t *n, const char *what)
{
    uint64_t at = c->pos;
    if (js_jfrr_varint(c, n) != 0) return -1;
    if (*n > c->end - c->pos)
        return js_jfrr_fail(c, at, "%s count %llu is larger than the %llu bytes left", what, (unsigned long long)*n,
                            (unsigned long long)(c->end - c->pos));
    return 0;
}

/* ---- strings ----------------------------------------------------------------------------------------- */

/* Makes room for n more bytes in a; 0 or -1 (no memory, or over ARENA_MAX). Under AddressSanitizer the bytes past
 * that room are poisoned until the next call, so a string written past what was asked for is caught however much
 * spare room the doubling left (the arena is freed by free(), which does not mind the poisoned tail). */
static int arena_room(js_jfrr_arena *a, size_t n)
{
    if (a->buf) ASAN_UNPOISON_MEMORY_REGION(a->buf + a->len, a->cap - a->len);
    if (a->len + n > a->cap) {
        if (a->len + n > ARENA_MAX) return -1;
        size_t cap = a->cap ? a->cap : 4096;
        while (cap < a->len + n) cap *= 2;
        char *b = realloc(a->buf, cap);
        if (!b) return -1;
        a->buf = b;
        a->cap = cap;
    }
    ASAN_POISON_MEMORY_REGION(a->buf + a->len + n, a->cap - a->len - n);
    return 0;
}

/* Appends code point u as UTF-8 at dst (room for 4 bytes); the byte count. NUL becomes '?'. */
static size_t put_utf8(char *dst, uint32_t u)
{
    if (u == 0) u = '?';
    if (u < 0x80) {
        dst[0] = (char)u;
        return 1;
    }
    if (u < 0x800) {
        dst[0] = (char)(0xc0 | (u >> 6));
        dst[1] = (char)(0x80 | (u & 0x3f));
        return 2;
    }
    if (u < 0x10000) {
        dst[0] = (char)(0xe0 | (u >> 12));
        dst[1] = (char)(0x80 | ((u >> 6) & 0x3f));
        dst[2] = (char)(0x80 | (u & 0x3f));
        return 3;
    }
    dst[0] = (char)(0xf0 | (u >> 18));
    dst[1] = (char)(0x80 | ((u >> 12) & 0x3f));
    dst[2] = (char)(0x80 | ((u >> 6) & 0x3f));
    dst[3] = (char)(0x80 | (u & 0x3f));
    return 4;
}

/* Bytes (encoding 3 UTF-8, or 5 Latin-1) of length n into the arena at *len: at most JS_JFRR_NAME_MAX bytes of
 * UTF-8 are kept (a Latin-1 byte >= 0x80 becomes two), cut on a character boundary. */
static int string_bytes(js_jfrr_cur *c, js_jfrr_arena *a, uint64_t n, int latin1, size_t *len)
{
    size_t keep = n < JS_JFRR_NAME_MAX ? (size_t)n : JS_JFRR_NAME_MAX;
    uint8_t tmp[JS_JFRR_NAME_MAX];
    if (cur_take(c, tmp, keep) != 0 || js_jfrr_skip(c, n - keep) != 0) return -1;
    char *dst = a->buf + a->len;
    size_t o = 0;
    for (size_t i = 0; i < keep; i++) {
        int wide = latin1 && tmp[i] >= 0x80;
        if (o + (wide ? 2 : 1) > JS_JFRR_NAME_MAX) break; /* every byte written is counted against the cap */
        if (wide) o += put_utf8(dst + o, tmp[i]);
        else dst[o++] = tmp[i] ? (char)tmp[i] : '?';
    }
    if (!latin1 && keep < n) /* cut inside a character: drop its leading bytes */
        for (size_t back = 0; back < 3 && o > 0 && ((uint8_t)dst[o - 1] & 0xc0) == 0x80; back++) o--;
    if (!latin1 && keep < n && o > 0 && (uint8_t)dst[o - 1] >= 0xc0) o--;
    *len = o;
    return 0;
}

/* UTF-16 units (encoding 4, one varint each) into the arena; unpaired surrogates become U+FFFD. */
static int string_chars(js_jfrr_cur *c, js_jfrr_arena *a, uint64_t n, size_t *len)
{
    char *dst = a ? a->buf + a->len : NULL;
    size_t o = 0;
    uint32_t hi = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v;
        if (js_jfrr_varint(c, &v) != 0) return -1;
        if (!dst) continue;
        uint32_t u = (uint32_t)(v & 0xffff), cp;
        if (hi && u >= 0xdc00 && u <= 0xdfff) {
            cp = 0x10000 + ((hi - 0xd800) << 10) + (u - 0xdc00);
            hi = 0;
        } else {
            if (hi && o + 4 <= JS_JFRR_NAME_MAX) o += put_utf8(dst + o, 0xfffd);
            hi = 0;
            if (u >= 0xd800 && u <= 0xdbff) {
                hi = u;
                continue;
            }
            cp = (u >= 0xdc00 && u <= 0xdfff) ? 0xfffd : u;
        }
        if (o + 4 <= JS_JFRR_NAME_MAX) o += put_utf8(dst + o, cp);
    }
    if (dst && hi && o + 4 <= JS_JFRR_NAME_MAX) o += put_utf8(dst + o, 0xfffd);
    *len = o;
    return 0;
}

/* Reads a string in any encoding 0-5; kept in a when a and out are both non-NULL; 0 or -1. */
int js_jfrr_string(js_jfrr_cur *c, js_jfrr_arena *a, js_jfrr_str *out)
{
    uint64_t at = c->pos, n;
    uint8_t enc;
    if (!out) a = NULL;
    if (out) memset(out, 0, sizeof *out);
    if (js_jfrr_u8(c, &enc) != 0) return -1;
    if (enc == 0) return 0;
    if (enc == 2) {
        if (js_jfrr_varint(c, &n) != 0) return -1;
        if (out) {
            out->kind = JS_JFRR_S_REF;
            out->key = n;
        }
        return 0;
    }
    if (enc > 5) return js_jfrr_fail(c, at, "unknown string encoding %u", enc);
    if (enc != 1 && js_jfrr_count(c, &n, "string length") != 0) return -1;
    if (a && arena_room(a, JS_JFRR_NAME_MAX + 1) != 0) return js_jfrr_fail(c, at, "out of memory for strings");
    size_t len = 0;
    int rc = 0;
    if (enc == 4) rc = string_chars(c, a, n, &len);
    else if (enc != 1 && a) rc = string_bytes(c, a, n, enc == 5, &len);
    else if (enc != 1) rc = js_jfrr_skip(c, n);
    if (rc != 0 || !a) return rc;
    out->kind = JS_JFRR_S_TEXT;
    out->off = (uint32_t)a->len;
    out->len = (uint32_t)len;
    a->buf[a->len + len] = 0;
    a->len += len + 1;
    return 0;
}

/* Text of a kept string; "" for null, references and unkept ones. */
const char *js_jfrr_text(const js_jfrr_arena *a, const js_jfrr_str *s)
{
    if (!s || s->kind != JS_JFRR_S_TEXT || !a->buf || s->off >= a->len) return "";
    return a->buf + s->off;
}

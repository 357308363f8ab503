/* jfr_meta_read.c - the JFR reader's low layer (see jfr_read.h, internal section): a bounded cursor over the
 * input, LEB128 varints, strings in encodings 0-5, the metadata event (classes and fields, by name), and the
 * generic decoder every pool entry and event goes through.
 *
 * Every read is checked against the end of the current record; every count is checked against the bytes
 * left before anything is done with it; recursion (metadata elements, structs inside structs) is capped at
 * JS_JFRR_MAX_DEPTH. A value always consumes at least one byte (a field-less type that is not a primitive
 * is an error), so decoding time is linear in the bytes read.
 */
#define JS_JFR_READ_INTERNAL
#include "jfr_read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARENA_MAX (1u << 30) /* bytes of kept strings per chunk */
#define NO_STR UINT32_MAX
#define NONE UINT32_MAX

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

/* Makes room for n more bytes in a; 0 or -1 (no memory, or over ARENA_MAX). */
static int arena_room(js_jfrr_arena *a, size_t n)
{
    if (a->len + n <= a->cap) return 0;
    if (a->len + n > ARENA_MAX) return -1;
    size_t cap = a->cap ? a->cap : 4096;
    while (cap < a->len + n) cap *= 2;
    char *b = realloc(a->buf, cap);
    if (!b) return -1;
    a->buf = b;
    a->cap = cap;
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

/* Bytes (encoding 3 UTF-8, or 5 Latin-1) of length n into the arena at *len, at most JS_JFRR_NAME_MAX kept. */
static int string_bytes(js_jfrr_cur *c, js_jfrr_arena *a, uint64_t n, int latin1, size_t *len)
{
    size_t keep = n < JS_JFRR_NAME_MAX ? (size_t)n : JS_JFRR_NAME_MAX;
    uint8_t tmp[JS_JFRR_NAME_MAX];
    if (cur_take(c, tmp, keep) != 0 || js_jfrr_skip(c, n - keep) != 0) return -1;
    char *dst = a->buf + a->len;
    size_t o = 0;
    for (size_t i = 0; i < keep; i++) {
        if (latin1 && tmp[i] >= 0x80) {
            if (o + 2 > JS_JFRR_NAME_MAX) break;
            o += put_utf8(dst + o, tmp[i]);
        } else {
            dst[o++] = tmp[i] ? (char)tmp[i] : '?';
        }
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

/* ---- metadata ---------------------------------------------------------------------------------------- */

/* Text of metadata string index i ("" when out of range or null). */
const char *js_jfrr_meta_str(const js_jfrr_meta *m, uint32_t i)
{
    if (i >= m->nstr || m->str[i] == NO_STR) return "";
    return m->text.buf + m->str[i];
}

/* Releases m's memory and empties it. */
void js_jfrr_meta_free(js_jfrr_meta *m)
{
    free(m->text.buf);
    free(m->str);
    free(m->classes);
    free(m->fields);
    memset(m, 0, sizeof *m);
}

/* Reads the string table: count, then strings (no pool references: there is no pool yet); 0 or -1. */
static int meta_strings(js_jfrr_cur *c, js_jfrr_meta *m)
{
    uint64_t n;
    if (js_jfrr_count(c, &n, "metadata string") != 0) return -1;
    m->str = malloc((n ? n : 1) * sizeof *m->str);
    if (!m->str) return js_jfrr_fail(c, c->pos, "out of memory for metadata strings");
    for (uint64_t i = 0; i < n; i++) {
        uint64_t at = c->pos;
        js_jfrr_str s;
        if (js_jfrr_string(c, &m->text, &s) != 0) return -1;
        if (s.kind == JS_JFRR_S_REF) return js_jfrr_fail(c, at, "metadata string is a constant-pool reference");
        m->str[i] = s.kind == JS_JFRR_S_TEXT ? s.off : NO_STR;
        m->nstr = (uint32_t)(i + 1);
    }
    return 0;
}

/* Parses a decimal attribute value into *v; 0 or -1. */
static int meta_number(js_jfrr_cur *c, uint64_t at, const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-')
        return js_jfrr_fail(c, at, "metadata attribute value '%.40s' is not a number", s);
    *v = x;
    return 0;
}

/* Grows an array of elem-sized items to hold n + 1; 0 or -1. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    void *p = realloc(*arr, nc * elem);
    if (!p) return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

enum { EL_OTHER, EL_ROOT, EL_METADATA, EL_CLASS, EL_FIELD };

/* Applies one attribute (key, value string indexes) to the class or field element being read. */
static int meta_attr(js_jfrr_cur *c, js_jfrr_meta *m, int kind, uint64_t at, uint32_t k, uint32_t v)
{
    const char *key = js_jfrr_meta_str(m, k), *val = js_jfrr_meta_str(m, v);
    if (kind == EL_CLASS) {
        js_jfrr_class *cl = &m->classes[m->nclasses - 1];
        if (strcmp(key, "name") == 0) cl->name = v;
        else if (strcmp(key, "superType") == 0) cl->super = v;
        else if (strcmp(key, "id") == 0) return meta_number(c, at, val, &cl->id);
    } else if (kind == EL_FIELD) {
        js_jfrr_field *f = &m->fields[m->nfields - 1];
        if (strcmp(key, "name") == 0) f->name = v;
        else if (strcmp(key, "class") == 0) return meta_number(c, at, val, &f->type);
        else if (strcmp(key, "constantPool") == 0) f->cp = 1;
        else if (strcmp(key, "dimension") == 0) {
            uint64_t d;
            if (meta_number(c, at, val, &d) != 0) return -1;
            if (d > 1) return js_jfrr_fail(c, at, "field dimension %llu is not supported", (unsigned long long)d);
            f->array = (uint8_t)d;
        }
    }
    return 0;
}

/* Starts a class or field record for an element of that kind; 0 or -1 without memory. */
static int meta_open(js_jfrr_cur *c, js_jfrr_meta *m, int kind)
{
    if (kind == EL_CLASS) {
        if (grow((void **)&m->classes, &m->cap_classes, m->nclasses, sizeof *m->classes) != 0)
            return js_jfrr_fail(c, c->pos, "out of memory for metadata classes");
        js_jfrr_class *cl = &m->classes[m->nclasses++];
        memset(cl, 0, sizeof *cl);
        cl->name = cl->super = NO_STR;
        cl->first = (uint32_t)m->nfields;
    } else if (kind == EL_FIELD) {
        if (grow((void **)&m->fields, &m->cap_fields, m->nfields, sizeof *m->fields) != 0)
            return js_jfrr_fail(c, c->pos, "out of memory for metadata fields");
        js_jfrr_field *f = &m->fields[m->nfields++];
        memset(f, 0, sizeof *f);
        f->name = NO_STR;
        f->cls = -1;
        m->classes[m->nclasses - 1].nfields++;
    }
    return 0;
}

/* Kind of a non-root element named name whose parent is of kind parent. */
static int element_kind(const char *name, int parent)
{
    if (parent == EL_ROOT && strcmp(name, "metadata") == 0) return EL_METADATA;
    if (parent == EL_METADATA && strcmp(name, "class") == 0) return EL_CLASS;
    if (parent == EL_CLASS && strcmp(name, "field") == 0) return EL_FIELD;
    return EL_OTHER;
}

/* Reads one element (name, attributes, children) at nesting depth; 0 or -1. */
static int meta_element(js_jfrr_cur *c, js_jfrr_meta *m, int parent, int depth)
{
    uint64_t at = c->pos, name, nattr, nchild;
    if (depth > JS_JFRR_MAX_DEPTH) return js_jfrr_fail(c, at, "metadata element nesting too deep");
    if (js_jfrr_varint(c, &name) != 0) return -1;
    if (name >= m->nstr) return js_jfrr_fail(c, at, "metadata element name index %llu is out of range",
                                             (unsigned long long)name);
    int kind = depth == 0 ? EL_ROOT : element_kind(js_jfrr_meta_str(m, (uint32_t)name), parent);
    if (meta_open(c, m, kind) != 0 || js_jfrr_count(c, &nattr, "metadata attribute") != 0) return -1;
    for (uint64_t i = 0; i < nattr; i++) {
        uint64_t aat = c->pos, k, v;
        if (js_jfrr_varint(c, &k) != 0 || js_jfrr_varint(c, &v) != 0) return -1;
        if (k >= m->nstr || v >= m->nstr)
            return js_jfrr_fail(c, aat, "metadata attribute string index is out of range");
        if (meta_attr(c, m, kind, aat, (uint32_t)k, (uint32_t)v) != 0) return -1;
    }
    if (js_jfrr_count(c, &nchild, "metadata element") != 0) return -1;
    for (uint64_t i = 0; i < nchild; i++)
        if (meta_element(c, m, kind, depth + 1) != 0) return -1;
    return 0;
}

/* qsort order of classes by id. */
static int class_order(const void *a, const void *b)
{
    uint64_t x = ((const js_jfrr_class *)a)->id, y = ((const js_jfrr_class *)b)->id;
    return (x > y) - (x < y);
}

/* Primitive kind of a class named name. */
static uint8_t prim_of(const char *name)
{
    static const struct {
        const char *name;
        uint8_t prim;
    } prims[] = {
        {"boolean", JS_JFRR_P_BYTE}, {"byte", JS_JFRR_P_BYTE},   {"char", JS_JFRR_P_VARINT},
        {"short", JS_JFRR_P_VARINT}, {"int", JS_JFRR_P_VARINT},  {"long", JS_JFRR_P_VARINT},
        {"float", JS_JFRR_P_F32},    {"double", JS_JFRR_P_F64},  {"java.lang.String", JS_JFRR_P_STRING},
    };
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
        if (strcmp(name, prims[i].name) == 0) return prims[i].prim;
    return JS_JFRR_P_NONE;
}

/* Index of the class with id (classes sorted by id), or -1. */
int32_t js_jfrr_meta_class_id(const js_jfrr_meta *m, uint64_t id)
{
    size_t lo = 0, hi = m->nclasses;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->classes[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < m->nclasses && m->classes[lo].id == id ? (int32_t)lo : -1;
}

/* Parses the metadata payload at the cursor (after size and type): startTicks, duration, id, strings, root. */
int js_jfrr_meta_parse(js_jfrr_cur *c, js_jfrr_meta *m)
{
    uint64_t v;
    memset(m, 0, sizeof *m);
    for (int i = 0; i < 3; i++) /* startTicks, duration, metadataId */
        if (js_jfrr_varint(c, &v) != 0) return -1;
    if (meta_strings(c, m) != 0 || meta_element(c, m, EL_OTHER, 0) != 0) return -1;
    if (m->nclasses > INT32_MAX) return js_jfrr_fail(c, c->pos, "too many metadata classes");
    if (m->nclasses) qsort(m->classes, m->nclasses, sizeof *m->classes, class_order);
    for (size_t i = 0; i < m->nclasses; i++) m->classes[i].prim = prim_of(js_jfrr_meta_str(m, m->classes[i].name));
    for (size_t i = 0; i < m->nfields; i++) m->fields[i].cls = js_jfrr_meta_class_id(m, m->fields[i].type);
    return 0;
}

/* Index of the class named name, or -1. */
int32_t js_jfrr_meta_class(const js_jfrr_meta *m, const char *name)
{
    for (size_t i = 0; i < m->nclasses; i++)
        if (strcmp(js_jfrr_meta_str(m, m->classes[i].name), name) == 0) return (int32_t)i;
    return -1;
}

/* Index within cls of its field named name, or -1 (also for cls -1). */
int32_t js_jfrr_meta_field(const js_jfrr_meta *m, int32_t cls, const char *name)
{
    if (cls < 0) return -1;
    const js_jfrr_class *k = &m->classes[cls];
    for (uint32_t i = 0; i < k->nfields; i++)
        if (strcmp(js_jfrr_meta_str(m, m->fields[k->first + i].name), name) == 0) return (int32_t)i;
    return -1;
}

/* ---- generic decoding -------------------------------------------------------------------------------- */

/* Decodes one value of class cls at nesting depth; out (may be NULL) gets a primitive's value. */
static int class_value(js_jfrr_cur *c, const js_jfrr_meta *m, int32_t cls, js_jfrr_arena *a, js_jfrr_val *out,
                       int depth)
{
    const js_jfrr_class *k = &m->classes[cls];
    uint8_t b;
    if (out) out->set = 1;
    switch (k->prim) {
    case JS_JFRR_P_BYTE:
        if (js_jfrr_u8(c, &b) != 0) return -1;
        if (out) out->u = b;
        return 0;
    case JS_JFRR_P_VARINT: return js_jfrr_varint(c, out ? &out->u : &(uint64_t){0});
    case JS_JFRR_P_F32: return js_jfrr_skip(c, 4);
    case JS_JFRR_P_F64: return js_jfrr_skip(c, 8);
    case JS_JFRR_P_STRING: return js_jfrr_string(c, a, out ? &out->s : NULL);
    default: break;
    }
    if (out) out->set = 0;
    if (k->nfields == 0)
        return js_jfrr_fail(c, c->pos, "type '%.100s' has no fields and is not a primitive",
                            js_jfrr_meta_str(m, k->name));
    if (depth >= JS_JFRR_MAX_DEPTH) return js_jfrr_fail(c, c->pos, "types nested too deep");
    for (uint32_t i = 0; i < k->nfields; i++)
        if (js_jfrr_field_value(c, m, &m->fields[k->first + i], NULL, NULL, depth + 1) != 0) return -1;
    return 0;
}

/* One element of a field: a pool key when the field is a constant-pool reference, else a value of its type. */
static int element_value(js_jfrr_cur *c, const js_jfrr_meta *m, const js_jfrr_field *f, js_jfrr_arena *a,
                         js_jfrr_val *out, int depth)
{
    if (f->cp) {
        if (out) out->set = 1;
        return js_jfrr_varint(c, out ? &out->u : &(uint64_t){0});
    }
    if (f->cls < 0)
        return js_jfrr_fail(c, c->pos, "field '%.100s' has the undeclared type id %llu", js_jfrr_meta_str(m, f->name),
                            (unsigned long long)f->type);
    return class_value(c, m, f->cls, a, out, depth);
}

/* Decodes or skips one field's value: arrays are a count then elements (never captured). */
int js_jfrr_field_value(js_jfrr_cur *c, const js_jfrr_meta *m, const js_jfrr_field *f, js_jfrr_arena *a,
                        js_jfrr_val *out, int depth)
{
    if (!f->array) return element_value(c, m, f, a, out, depth);
    uint64_t n;
    if (js_jfrr_count(c, &n, "array") != 0) return -1;
    for (uint64_t i = 0; i < n; i++)
        if (element_value(c, m, f, NULL, NULL, depth) != 0) return -1;
    return 0;
}

/* Decodes one value of class cls; top-level field i < nvals is captured into vals[i]. */
int js_jfrr_decode(js_jfrr_cur *c, const js_jfrr_meta *m, int32_t cls, js_jfrr_arena *a, js_jfrr_val *vals,
                   size_t nvals)
{
    const js_jfrr_class *k = &m->classes[cls];
    for (size_t i = 0; i < nvals; i++) vals[i].set = 0;
    if (k->prim != JS_JFRR_P_NONE || k->nfields == 0) return class_value(c, m, cls, a, nvals ? vals : NULL, 0);
    for (uint32_t i = 0; i < k->nfields; i++)
        if (js_jfrr_field_value(c, m, &m->fields[k->first + i], a, i < nvals ? &vals[i] : NULL, 1) != 0) return -1;
    return 0;
}

/* ---- keyed tables ---------------------------------------------------------------------------------- */

/* Hash slot of key in a table of cap (a power of two) slots. */
static size_t slot_of(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

/* Rebuilds the slot table of p with cap slots; 0 or -1. */
static int pool_rehash(js_jfrr_pool *p, size_t cap)
{
    uint64_t *keys = malloc(cap * sizeof *keys);
    uint32_t *idx = malloc(cap * sizeof *idx);
    if (!keys || !idx) {
        free(keys);
        free(idx);
        return -1;
    }
    memset(idx, 0xff, cap * sizeof *idx);
    for (size_t i = 0; i < p->cap; i++) {
        if (p->idx[i] == NONE) continue;
        size_t h = slot_of(p->keys[i], cap);
        while (idx[h] != NONE) h = (h + 1) & (cap - 1);
        keys[h] = p->keys[i];
        idx[h] = p->idx[i];
    }
    free(p->keys);
    free(p->idx);
    p->keys = keys;
    p->idx = idx;
    p->cap = cap;
    return 0;
}

/* Record of key, or NULL. */
void *js_jfrr_pool_get(const js_jfrr_pool *p, uint64_t key)
{
    if (!p->cap) return NULL;
    for (size_t h = slot_of(key, p->cap); p->idx[h] != NONE; h = (h + 1) & (p->cap - 1))
        if (p->keys[h] == key) return p->recs + (size_t)p->idx[h] * p->size;
    return NULL;
}

/* Record of key, created zeroed when missing (an existing one is reused); NULL without memory. */
void *js_jfrr_pool_put(js_jfrr_pool *p, uint64_t key)
{
    void *old = js_jfrr_pool_get(p, key);
    if (old) {
        memset(old, 0, p->size);
        return old;
    }
    if ((p->n + 1) * 2 > p->cap && (p->n >= NONE - 1 || pool_rehash(p, p->cap ? p->cap * 2 : 256) != 0)) return NULL;
    if (p->n == p->rcap) {
        size_t rc = p->rcap ? p->rcap * 2 : 64;
        uint8_t *r = realloc(p->recs, rc * p->size);
        if (!r) return NULL;
        p->recs = r;
        p->rcap = rc;
    }
    size_t h = slot_of(key, p->cap);
    while (p->idx[h] != NONE) h = (h + 1) & (p->cap - 1);
    p->keys[h] = key;
    p->idx[h] = (uint32_t)p->n;
    void *rec = p->recs + p->n++ * p->size;
    memset(rec, 0, p->size);
    return rec;
}

/* Frees p's memory, keeping its record size. */
void js_jfrr_pool_free(js_jfrr_pool *p)
{
    free(p->keys);
    free(p->idx);
    free(p->recs);
    size_t size = p->size;
    memset(p, 0, sizeof *p);
    p->size = size;
}

/* ---- names ----------------------------------------------------------------------------------------- */

/* Appends s (at most n bytes) to buf[*o] within cap, always NUL-terminated. */
void js_jfrr_append(char *buf, size_t *o, size_t cap, const char *s, size_t n)
{
    size_t room = cap - 1 - *o;
    if (n > room) n = room;
    memcpy(buf + *o, s, n);
    *o += n;
    buf[*o] = 0;
}

/* Appends a class name: '/' -> '.', a hidden-class suffix from "/0x" or "+0x" dropped, "[I" / "[Lp/C;" as
 * "int[]" / "p.C[]". */
void js_jfrr_put_class(char *buf, size_t *o, size_t cap, const char *s)
{
    static const char codes[] = "BCDFIJSZ";
    static const char *const prims[] = {"byte", "char", "double", "float", "int", "long", "short", "boolean"};
    size_t dims = 0;
    while (s[dims] == '[') dims++;
    const char *p = s + dims, *hit = dims && p[0] && !p[1] ? strchr(codes, p[0]) : NULL;
    if (hit) {
        js_jfrr_append(buf, o, cap, prims[hit - codes], strlen(prims[hit - codes]));
    } else {
        if (dims && *p == 'L') p++;
        for (; *p && !(dims && *p == ';') && !((p[0] == '/' || p[0] == '+') && p[1] == '0' && p[2] == 'x'); p++)
            js_jfrr_append(buf, o, cap, *p == '/' ? "." : p, 1);
    }
    for (size_t i = 0; i < dims; i++) js_jfrr_append(buf, o, cap, "[]", 2);
}

/* ---- option parsing and input sources -------------------------------------------------------------- */

static const char *const kind_names[] = {"cpu", "wall", "alloc", "lock"};

/* Parses an event kind name; 0 or -1. */
int js_jfr_read_kind_parse(const char *s, js_jfr_read_kind *out)
{
    for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
        if (s && strcmp(s, kind_names[i]) == 0) {
            *out = (js_jfr_read_kind)i;
            return 0;
        }
    return -1;
}

/* Name of a kind; "unknown" when out of range. */
const char *js_jfr_read_kind_name(js_jfr_read_kind k)
{
    return (unsigned)k < sizeof kind_names / sizeof kind_names[0] ? kind_names[k] : "unknown";
}

/* Parses "@MS" (absolute) or a decimal duration with an optional unit (default seconds), in exact integer
 * arithmetic (fraction digits past the 18th are ignored); 0 or -1. */
int js_jfr_read_parse_time(const char *s, int *absolute, int64_t *ns)
{
    static const struct {
        const char *unit;
        int64_t mult;
    } units[] = {{"", 1000000000}, {"s", 1000000000}, {"ns", 1},           {"us", 1000},
                 {"ms", 1000000},  {"m", 60000000000}, {"h", 3600000000000}};
    if (!s) return -1;
    *absolute = s[0] == '@';
    const char *p = s + *absolute;
    size_t digits = strspn(p, "0123456789"), frac = p[digits] == '.' ? strspn(p + digits + 1, "0123456789") : 0;
    if (digits + frac == 0 || digits > 19 || (*absolute && p[digits] == '.')) return -1;
    const char *unit = p + digits + (p[digits] == '.' ? 1 + frac : 0);
    int64_t mult = 0;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(unit, units[i].unit) == 0) mult = units[i].mult;
    if (*absolute) mult = *unit ? 0 : 1000000;
    if (mult == 0) return -1;
    __int128 whole = 0, part = 0, scale = 1;
    for (size_t i = 0; i < digits; i++) whole = whole * 10 + (p[i] - '0');
    for (size_t i = 0; i < frac && i < 18; i++, scale *= 10) part = part * 10 + (p[digits + 1 + i] - '0');
    __int128 v = whole * mult + (part * mult + scale / 2) / scale;
    if (v > INT64_MAX) return -1;
    *ns = (int64_t)v;
    return 0;
}

/* pread loop over a file; 0 or -1. */
int js_jfrr_fd_read_at(void *ctx, uint64_t off, void *buf, size_t n)
{
    int fd = ((js_jfrr_fd_src *)ctx)->fd;
    for (size_t got = 0; got < n;) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Copy out of a memory buffer; 0 or -1 when out of range. */
int js_jfrr_mem_read_at(void *ctx, uint64_t off, void *buf, size_t n)
{
    const js_jfrr_mem_src *m = ctx;
    if (off > m->len || n > m->len - off) return -1;
    memcpy(buf, m->data + off, n);
    return 0;
}

/* jfr_meta_read.c - the JFR reader's metadata: the metadata event parsed into classes and fields (classes
 * sorted by id, each field's type resolved to a class, primitives recognised by name), and the lookups of
 * classes by name or id and of fields by name.
 *
 * Element nesting is capped at JS_JFRR_MAX_DEPTH; every count is checked against the bytes left.
 */
#include "jfr_read_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NO_STR UINT32_MAX /* an absent or null metadata string */

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

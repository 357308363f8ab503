/* jfr_read_decode.c - the JFR reader's generic decoder, which every pool entry and event goes through: one
 * value of a metadata class (primitive, pool key, array or nested struct), its top-level fields captured
 * on request.
 *
 * Struct-in-struct nesting is capped at JS_JFRR_MAX_DEPTH, and a value always consumes at least one byte (a
 * field-less type that is not a primitive is an error), so decoding time is linear in the bytes read.
 */
#include "jfr_read_int.h"

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

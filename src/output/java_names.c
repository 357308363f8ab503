/* java_names.c - Java method names as async-profiler writes them (see profile.h, js_profile_java_names).
 *
 * A Java frame is named "pkg.Class.method", then "(signature)" with sig and ":LINE" with lines. The class is the
 * part before the last '.' that comes before any '(' or ':'; JS_JN_SLASHES writes its dots as '/' (the JVM's
 * internal form, what async-profiler writes in collapsed stacks, trees and flame graphs), JS_JN_SIMPLE drops its
 * package, JS_JN_ANN appends the frame's kind.
 */
#include "output/profile.h"
#include "out_int.h"

#include <stdlib.h>
#include <string.h>

/* The kind suffix of a Java frame type, "" for other types. */
static const char *ann_suffix(uint8_t type)
{
    switch (type) {
    case JS_FT_JIT: return "_[j]";
    case JS_FT_INLINED: return "_[i]";
    case JS_FT_INTERPRETED: return "_[0]";
    case JS_FT_C1: return "_[1]";
    default: return "";
    }
}

char *js_java_name(const char *name, uint8_t type, unsigned style, char *out, size_t outlen)
{
    if (!outlen) return out;
    size_t end = strcspn(name, "(:"), dot = end;
    while (dot > 0 && name[dot - 1] != '.') dot--;
    size_t cls = dot ? dot - 1 : 0; /* the class part is name[0..cls) */
    size_t from = 0;
    if ((style & JS_JN_SIMPLE) && cls) {
        size_t p = cls;
        while (p > 0 && name[p - 1] != '.') p--;
        from = p;
    }
    size_t o = 0;
    for (size_t i = from; name[i] && o + 1 < outlen; i++)
        out[o++] = (style & JS_JN_SLASHES) && i < cls && name[i] == '.' ? '/' : name[i];
    out[o] = 0;
    if (style & JS_JN_ANN) {
        const char *sfx = ann_suffix(type);
        size_t k = strlen(sfx);
        if (o + k < outlen) memcpy(out + o, sfx, k + 1);
    }
    return out;
}

int js_profile_java_names(js_profile *p, unsigned style)
{
    if (!style) return 0;
    for (size_t i = 0; i < p->nframes; i++) {
        js_pframe *f = &p->frames[i];
        if (!f->java) continue;
        size_t cap = strlen(f->name) + 8;
        char *n = malloc(cap);
        if (!n) return -1;
        js_java_name(f->name, f->type, style, n, cap);
        free(f->name);
        f->name = n;
    }
    return js_profile_reindex(p);
}

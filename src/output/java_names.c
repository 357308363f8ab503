/* java_names.c - Java method names as async-profiler writes them (see profile.h, js_profile_java_names).
 *
 * A Java frame is named "pkg.Class.method", then "(signature)" with sig and ":LINE" with lines. The class is the
 * part before the last '.' that comes before any '(' or ':'; JS_JN_SLASHES writes its dots as '/' (the JVM's
 * internal form, what async-profiler writes in collapsed stacks, trees and flame graphs), JS_JN_SIMPLE drops its
 * package, JS_JN_NORM drops a hidden class's address, JS_JN_HIDDEN writes a hidden class's address after a '/' as
 * Class.getName does (JVMTI names it after a '.'), JS_JN_ANN appends the frame's kind.
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

/* norm: the length of class name c[0..n) without a hidden class's address: the part after its last '.' or '/' when
 * that starts with a digit ("Foo$$Lambda/0x0000000800c01234" -> "Foo$$Lambda"), as async-profiler cuts it. */
static size_t norm_len(const char *c, size_t n)
{
    for (size_t i = n; i > 1; i--)
        if (c[i - 1] == '.' || c[i - 1] == '/') return c[i] >= '0' && c[i] <= '9' ? i - 1 : n;
    return n;
}

char *js_java_name(const char *name, uint8_t type, unsigned style, char *out, size_t outlen)
{
    if (!outlen) return out;
    size_t end = strcspn(name, "(:"), dot = end;
    while (dot > 0 && name[dot - 1] != '.') dot--;
    size_t cls = dot ? dot - 1 : 0; /* the class part is name[0..cls) */
    size_t keep = (style & JS_JN_NORM) ? norm_len(name, cls) : cls; /* the class part written */
    size_t from = 0;
    if ((style & JS_JN_SIMPLE) && cls) { /* the package: up to the last '.' not followed by a digit */
        size_t p = cls;
        while (p > 0 && (name[p - 1] != '.' || (name[p] >= '0' && name[p] <= '9'))) p--;
        from = p;
    }
    size_t o = 0;
    for (size_t i = from; name[i] && o + 1 < outlen; i++) {
        if (i == keep && keep < cls) i = cls; /* the hidden suffix or lambda counter left out */
        int hidden = i < cls && name[i] == '.' && name[i + 1] >= '0' && name[i + 1] <= '9'; /* "Foo$$Lambda.0x12" */
        out[o++] = i < cls && name[i] == '.' && ((style & JS_JN_SLASHES) || (hidden && (style & JS_JN_HIDDEN)))
                       ? '/' : name[i];
    }
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

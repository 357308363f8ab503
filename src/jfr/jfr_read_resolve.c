/* jfr_read_resolve.c - the JFR reader's resolution of a chunk's aggregates into the profile: names (through
 * the Symbol and String pools), method frames "pkg.Class.method[:LINE]" with their frame type, thread root
 * frames "[name tid=N]" and the thread filter, allocated or locked class leaf frames "Class_[i]" and
 * "Class_[k]"; the profile is merged when it has grown.
 */
#include "jfr_read_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_NAME_HOPS 4 /* references followed before a name counts as missing */

/* ---- names ----------------------------------------------------------------------------------------- */

/* Text a name reference resolves to ("" when it does not). */
static const char *resolve(const js_jfrr_chunk *k, js_jfrr_nameref n)
{
    for (int hop = 0; hop < MAX_NAME_HOPS; hop++) {
        const js_jfrr_name_rec *r = NULL;
        if (n.how == JS_JFRR_NR_TEXT && n.s.kind == JS_JFRR_S_TEXT) return js_jfrr_text(&k->text, &n.s);
        if (n.how == JS_JFRR_NR_TEXT && n.s.kind == JS_JFRR_S_REF) r = js_jfrr_pool_get(&k->str, n.s.key);
        else if (n.how == JS_JFRR_NR_SYM) r = js_jfrr_pool_get(&k->sym, n.key);
        else if (n.how == JS_JFRR_NR_STR) r = js_jfrr_pool_get(&k->str, n.key);
        if (!r) return "";
        n = r->name;
    }
    return "";
}

/* Appends s (at most n bytes) to buf[*o] within cap, always NUL-terminated. */
static void js_jfrr_append(char *buf, size_t *o, size_t cap, const char *s, size_t n)
{
    size_t room = cap - 1 - *o;
    if (n > room) n = room;
    memcpy(buf + *o, s, n);
    *o += n;
    buf[*o] = 0;
}

/* Appends a class name: '/' -> '.', a hidden-class suffix from "/0x" or "+0x" dropped, "[I" / "[Lp/C;" as
 * "int[]" / "p.C[]". */
static void js_jfrr_put_class(char *buf, size_t *o, size_t cap, const char *s)
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

/* ---- resolution into the profile --------------------------------------------------------------------- */

/* js_frame_type of a FrameType pool key, by its description; JIT when unknown. */
static js_frame_type frame_type(const js_jfrr_chunk *k, uint64_t key)
{
    static const struct {
        const char *desc;
        js_frame_type t;
    } types[] = {
        {"Interpreted", JS_FT_INTERPRETED}, {"JIT compiled", JS_FT_JIT}, {"Inlined", JS_FT_INLINED},
        {"Native", JS_FT_NATIVE},           {"C++", JS_FT_CPP},          {"Kernel", JS_FT_KERNEL},
        {"C1 compiled", JS_FT_C1},
    };
    const js_jfrr_name_rec *n = js_jfrr_pool_get(&k->ftype, key);
    const char *d = n ? resolve(k, n->name) : "";
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(d, types[i].desc) == 0) return types[i].t;
    return JS_FT_JIT;
}

/* Profile frame of one stack frame (named and interned on first use); JS_JFRR_NONE without memory. */
static uint32_t frame_index(js_jfrr_reader *r, js_jfrr_frame_rec *fr)
{
    if (fr->pframe != JS_JFRR_NONE) return fr->pframe;
    const js_jfrr_chunk *k = &r->k;
    const js_jfrr_method_rec *me = js_jfrr_pool_get(&k->meth, fr->method);
    js_frame_type t = frame_type(k, fr->ftype);
    size_t o = 0;
    r->name[0] = 0;
    const char *mn = me ? resolve(k, me->name) : "";
    if (!*mn) {
        t = JS_FT_ERROR;
        js_jfrr_append(r->name, &o, JS_JFRR_NAME_BUF, "[unknown_method]", 16);
    } else {
        const js_jfrr_name_rec *cl = js_jfrr_pool_get(&k->cls, me->cls);
        const char *cn = cl ? resolve(k, cl->name) : "";
        /* a profiler's pseudo frame ("[unknown_Java]"), unless a native frame named by its library ("[libz.so.1]") */
        if (!*cn && mn[0] == '[' && mn[strlen(mn) - 1] == ']' &&
            (t != JS_FT_NATIVE || (!strstr(mn, ".so") && !strstr(mn, "_native]")))) /* "[unknown_native]" too */
            t = JS_FT_ERROR;
        js_jfrr_put_class(r->name, &o, JS_JFRR_NAME_BUF, cn);
        if (o) js_jfrr_append(r->name, &o, JS_JFRR_NAME_BUF, ".", 1);
        js_jfrr_append(r->name, &o, JS_JFRR_NAME_BUF, mn, strlen(mn));
        if (r->o->lines && fr->line > 0) {
            char line[16];
            js_jfrr_append(r->name, &o, JS_JFRR_NAME_BUF, line, (size_t)snprintf(line, sizeof line, ":%d", fr->line));
        }
    }
    fr->pframe = js_profile_frame(r->p, r->name, t);
    return fr->pframe;
}

/* A thread's name: its Java name, else its OS name ("" when unknown). */
static const char *thread_name(const js_jfrr_chunk *k, const js_jfrr_thread_rec *t)
{
    const char *n = t ? resolve(k, t->jname) : "";
    return n[0] || !t ? n : resolve(k, t->osname);
}

/* 1 if the thread passes the thread filter (a glob with '*' or '?', else a substring). */
static int thread_ok(js_jfrr_reader *r, js_jfrr_thread_rec *t)
{
    const char *pat = r->o->thread;
    if (!pat || !*pat) return 1;
    if (t && t->match >= 0) return t->match;
    const char *n = thread_name(&r->k, t);
    int m = strpbrk(pat, "*?") ? js_glob_match(pat, n) : strstr(n, pat) != NULL;
    if (t) t->match = (int8_t)m;
    return m;
}

/* Profile frame "[name tid=N]" of a thread (t may be NULL); JS_JFRR_NONE without memory. */
static uint32_t thread_frame(js_jfrr_reader *r, js_jfrr_thread_rec *t)
{
    if (t && t->pframe != JS_JFRR_NONE) return t->pframe;
    const char *n = thread_name(&r->k, t);
    if (!t) snprintf(r->name, JS_JFRR_NAME_BUF, "[unknown thread]");
    else if (n[0])
        snprintf(r->name, JS_JFRR_NAME_BUF, "[%.*s tid=%llu]", JS_JFRR_NAME_MAX, n, (unsigned long long)t->ostid);
    else snprintf(r->name, JS_JFRR_NAME_BUF, "[tid=%llu]", (unsigned long long)t->ostid);
    uint32_t f = js_profile_frame(r->p, r->name, JS_FT_THREAD);
    if (t) t->pframe = f;
    return f;
}

/* Profile frame of an allocated or locked class ("java.lang.String_[i]"); JS_JFRR_NONE if unnamed or no memory. */
static uint32_t class_frame(js_jfrr_reader *r, uint64_t key, uint8_t flag)
{
    const js_jfrr_name_rec *cl = js_jfrr_pool_get(&r->k.cls, key);
    const char *cn = cl ? resolve(&r->k, cl->name) : "";
    size_t o = 0;
    r->name[0] = 0;
    js_jfrr_put_class(r->name, &o, JS_JFRR_NAME_BUF, cn);
    if (!o) return JS_JFRR_NONE;
    js_jfrr_append(r->name, &o, JS_JFRR_NAME_BUF, flag == 'k' ? "_[k]" : "_[i]", 4);
    return js_profile_frame(r->p, r->name, flag == 'k' ? JS_FT_KERNEL : JS_FT_INLINED);
}

/* Makes room for n frame indexes in the scratch stack; 0 or -1. */
static int scratch_room(js_jfrr_reader *r, size_t n)
{
    if (n <= r->cap_scratch) return 0;
    size_t cap = r->cap_scratch ? r->cap_scratch : 256;
    while (cap < n) cap *= 2;
    uint32_t *s = realloc(r->scratch, cap * sizeof *s);
    if (!s) return -1;
    r->scratch = s;
    r->cap_scratch = cap;
    return 0;
}

/* Adds one aggregate as a profile stack, root first; 0, 1 if filtered out, or -1 without memory. */
static int add_stack(js_jfrr_reader *r, const js_jfrr_agg_ent *a)
{
    js_jfrr_chunk *k = &r->k;
    js_jfrr_thread_rec *t = js_jfrr_pool_get(&k->thread, a->thread);
    if (!thread_ok(r, t)) return 1;
    const js_jfrr_trace_rec *tr = js_jfrr_pool_get(&k->trace, a->trace);
    uint32_t n = tr ? tr->n : 0, d = 0;
    if (scratch_room(r, (size_t)n + 3) != 0) return -1;
    if (r->o->threads) r->scratch[d++] = thread_frame(r, t);
    if (tr && tr->truncated) r->scratch[d++] = js_profile_frame(r->p, JS_TRUNCATED_FRAME, JS_FT_ERROR);
    for (uint32_t j = n; j-- > 0;) r->scratch[d++] = frame_index(r, &k->frames[tr->first + j]);
    if (a->cls) {
        uint32_t f = class_frame(r, a->cls, a->flag);
        if (f != JS_JFRR_NONE) r->scratch[d++] = f;
    }
    for (uint32_t i = 0; i < d; i++)
        if (r->scratch[i] == JS_JFRR_NONE) return -1;
    return js_profile_add_n(r->p, r->scratch, d, a->weight, a->n);
}

/* Resolves the chunk's aggregates into the profile, merging it when it has grown; 0 or -1. */
int js_jfrr_resolve_chunk(js_jfrr_reader *r)
{
    js_jfrr_chunk *k = &r->k;
    for (size_t i = 0; i < k->cap_agg; i++) {
        if (!k->agg[i].used) continue;
        int rc = add_stack(r, &k->agg[i]);
        if (rc < 0) return js_jfrr_fail(&r->cur, r->cur.pos, "out of memory building the profile");
        if (rc) r->st.skipped += k->agg[i].n;
        else r->st.events += k->agg[i].n;
    }
    if (r->p->nstacks > r->norm_mark) {
        if (js_profile_normalize(r->p) != 0)
            return js_jfrr_fail(&r->cur, r->cur.pos, "out of memory merging the profile");
        r->norm_mark = r->p->nstacks * 2 > JS_JFRR_MIN_NORMALIZE ? r->p->nstacks * 2 : JS_JFRR_MIN_NORMALIZE;
    }
    return 0;
}

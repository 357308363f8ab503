/* pprof_read_resolve.c - see pprof.h: the pprof reader's aggregates become profile stacks.
 *
 * Tables are sorted by id (an id defined twice is an error); the sample type is chosen; each location is named
 * once (its lines, caller first) and its frames kept for every stack that passes through it; a stack refers to
 * locations, functions and strings that must exist, or the profile is refused with the offset of the field that
 * named them.
 */
#include "pprof_read_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "output/collapsed_read.h"

/* qsort order of records that begin with a uint64_t id. */
static int by_id(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts n records of size sz by id; a zero or repeated id is an error (off_at: where a record keeps its offset). */
static int sort_table(js_pprofr *r, void *arr, size_t n, size_t sz, size_t off_at, const char *what)
{
    if (n) qsort(arr, n, sz, by_id);
    for (size_t i = 0; i < n; i++) {
        const char *e = (const char *)arr + i * sz;
        uint64_t id = *(const uint64_t *)e, off = *(const uint64_t *)(e + off_at);
        if (id == 0) return js_pprofr_fail(r, off, "%s with id 0", what);
        if (i && id == *(const uint64_t *)(e - sz)) return js_pprofr_fail(r, off, "%s id %llu defined twice", what,
                                                                          (unsigned long long)id);
    }
    return 0;
}

/* The record with this id in a sorted table, or NULL. */
static const void *find(const void *arr, size_t n, size_t sz, uint64_t id)
{
    return n ? bsearch(&id, arr, n, sz, by_id) : NULL;
}

/* 1 if string i is s. */
static int string_is(const js_pprofr *r, int64_t i, const char *s)
{
    size_t n;
    const char *t = js_pprofr_string(r, i, &n);
    return t && n == strlen(s) && memcmp(t, s, n) == 0;
}

/* Copies string i (or "" when out of range) into out, NUL-terminated, cut to outlen - 1 bytes. */
static void string_copy(const js_pprofr *r, int64_t i, char *out, size_t outlen)
{
    size_t n = 0;
    const char *t = js_pprofr_string(r, i, &n);
    if (!t) n = 0;
    if (n >= outlen) n = outlen - 1;
    if (n) memcpy(out, t, n);
    out[n] = 0;
}

/* 1 if name ends with suffix. */
static int ends_with(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    return n >= s && strcmp(name + n - s, suffix) == 0;
}

/* The kind of a frame: this writer's mapping names; a kernel mapping; a Java or other source file; else guessed
 * from the name as collapsed input is (which may strip an "_[j]"-like suffix from name). */
static js_frame_type frame_kind(const js_pprofr *r, const js_pprofr_mapping *m, int64_t file, char *name)
{
    if (m) {
        for (int t = 0; t < JS_FT_COUNT; t++)
            if (t != JS_FT_THREAD && string_is(r, m->filename, js_pprof_kind_mapping((js_frame_type)t)))
                return (js_frame_type)t;
    }
    char f[256];
    string_copy(r, file, f, sizeof f);
    if (f[0]) {
        static const char *const java[] = {".java", ".kt", ".scala", ".groovy", ".clj"};
        for (size_t i = 0; i < sizeof java / sizeof java[0]; i++)
            if (ends_with(f, java[i])) return JS_FT_JIT;
        return JS_FT_NATIVE;
    }
    js_frame_type t = js_collapsed_frame_type(name, 0);
    return t == JS_FT_ERROR || t == JS_FT_THREAD ? JS_FT_NATIVE : t;
}

/* Appends frame f to the location frame pool; 0, or -1. */
static int push_lframe(js_pprofr *r, uint32_t f)
{
    if (f == UINT32_MAX) return js_pprofr_fail(r, r->base, "out of memory for the frames");
    if (js_pprofr_grow(r, (void **)&r->lframes, r->nlframes, &r->cap_lframes, sizeof *r->lframes, JS_PPROFR_MAX_IDS,
                       "frames of locations") != 0)
        return -1;
    r->lframes[r->nlframes++] = f;
    return 0;
}

/* Names location l's frames, its last line (the caller) first, into the pool; 0, or -1. */
static int resolve_location(js_pprofr *r, js_pprofr_location *l, js_profile *p)
{
    char *name = r->name_buf;
    const size_t namecap = sizeof r->name_buf;
    const js_pprofr_mapping *m = l->mapping ? find(r->maps, r->nmaps, sizeof *r->maps, l->mapping) : NULL;
    if (l->mapping && !m)
        return js_pprofr_fail(r, l->off, "location %llu names mapping %llu, which the profile does not define",
                              (unsigned long long)l->id, (unsigned long long)l->mapping);
    l->frames = (uint32_t)r->nlframes;
    if (l->nlines == 0) { /* not symbolised: its mapping's file, else its address */
        char file[JS_PPROFR_NAME_MAX];
        string_copy(r, m ? m->filename : 0, file, sizeof file);
        const char *base = strrchr(file, '/');
        base = base ? base + 1 : file;
        if (*base) snprintf(name, namecap, "[%s]", base);
        else snprintf(name, namecap, "0x%llx", (unsigned long long)l->address);
        js_frame_type t = m ? frame_kind(r, m, 0, name) : JS_FT_NATIVE;
        if (push_lframe(r, js_profile_frame(p, name, t)) != 0) return -1;
    }
    for (uint32_t i = l->nlines; i-- > 0;) {
        const js_pprofr_line *ln = &r->lines[l->first + i];
        const js_pprofr_function *f = find(r->fns, r->nfns, sizeof *r->fns, ln->function);
        if (!f)
            return js_pprofr_fail(r, l->off, "location %llu names function %llu, which the profile does not define",
                                  (unsigned long long)l->id, (unsigned long long)ln->function);
        size_t n;
        if (!js_pprofr_string(r, f->name, &n) || !js_pprofr_string(r, f->filename, &n))
            return js_pprofr_fail(r, f->off, "function %llu names string %lld of %zu", (unsigned long long)f->id,
                                  (long long)(js_pprofr_string(r, f->name, &n) ? f->filename : f->name), r->nstr);
        string_copy(r, f->name, name, JS_PPROFR_NAME_MAX);
        if (!name[0]) snprintf(name, namecap, "[unknown]");
        js_frame_type t = frame_kind(r, m, f->filename, name);
        if (r->o->lines && ln->line > 0) snprintf(name + strlen(name), 32, ":%lld", (long long)ln->line);
        if (push_lframe(r, js_profile_frame(p, name, t)) != 0) return -1;
    }
    l->nframes = (uint32_t)r->nlframes - l->frames;
    return 0;
}

/* The thread root of aggregate a, from its labels "thread" (name) and "thread_id" or "tid" (number): its frame
 * index, or UINT32_MAX if it has neither (then *none is 1). */
static uint32_t thread_root(js_pprofr *r, const js_pprofr_agg *a, js_profile *p, int *none)
{
    char tname[256] = "", root[320];
    int has_tid = 0;
    long long tid = 0;
    for (uint32_t i = 0; i < a->nlabels; i++) {
        const js_pprofr_label *l = &r->labs[a->labels + i];
        if (string_is(r, l->key, "thread") && l->str) string_copy(r, l->str, tname, sizeof tname);
        else if (string_is(r, l->key, "thread_id") || string_is(r, l->key, "tid")) has_tid = 1, tid = l->num;
    }
    *none = !tname[0] && !has_tid;
    if (*none) return UINT32_MAX;
    if (has_tid) snprintf(root, sizeof root, "[%s%stid=%lld]", tname, tname[0] ? " " : "", tid);
    else snprintf(root, sizeof root, "[%s]", tname);
    return js_profile_frame(p, root, JS_FT_THREAD);
}

/* Adds aggregate a as a stack with this weight and count; 0, or -1. */
static int add_stack(js_pprofr *r, const js_pprofr_agg *a, js_profile *p, uint64_t weight, uint64_t count)
{
    uint32_t d = 0;
    if (r->o->threads) {
        int none;
        uint32_t t = thread_root(r, a, p, &none);
        if (!none && t == UINT32_MAX) return js_pprofr_fail(r, a->off, "out of memory");
        if (!none) r->stack[d++] = t;
    }
    for (uint32_t i = a->nids; i-- > 0;) {
        uint64_t id = r->ids[a->ids + i];
        js_pprofr_location *l = (js_pprofr_location *)find(r->locs, r->nlocs, sizeof *r->locs, id);
        if (!l)
            return js_pprofr_fail(r, a->off, "a sample names location %llu, which the profile does not define",
                                  (unsigned long long)id);
        if (l->nframes == UINT32_MAX && resolve_location(r, l, p) != 0) return -1;
        if (d + l->nframes > JS_PPROF_MAX_DEPTH)
            return js_pprofr_fail(r, a->off, "a stack of more than %d frames", JS_PPROF_MAX_DEPTH);
        memcpy(r->stack + d, r->lframes + l->frames, l->nframes * sizeof *r->stack);
        d += l->nframes;
    }
    if (js_profile_add_n(p, r->stack, d, weight, count) != 0) return js_pprofr_fail(r, a->off, "out of memory");
    return 0;
}

/* Index of the sample type to read: by name, else the default, else the last; -1 with the error. */
static int pick_type(js_pprofr *r, js_pprof_read_info *info)
{
    char types[512] = "", t[64], u[64];
    for (uint32_t i = 0; i < r->ntypes; i++) {
        string_copy(r, r->types[i].type, t, sizeof t);
        string_copy(r, r->types[i].unit, u, sizeof u);
        size_t n = strlen(types);
        snprintf(types + n, sizeof types - n, "%s%s/%s", i ? ", " : "", t, u);
    }
    if (info) snprintf(info->types, sizeof info->types, "%s", types);
    if (r->ntypes == 0) return js_pprofr_fail(r, 0, "no sample types: not a pprof profile");
    const char *want = r->o->sample_type;
    for (uint32_t i = 0; want && i < r->ntypes; i++)
        if (string_is(r, r->types[i].type, want)) return (int)i;
    if (want) return js_pprofr_fail(r, 0, "no sample type '%s' (the profile has %s)", want, types);
    char deft[64];
    string_copy(r, r->default_type, deft, sizeof deft);
    for (uint32_t i = 0; deft[0] && i < r->ntypes; i++)
        if (string_is(r, r->types[i].type, deft)) return (int)i;
    return (int)r->ntypes - 1;
}

/* What p's unit is for a pprof unit: "count" is samples, "nanoseconds" ns. */
static void set_unit(js_profile *p, const char *unit)
{
    const char *u = strcmp(unit, "count") == 0 ? "samples" : strcmp(unit, "nanoseconds") == 0 ? "ns" : unit;
    snprintf(p->unit, sizeof p->unit, "%s", *u ? u : "samples");
}

int js_pprofr_resolve(js_pprofr *r, js_profile *p, js_pprof_read_info *info)
{
    if (sort_table(r, r->maps, r->nmaps, sizeof *r->maps, offsetof(js_pprofr_mapping, off), "mapping") != 0 ||
        sort_table(r, r->locs, r->nlocs, sizeof *r->locs, offsetof(js_pprofr_location, off), "location") != 0 ||
        sort_table(r, r->fns, r->nfns, sizeof *r->fns, offsetof(js_pprofr_function, off), "function") != 0)
        return -1;
    int ti = pick_type(r, info);
    if (ti < 0) return -1;
    int ci = -1; /* the first type counted in "count": the events behind the weight */
    for (uint32_t i = 0; i < r->ntypes && ci < 0; i++)
        if (string_is(r, r->types[i].unit, "count")) ci = (int)i;
    if (!(r->stack = malloc(JS_PPROF_MAX_DEPTH * sizeof *r->stack))) return js_pprofr_fail(r, 0, "out of memory");
    for (size_t i = 0; i < r->naggs; i++) {
        const js_pprofr_agg *a = &r->aggs[i];
        if (a->nvals != r->ntypes)
            return js_pprofr_fail(r, a->off, "a sample with %u values in a profile of %u sample types", a->nvals,
                                  r->ntypes);
        int64_t v = r->vals[a->vals + ti], c = ci >= 0 ? r->vals[a->vals + ci] : 0;
        if (v > 0 && add_stack(r, a, p, (uint64_t)v, c > 0 ? (uint64_t)c : 0) != 0) return -1;
    }
    char unit[64];
    string_copy(r, r->types[ti].unit, unit, sizeof unit);
    set_unit(p, unit);
    if (info) {
        string_copy(r, r->types[ti].type, info->type, sizeof info->type);
        snprintf(info->unit, sizeof info->unit, "%s", unit);
        string_copy(r, r->period_type, info->period_type, sizeof info->period_type);
        string_copy(r, r->period_unit, info->period_unit, sizeof info->period_unit);
        info->period = r->period;
        info->time_ns = r->time_ns;
        info->duration_ns = r->duration_ns;
    }
    return 0;
}

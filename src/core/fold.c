/* fold.c - see fold.h. */
#include "core/fold.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/names.h"
#include "core/thread_names.h"

#define NAME_MAX_LEN 1024

typedef struct {
    const js_store *s;
    const js_args *a;
    js_profile *profiles;
    uint32_t *ids; /* jstackdepth + 1 */
    int failed;
} fold_ctx;

/* Add one (trace, thread) pair to the profile, root first, with its sample count. */
static int add_pair(uint32_t trace, uint32_t thread, uint64_t weight, uint64_t count, void *ctx)
{
    fold_ctx *c = ctx;
    unsigned kind = thread >> JS_SAMPLER_KIND_SHIFT;
    thread &= JS_SAMPLER_SERIAL_MASK;
    if (kind >= JS_KINDS) return 0;
    js_profile *p = &c->profiles[kind];
    int n;
    const js_raw_frame *f = js_store_trace(c->s, trace, &n);
    if (!f) return 0;
    if (n > c->a->jstackdepth) n = c->a->jstackdepth;
    uint32_t depth = 0;
    char name[NAME_MAX_LEN];
    if (c->a->threads) {
        js_threads_label(thread, name, sizeof name);
        c->ids[depth++] = js_profile_frame(p, name, JS_FT_THREAD);
    }
    for (int i = n - 1; i >= 0; i--) {
        js_frame_type t = js_names_frame(f, i, n, c->a->lines, c->a->sig, name, sizeof name);
        c->ids[depth++] = js_profile_frame(p, name, t);
    }
    for (uint32_t i = 0; i < depth; i++)
        if (c->ids[i] == UINT32_MAX) c->failed = 1;
    if (c->failed || js_profile_add_n(p, c->ids, depth, weight, count) != 0) {
        c->failed = 1;
        return 1;
    }
    return 0;
}

void js_fold_init_profiles(js_profile profiles[JS_KINDS])
{
    static const char *const units[JS_KINDS] = {"samples", "samples", "bytes", "ns"};
    for (int k = 0; k < JS_KINDS; k++) {
        js_profile_init(&profiles[k]);
        snprintf(profiles[k].unit, sizeof profiles[k].unit, "%s", units[k]);
    }
}

void js_fold_free_profiles(js_profile profiles[JS_KINDS])
{
    for (int k = 0; k < JS_KINDS; k++) js_profile_free(&profiles[k]);
}

int js_fold_store(const js_store *s, const js_args *a, js_profile profiles[JS_KINDS], char *err, size_t errlen)
{
    fold_ctx c = {s, a, profiles, malloc(((size_t)a->jstackdepth + 3) * sizeof(uint32_t)), 0};
    if (!c.ids) {
        snprintf(err, errlen, "out of memory building the profile");
        return -1;
    }
    js_store_foreach_pair_counted(s, add_pair, &c);
    free(c.ids);
    for (int k = 0; k < JS_KINDS && !c.failed; k++)
        if (profiles[k].nstacks && js_profile_normalize(&profiles[k]) != 0) c.failed = 1;
    if (c.failed) {
        snprintf(err, errlen, "out of memory building the profile");
        return -1;
    }
    return 0;
}

int js_fold_pseudo(js_profile *p, const char *frame, uint64_t weight)
{
    if (!weight) return 0;
    uint32_t id = js_profile_frame(p, frame, JS_FT_ERROR);
    return id == UINT32_MAX ? -1 : js_profile_add(p, &id, 1, weight);
}

int js_fold_copy(js_profile *dst, const js_profile *src)
{
    uint32_t *map = malloc((src->nframes ? src->nframes : 1) * sizeof *map);
    if (!map) return -1;
    int rc = 0;
    for (size_t i = 0; i < src->nframes && rc == 0; i++) {
        map[i] = js_profile_frame(dst, src->frames[i].name, (js_frame_type)src->frames[i].type);
        if (map[i] == UINT32_MAX) rc = -1;
    }
    uint32_t *ids = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < src->nstacks && rc == 0; i++) {
        const js_pstack *st = &src->stacks[i];
        if (st->depth > cap) {
            free(ids);
            cap = st->depth;
            if (!(ids = malloc(cap * sizeof *ids))) rc = -1;
        }
        for (uint32_t d = 0; d < st->depth && rc == 0; d++) ids[d] = map[st->frames[d]];
        if (rc == 0) rc = js_profile_add_n(dst, ids, st->depth, st->weight, st->count);
    }
    free(ids);
    free(map);
    return rc;
}

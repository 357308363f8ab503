/* pprof_write.c - see pprof.h: a js_profile as a gzip-compressed pprof Profile.
 *
 * Two passes. The first builds the tables: a location per frame the stacks use (thread roots become labels),
 * a function per (name, file), a mapping per frame kind, every string interned. The second streams the Profile
 * as a run of partial Profile messages, each packed by protobuf-c and holding one field (a sample, a location,
 * ...): the concatenation of encoded messages is their merge, so the stream is one Profile with its fields in
 * field-number order. A message written many times over is packed once.
 */
#include "output/pprof.h"

#include <stdlib.h>
#include <string.h>

#include "out_int.h"
#include "pprof_int.h"
#include "util/hashmix.h"

#define MAX_LABELS 2

/* Mapping names that mark each frame kind (index: js_frame_type). Threads are labels, never locations. */
static const char *const kind_mappings[JS_FT_COUNT] = {
    [JS_FT_INTERPRETED] = "[interpreted]", [JS_FT_JIT] = "[jit]",     [JS_FT_INLINED] = "[inlined]",
    [JS_FT_NATIVE] = "[native]",           [JS_FT_CPP] = "[jvm]",     [JS_FT_KERNEL] = "[kernel.kallsyms]",
    [JS_FT_C1] = "[c1]",                   [JS_FT_THREAD] = "[thread]", [JS_FT_ERROR] = "[error]",
};

/* The sample types, period and split of each kind (EVENT, TYPE, UNIT: from the options). */
static const struct {
    const char *count_type, *amount_type, *amount_unit, *period_type, *period_unit;
    int by_weight; /* 1: a sample is a unit of weight; 0: an event of the stack's count; -1: one Sample per stack */
} kinds[JS_PPROF_KINDS] = {
    [JS_PPROF_SAMPLES] = {"samples", NULL, NULL, NULL, NULL, 1},
    [JS_PPROF_CPU] = {"samples", "cpu", "nanoseconds", "cpu", "nanoseconds", 1},
    [JS_PPROF_WALL] = {"samples", "wall", "nanoseconds", "wall", "nanoseconds", 1},
    [JS_PPROF_EVENTS] = {"samples", "EVENT", "events", "EVENT", "events", 1},
    [JS_PPROF_ALLOC] = {"alloc_objects", "alloc_space", "bytes", "space", "bytes", 0},
    [JS_PPROF_LIVE] = {"inuse_objects", "inuse_space", "bytes", "space", "bytes", 0},
    [JS_PPROF_LOCK] = {"contentions", "delay", "nanoseconds", "contentions", "count", 0},
    [JS_PPROF_VALUE] = {NULL, "TYPE", "UNIT", NULL, NULL, -1},
    [JS_PPROF_THREADS] = {"threads", NULL, NULL, NULL, NULL, 1},
};

const char *js_pprof_kind_mapping(js_frame_type t)
{
    return (unsigned)t < JS_FT_COUNT ? kind_mappings[t] : "[unknown]";
}

typedef struct {
    const js_profile *p;
    const js_pprof_opts *o;
    js_pprof_strtab st;
    uint64_t *loc_of;       /* per profile frame: its location id, 0 if unused or a thread root */
    uint64_t *loc_fn;       /* per location (id - 1): function id */
    int64_t *loc_line;      /* per location: line */
    uint64_t *loc_map;      /* per location: mapping id */
    size_t nloc;
    int64_t *fn_name, *fn_file; /* per function (id - 1): string indexes */
    size_t nfn, capfn;
    uint64_t *fn_slots;     /* open addressing: (name << 32 | file) + 1 -> function id in the high bits */
    size_t nfnslots;
    uint64_t map_of[JS_FT_COUNT]; /* mapping id per kind, 0 if unused */
    int64_t map_name[JS_FT_COUNT];
    size_t nmap;
    int has_lines, has_files;
    int64_t s_thread, s_thread_id; /* label keys */
    uint64_t *ids;          /* one stack's location ids, leaf first */
    unsigned char *buf;     /* the packed message */
    size_t cap;
    js_pprof_gz gz;
} writer;

/* "out of memory" in err; -1. */
static int oom(char *err, size_t errlen)
{
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* Length of a Java frame's name without a ":LINE" suffix; its line in *line (0 if none). */
static size_t strip_line(const char *name, int64_t *line)
{
    size_t n = strlen(name), d = n;
    *line = 0;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9') d--;
    if (d == n || d == 0 || name[d - 1] != ':' || n - d > 9) return n;
    *line = strtoll(name + d, NULL, 10);
    return d - 1;
}

/* 1 for the kinds of Java methods. */
static int java_kind(int t)
{
    return t == JS_FT_INTERPRETED || t == JS_FT_JIT || t == JS_FT_INLINED || t == JS_FT_C1;
}

/* The source file of Java method name[0..n) as derived from its class: "pkg/Outer.java"; 0 if it has no class. */
static size_t java_file(const char *name, size_t n, char *out, size_t outlen)
{
    const char *paren = memchr(name, '(', n);
    size_t end = paren ? (size_t)(paren - name) : n, cls = end;
    while (cls > 0 && name[cls - 1] != '.') cls--;
    if (cls < 2) return 0;
    cls--; /* the class is name[0..cls) */
    const char *dollar = memchr(name, '$', cls);
    if (dollar && dollar > name) cls = (size_t)(dollar - name);
    if (cls + sizeof ".java" > outlen) return 0;
    for (size_t i = 0; i < cls; i++) out[i] = name[i] == '.' ? '/' : name[i];
    memcpy(out + cls, ".java", sizeof ".java");
    return cls + sizeof ".java" - 1;
}

/* The function id of (name, file), added if new; 0 without memory. */
static uint64_t function_id(writer *w, int64_t name, int64_t file)
{
    uint64_t key = ((uint64_t)name << 32 | (uint64_t)file) + 1;
    if ((w->nfn + 1) * 2 >= w->nfnslots) {
        size_t cap = w->nfnslots ? w->nfnslots * 2 : 1024;
        uint64_t *sl = calloc(cap, 2 * sizeof *sl);
        if (!sl) return 0;
        for (size_t i = 0; i < w->nfnslots; i++) {
            if (!w->fn_slots[2 * i]) continue;
            size_t h = (size_t)js_mix64(w->fn_slots[2 * i]) & (cap - 1);
            while (sl[2 * h]) h = (h + 1) & (cap - 1);
            sl[2 * h] = w->fn_slots[2 * i];
            sl[2 * h + 1] = w->fn_slots[2 * i + 1];
        }
        free(w->fn_slots);
        w->fn_slots = sl;
        w->nfnslots = cap;
    }
    size_t h = (size_t)js_mix64(key) & (w->nfnslots - 1); /* mixed whole: a product's bits 20.. ignore the high ones */
    for (; w->fn_slots[2 * h]; h = (h + 1) & (w->nfnslots - 1))
        if (w->fn_slots[2 * h] == key) return w->fn_slots[2 * h + 1];
    if (w->nfn == w->capfn) {
        size_t cap = w->capfn ? w->capfn * 2 : 1024;
        int64_t *a = realloc(w->fn_name, cap * sizeof *a);
        if (!a) return 0;
        w->fn_name = a;
        if (!(a = realloc(w->fn_file, cap * sizeof *a))) return 0;
        w->fn_file = a;
        w->capfn = cap;
    }
    w->fn_name[w->nfn] = name;
    w->fn_file[w->nfn] = file;
    w->fn_slots[2 * h] = key;
    w->fn_slots[2 * h + 1] = ++w->nfn;
    return w->nfn;
}

/* Gives frame f a location (and its function and mapping); 0, or -1 without memory. */
static int add_location(writer *w, uint32_t f)
{
    const js_pframe *fr = &w->p->frames[f];
    int java = java_kind(fr->type);
    int64_t line = 0;
    size_t n = java ? strip_line(fr->name, &line) : strlen(fr->name);
    char file[1024];
    size_t fl = java ? java_file(fr->name, n, file, sizeof file) : 0;
    int64_t sname = js_pprof_strtab_add(&w->st, fr->name, n), sfile = js_pprof_strtab_add(&w->st, file, fl);
    if (sname < 0 || sfile < 0) return -1;
    uint64_t fn = function_id(w, sname, sfile);
    if (!fn) return -1;
    unsigned t = fr->type < JS_FT_COUNT ? fr->type : JS_FT_ERROR;
    if (!w->map_of[t]) {
        if ((w->map_name[t] = js_pprof_strtab_add(&w->st, kind_mappings[t], strlen(kind_mappings[t]))) < 0) return -1;
        w->map_of[t] = ++w->nmap;
    }
    w->has_lines |= line > 0;
    w->has_files |= fl > 0;
    w->loc_fn[w->nloc] = fn;
    w->loc_line[w->nloc] = line;
    w->loc_map[w->nloc] = w->map_of[t];
    w->loc_of[f] = ++w->nloc;
    return 0;
}

/* 1 if stack s starts with a thread root frame. */
static int thread_rooted(const js_profile *p, const js_pstack *s)
{
    return s->depth && p->frames[s->frames[0]].type == JS_FT_THREAD;
}

/* First pass: locations of every frame the stacks use, in first-use order; 0, or -1 without memory. */
static int build_tables(writer *w)
{
    const js_profile *p = w->p;
    size_t nf = p->nframes ? p->nframes : 1;
    w->loc_of = calloc(nf, sizeof *w->loc_of);
    w->loc_fn = malloc(nf * sizeof *w->loc_fn);
    w->loc_line = malloc(nf * sizeof *w->loc_line);
    w->loc_map = malloc(nf * sizeof *w->loc_map);
    uint32_t maxdepth = 1;
    for (size_t i = 0; i < p->nstacks; i++)
        if (p->stacks[i].depth > maxdepth) maxdepth = p->stacks[i].depth;
    w->ids = malloc(maxdepth * sizeof *w->ids);
    if (!w->loc_of || !w->loc_fn || !w->loc_line || !w->loc_map || !w->ids) return -1;
    for (size_t i = 0; i < p->nstacks; i++) {
        const js_pstack *s = &p->stacks[i];
        for (uint32_t d = thread_rooted(p, s); d < s->depth; d++)
            if (!w->loc_of[s->frames[d]] && add_location(w, s->frames[d]) != 0) return -1;
    }
    w->s_thread = js_pprof_strtab_add(&w->st, "thread", 6);
    w->s_thread_id = js_pprof_strtab_add(&w->st, "thread_id", 9);
    return w->s_thread < 0 || w->s_thread_id < 0 ? -1 : 0;
}

/* Packs the one-field Profile m into w->buf; its length, or 0 without memory. */
static size_t pack(writer *w, const pb_profile *m)
{
    size_t n = perftools__profiles__profile__get_packed_size(m);
    if (n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < n) cap *= 2;
        unsigned char *b = realloc(w->buf, cap);
        if (!b) return 0;
        w->buf = b;
        w->cap = cap;
    }
    return perftools__profiles__profile__pack(m, w->buf);
}

/* Packs m and writes it count times; 0, or -1 with err. */
static int emit(writer *w, const pb_profile *m, uint64_t count, char *err, size_t errlen)
{
    size_t n = pack(w, m);
    if (!n && count) return oom(err, errlen);
    return js_pprof_gz_put(&w->gz, w->buf, n, count, err, errlen);
}

/* a * b, saturating at INT64_MAX. */
static int64_t mul_sat(uint64_t a, uint64_t b)
{
    if (a && b > (uint64_t)INT64_MAX / a) return INT64_MAX;
    return a * b > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(a * b);
}

/* The thread labels of a stack with a "[name tid=N]" (or "[name]") root: 1 or 2 labels filled, their names
 * interned; 0 for a stack without one, -1 without memory. */
static int thread_labels(writer *w, const js_pstack *s, pb_label *lab)
{
    if (!thread_rooted(w->p, s)) return 0;
    const char *root = w->p->frames[s->frames[0]].name, *tid = NULL;
    size_t n = strlen(root);
    if (n >= 2 && root[0] == '[' && root[n - 1] == ']') root++, n -= 2;
    for (const char *q = root; (q = memmem(q, n - (size_t)(q - root), "tid=", 4)) != NULL; q++)
        if (q == root || q[-1] == ' ') tid = q;
    int64_t num = 0;
    if (tid) {
        char *end;
        num = strtoll(tid + 4, &end, 10);
        if (end != root + n || end == tid + 4) tid = NULL;
    }
    size_t namelen = tid ? (size_t)(tid - root) - (tid > root) : n;
    int nl = 0;
    if (namelen) {
        perftools__profiles__label__init(&lab[nl]);
        lab[nl].key = w->s_thread;
        if ((lab[nl++].str = js_pprof_strtab_add(&w->st, root, namelen)) < 0) return -1;
    }
    if (tid) {
        perftools__profiles__label__init(&lab[nl]);
        lab[nl].key = w->s_thread_id;
        lab[nl++].num = num;
    }
    return nl;
}

/* Writes the samples of stack s: one per sample, or one with the sums. 0, or -1 with err. */
static int write_stack(writer *w, const js_pstack *s, int split, uint64_t *messages, char *err, size_t errlen)
{
    const js_pprof_opts *o = w->o;
    int by = kinds[o->kind].by_weight;
    uint64_t *ids = w->ids;
    size_t n = 0;
    for (uint32_t d = s->depth; d-- > (uint32_t)thread_rooted(w->p, s);) ids[n++] = w->loc_of[s->frames[d]];
    pb_label lab[MAX_LABELS], *labp[MAX_LABELS] = {&lab[0], &lab[1]};
    int nl = thread_labels(w, s, lab);
    if (nl < 0) return oom(err, errlen);
    int64_t v[2];
    pb_sample smp = PERFTOOLS__PROFILES__SAMPLE__INIT, *sp = &smp;
    smp.location_id = ids;
    smp.n_location_id = n;
    smp.value = v;
    smp.label = labp;
    smp.n_label = (size_t)nl;
    pb_profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
    m.sample = &sp;
    m.n_sample = 1;
    int amount = by != 1 || o->period > 0;
    smp.n_value = by == -1 ? 1 : 1 + (size_t)amount;
    if (by == -1) { /* one value, one Sample */
        v[0] = mul_sat(s->weight, 1);
        *messages += 1;
        return emit(w, &m, 1, err, errlen);
    }
    if (by == 1) { /* a sample per unit of weight: [1, period] each, or [weight, weight * period] */
        v[0] = split ? 1 : mul_sat(s->weight, 1);
        v[1] = split ? o->period : mul_sat(s->weight, (uint64_t)o->period);
        *messages += split ? s->weight : 1;
        return emit(w, &m, split ? s->weight : 1, err, errlen);
    }
    /* a sample per event: [1, share] each (the weight split exactly), or [count, weight] */
    if (!split || s->count == 0) {
        v[0] = mul_sat(s->count, 1);
        v[1] = mul_sat(s->weight, 1);
        *messages += 1;
        return emit(w, &m, 1, err, errlen);
    }
    uint64_t share = s->weight / s->count, more = s->weight % s->count;
    v[0] = 1;
    v[1] = mul_sat(share + 1, 1);
    if (emit(w, &m, more, err, errlen) != 0) return -1;
    v[1] = mul_sat(share, 1);
    *messages += s->count;
    return emit(w, &m, s->count - more, err, errlen);
}

/* Bytes the one-Sample-per-sample form would take (an upper bound), saturating. */
static uint64_t split_bytes(const writer *w)
{
    int by = kinds[w->o->kind].by_weight;
    uint64_t total = 0;
    for (size_t i = 0; i < w->p->nstacks; i++) {
        const js_pstack *s = &w->p->stacks[i];
        uint64_t msgs = by == 1 ? s->weight : by == 0 ? (s->count ? s->count : 1) : 1;
        uint64_t each = 10 * (uint64_t)s->depth + 64; /* ids, values and labels, all varints */
        if (msgs && each > (UINT64_MAX - total) / msgs) return UINT64_MAX;
        total += msgs * each;
    }
    return total;
}

/* Interns a value type's two strings; the type name EVENT, TYPE, UNIT comes from the options. */
static int value_type(writer *w, pb_value_type *vt, const char *type, const char *unit)
{
    const js_pprof_opts *o = w->o;
    if (strcmp(type, "EVENT") == 0) type = o->event && *o->event ? o->event : "events";
    if (strcmp(type, "TYPE") == 0) type = o->event && *o->event ? o->event : "samples";
    if (strcmp(unit, "UNIT") == 0) unit = o->unit && *o->unit ? o->unit : "count";
    perftools__profiles__value_type__init(vt);
    vt->type = js_pprof_strtab_add(&w->st, type, strlen(type));
    vt->unit = js_pprof_strtab_add(&w->st, unit, strlen(unit));
    return vt->type < 0 || vt->unit < 0 ? -1 : 0;
}

/* Writes the header fields: sample types, then the samples; 0, or -1 with err. */
static int write_samples(writer *w, int split, uint64_t *messages, char *err, size_t errlen)
{
    const js_pprof_opts *o = w->o;
    pb_value_type vt[2];
    pb_value_type *vtp[2] = {&vt[0], &vt[1]};
    size_t nvt = 0;
    int by = kinds[o->kind].by_weight;
    if (kinds[o->kind].count_type && value_type(w, &vt[nvt++], kinds[o->kind].count_type, "count") != 0)
        return oom(err, errlen);
    if (kinds[o->kind].amount_type && (by != 1 || o->period > 0) &&
        value_type(w, &vt[nvt++], kinds[o->kind].amount_type, kinds[o->kind].amount_unit) != 0)
        return oom(err, errlen);
    pb_profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
    m.sample_type = vtp;
    m.n_sample_type = nvt;
    if (emit(w, &m, 1, err, errlen) != 0) return -1;
    for (size_t i = 0; i < w->p->nstacks; i++)
        if (w->p->stacks[i].weight && write_stack(w, &w->p->stacks[i], split, messages, err, errlen) != 0) return -1;
    return 0;
}

/* Writes mappings, locations and functions, each numbered 1..N in table order; 0, or -1 with err. */
static int write_tables(writer *w, char *err, size_t errlen)
{
    pb_profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
    for (uint64_t id = 1; id <= w->nmap; id++) {
        unsigned t = 0;
        while (w->map_of[t] != id) t++;
        pb_mapping mp = PERFTOOLS__PROFILES__MAPPING__INIT, *mpp = &mp;
        mp.id = id;
        mp.filename = w->map_name[t];
        mp.has_functions = 1; /* every location is named: readers need not look for symbols */
        mp.has_filenames = w->has_files;
        mp.has_line_numbers = w->has_lines;
        m.mapping = &mpp;
        m.n_mapping = 1;
        if (emit(w, &m, 1, err, errlen) != 0) return -1;
    }
    m.n_mapping = 0;
    for (size_t i = 0; i < w->nloc; i++) {
        pb_line ln = PERFTOOLS__PROFILES__LINE__INIT, *lnp = &ln;
        ln.function_id = w->loc_fn[i];
        ln.line = w->loc_line[i];
        pb_location loc = PERFTOOLS__PROFILES__LOCATION__INIT, *locp = &loc;
        loc.id = i + 1;
        loc.mapping_id = w->loc_map[i];
        loc.line = &lnp;
        loc.n_line = 1;
        m.location = &locp;
        m.n_location = 1;
        if (emit(w, &m, 1, err, errlen) != 0) return -1;
    }
    m.n_location = 0;
    for (size_t i = 0; i < w->nfn; i++) {
        pb_function fn = PERFTOOLS__PROFILES__FUNCTION__INIT, *fnp = &fn;
        fn.id = i + 1;
        fn.name = fn.system_name = w->fn_name[i];
        fn.filename = w->fn_file[i];
        m.function = &fnp;
        m.n_function = 1;
        if (emit(w, &m, 1, err, errlen) != 0) return -1;
    }
    return 0;
}

/* Writes the scalar fields and the string table (every string interned by now); 0, or -1 with err. */
static int write_trailer(writer *w, char *err, size_t errlen)
{
    const js_pprof_opts *o = w->o;
    pb_profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
    pb_value_type pt;
    int64_t comment = o->comment && *o->comment ? js_pprof_strtab_add(&w->st, o->comment, strlen(o->comment)) : 0;
    const char *deft = kinds[o->kind].amount_type && (kinds[o->kind].by_weight != 1 || o->period > 0)
                           ? kinds[o->kind].amount_type : kinds[o->kind].count_type;
    pb_value_type dvt;
    if (comment < 0 || value_type(w, &dvt, deft, "count") != 0)
        return oom(err, errlen);
    if (kinds[o->kind].period_type && (o->period > 0 || o->kind == JS_PPROF_LOCK)) {
        if (value_type(w, &pt, kinds[o->kind].period_type, kinds[o->kind].period_unit) != 0)
            return oom(err, errlen);
        m.period_type = &pt;
        m.period = o->kind == JS_PPROF_LOCK ? 1 : o->period;
    }
    m.time_nanos = o->time_ns;
    m.duration_nanos = o->duration_ns;
    m.default_sample_type = dvt.type;
    m.comment = &comment;
    m.n_comment = comment > 0;
    m.string_table = w->st.s;
    m.n_string_table = w->st.n;
    return emit(w, &m, 1, err, errlen);
}

/* Frees what the writer owns. */
static void writer_free(writer *w)
{
    js_pprof_strtab_free(&w->st);
    free(w->loc_of);
    free(w->loc_fn);
    free(w->loc_line);
    free(w->loc_map);
    free(w->fn_name);
    free(w->fn_file);
    free(w->fn_slots);
    free(w->ids);
    free(w->buf);
    js_pprof_gz_free(&w->gz);
}

int js_write_pprof(FILE *f, const js_profile *p, const js_pprof_opts *o, js_pprof_stats *st, char *err,
                   size_t errlen)
{
    if ((unsigned)o->kind >= JS_PPROF_KINDS) return js_out_fail("pprof", err, errlen, "unknown profile kind", 0);
    writer *w = calloc(1, sizeof *w);
    if (!w) return oom(err, errlen);
    w->p = p;
    w->o = o;
    char why[256] = "";
    uint64_t messages = 0;
    int aggregated = o->aggregate || kinds[o->kind].by_weight == -1 ? 1 : split_bytes(w) > JS_PPROF_SPLIT_MAX ? 2 : 0;
    int rc = js_pprof_strtab_init(&w->st) != 0 || build_tables(w) != 0 ? oom(why, sizeof why) : 0;
    if (rc == 0) rc = js_pprof_gz_open(&w->gz, f, o->level >= 1 && o->level <= 9 ? o->level : 6, why, sizeof why);
    if (rc == 0) rc = write_samples(w, !aggregated, &messages, why, sizeof why);
    if (rc == 0) rc = write_tables(w, why, sizeof why);
    if (rc == 0) rc = write_trailer(w, why, sizeof why);
    if (rc == 0) rc = js_pprof_gz_close(&w->gz, why, sizeof why);
    if (rc == 0 && st) *st = (js_pprof_stats){messages, w->gz.raw, aggregated};
    if (rc != 0) snprintf(err, errlen, "%s", why);
    writer_free(w);
    free(w);
    return rc;
}

/* test_pprof.c - the pprof writer and reader (src/output/pprof_*.c).
 *
 * The writer's files are inflated and unpacked here with zlib and protobuf-c directly (not with the reader under
 * test), and checked field by field: sample types, period, one Sample message per sample, values that add up to
 * the weights, ids 1..N in table order, mappings that mark frame kinds, thread labels. The SkyWalking OAP's tree
 * is rebuilt as its parser builds it (location and function found at position id - 1, +1 per Sample message,
 * frames named "function:line"), and must count each stack's samples. Then the reader: round trips through the
 * writer, Go-style profiles built by hand (inlined lines, source files, unsymbolised locations), and malformed,
 * truncated and oversized inputs, each refused with one line naming an offset.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "output/format.h"
#include "output/output.h"
#include "output/pprof.h"
#include "proto/pprof/profile.pb-c.h"
#include "testutil.h"

#define UNUSED __attribute__((unused))

typedef Perftools__Profiles__Profile pb_profile;

/* ---- helpers ---- */

/* Writes p with o into memory; the gzip bytes (heap) and their length. Asserts success. */
static unsigned char *write_mem(const js_profile *p, const js_pprof_opts *o, size_t *len, js_pprof_stats *st)
{
    char *buf = NULL, err[256] = "";
    FILE *f = open_memstream(&buf, len);
    assert_non_null(f);
    int rc = js_write_pprof(f, p, o, st, err, sizeof err);
    if (rc) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(fclose(f), 0);
    return (unsigned char *)buf;
}

/* gunzip of data (asserts a well-formed gzip stream); the bytes (heap) and their length. */
static unsigned char *gunzip(const unsigned char *data, size_t len, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    size_t cap = 1 << 16, n = 0;
    unsigned char *out = malloc(cap);
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)len;
    int rc;
    do {
        if (n == cap) out = realloc(out, cap *= 2);
        z.next_out = out + n;
        z.avail_out = (uInt)(cap - n);
        rc = inflate(&z, Z_NO_FLUSH);
        n = cap - z.avail_out;
        assert_true(rc == Z_OK || rc == Z_STREAM_END || (rc == Z_BUF_ERROR && n == cap));
    } while (rc != Z_STREAM_END);
    assert_int_equal(z.avail_in, 0);
    inflateEnd(&z);
    *out_len = n;
    return out;
}

/* gzip of data at level 6 (heap; its length in *out_len). */
static unsigned char *gzip(const unsigned char *data, size_t len, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, len) + 64;
    unsigned char *out = malloc(cap);
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

/* The written profile unpacked by protobuf-c (caller frees with perftools__profiles__profile__free_unpacked). */
static pb_profile *unpack_written(const js_profile *p, const js_pprof_opts *o, js_pprof_stats *st)
{
    size_t len, raw_len;
    unsigned char *gz = write_mem(p, o, &len, st);
    assert_int_equal(gz[0], 0x1f);
    assert_int_equal(gz[1], 0x8b);
    unsigned char *raw = gunzip(gz, len, &raw_len);
    if (st) assert_int_equal(st->raw, raw_len);
    pb_profile *m = perftools__profiles__profile__unpack(NULL, raw_len, raw);
    assert_non_null(m);
    free(gz);
    free(raw);
    return m;
}

/* String i of m (asserts it exists). */
static const char *str(const pb_profile *m, int64_t i)
{
    assert_true(i >= 0 && (size_t)i < m->n_string_table);
    return m->string_table[i];
}

/* qsort order of strings. */
static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The OAP's tree as its parser builds it, flattened to "root;...;leaf count" lines, sorted: each Sample message
 * adds 1 along its path; a location is found at index id - 1 and a function at index function_id - 1, and a
 * frame is named "function:line" (its lines joined by ';'). Sample.value is never read. */
static char *oap_tree(const pb_profile *m)
{
    size_t n = m->n_sample, k = 0;
    char **paths = calloc(n ? n : 1, sizeof *paths);
    for (size_t i = 0; i < n; i++) {
        const Perftools__Profiles__Sample *s = m->sample[i];
        tu_out o;
        tu_open(&o);
        for (size_t j = s->n_location_id; j-- > 0;) {
            uint64_t id = s->location_id[j];
            assert_true(id >= 1 && id <= m->n_location);
            const Perftools__Profiles__Location *l = m->location[id - 1];
            for (size_t q = 0; q < l->n_line; q++) {
                uint64_t fid = l->line[q]->function_id;
                assert_true(fid >= 1 && fid <= m->n_function);
                fprintf(o.f, "%s%s:%lld", j + 1 == s->n_location_id && q == 0 ? "" : ";",
                        str(m, m->function[fid - 1]->name), (long long)l->line[q]->line);
            }
        }
        paths[k++] = tu_text(&o);
    }
    qsort(paths, k, sizeof *paths, by_string);
    tu_out o;
    tu_open(&o);
    for (size_t i = 0; i < k;) {
        size_t j = i;
        while (j < k && strcmp(paths[j], paths[i]) == 0) j++;
        fprintf(o.f, "%s %zu\n", paths[i], j - i);
        for (size_t q = i; q < j; q++) free(paths[q]);
        i = j;
    }
    free(paths);
    return tu_text(&o);
}

/* Adds a stack of (name, type) frames, root first, with weight and count. */
static void add(js_profile *p, uint64_t weight, uint64_t count, int n, ...)
{
    uint32_t ids[32];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        const char *name = va_arg(ap, const char *);
        ids[i] = js_profile_frame(p, name, (js_frame_type)va_arg(ap, int));
    }
    va_end(ap);
    assert_int_equal(js_profile_add_n(p, ids, (uint32_t)n, weight, count), 0);
}

/* A profile with every kind of frame the writer treats differently. */
static void mixed_profile(js_profile *p)
{
    js_profile_init(p);
    add(p, 3, 3, 4, "[main tid=12]", JS_FT_THREAD, "java.lang.Thread.run:829", JS_FT_INTERPRETED,
        "com.x.App$Inner.work:42", JS_FT_JIT, "com.x.App.hot:7", JS_FT_INLINED);
    add(p, 2, 2, 4, "[main tid=12]", JS_FT_THREAD, "java.lang.Thread.run:829", JS_FT_INTERPRETED, "Java_x_y", JS_FT_NATIVE,
        "do_syscall_64", JS_FT_KERNEL);
    add(p, 1, 1, 3, "[GC Thread#0 tid=13]", JS_FT_THREAD, "GCTaskThread::run()", JS_FT_CPP, "[unknown_Java]", JS_FT_ERROR);
    add(p, 4, 4, 1, "Compile.c1:3", JS_FT_C1);
    assert_int_equal(js_profile_normalize(p), 0);
}

/* Reads data with o; asserts success; p is initialised here. */
static void read_mem(const void *data, size_t len, const js_pprof_read_opts *o, js_profile *p, js_pprof_read_info *info)
{
    char err[512] = "";
    js_profile_init(p);
    int rc = js_pprof_read_mem(data, len, "t.pb.gz", o, p, info, err, sizeof err);
    if (rc) print_error("%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(js_profile_normalize(p), 0);
}

/* The stacks of p as "frame(kind);... weight/count" lines, in order. */
static char *typed_stacks(const js_profile *p)
{
    tu_out o;
    tu_open(&o);
    for (size_t s = 0; s < p->nstacks; s++) {
        for (uint32_t d = 0; d < p->stacks[s].depth; d++) {
            const js_pframe *f = &p->frames[p->stacks[s].frames[d]];
            fprintf(o.f, "%s%s(%s)", d ? ";" : "", f->name, js_frame_type_name((js_frame_type)f->type));
        }
        fprintf(o.f, " %llu/%llu\n", (unsigned long long)p->stacks[s].weight, (unsigned long long)p->stacks[s].count);
    }
    return tu_text(&o);
}

/* ---- the writer ---- */

/* cpu: sample types, period, time, one Sample per sample with [1, period], ids 1..N, kinds as mappings,
 * functions and files of Java frames, thread labels; the OAP's tree counts samples. */
static void test_write_cpu(void **state UNUSED)
{
    js_profile p;
    mixed_profile(&p);
    js_pprof_opts o = {.kind = JS_PPROF_CPU, .period = 10000000, .time_ns = 1700000000123456789LL,
                       .duration_ns = 5000000000LL, .comment = "jsampler test"};
    js_pprof_stats st;
    pb_profile *m = unpack_written(&p, &o, &st);
    assert_int_equal(m->n_sample_type, 2);
    assert_string_equal(str(m, m->sample_type[0]->type), "samples");
    assert_string_equal(str(m, m->sample_type[0]->unit), "count");
    assert_string_equal(str(m, m->sample_type[1]->type), "cpu");
    assert_string_equal(str(m, m->sample_type[1]->unit), "nanoseconds");
    assert_non_null(m->period_type);
    assert_string_equal(str(m, m->period_type->type), "cpu");
    assert_string_equal(str(m, m->period_type->unit), "nanoseconds");
    assert_int_equal(m->period, 10000000);
    assert_int_equal(m->time_nanos, 1700000000123456789LL);
    assert_int_equal(m->duration_nanos, 5000000000LL);
    assert_string_equal(str(m, m->default_sample_type), "cpu");
    assert_int_equal(m->n_comment, 1);
    assert_string_equal(str(m, m->comment[0]), "jsampler test");
    assert_string_equal(m->string_table[0], "");
    /* one Sample per sample, [1, period] each */
    assert_int_equal(m->n_sample, 10);
    assert_int_equal(st.samples, 10);
    assert_int_equal(st.aggregated, 0);
    for (size_t i = 0; i < m->n_sample; i++) {
        assert_int_equal(m->sample[i]->n_value, 2);
        assert_int_equal(m->sample[i]->value[0], 1);
        assert_int_equal(m->sample[i]->value[1], 10000000);
    }
    /* ids 1..N in table order */
    for (size_t i = 0; i < m->n_location; i++) assert_int_equal(m->location[i]->id, i + 1);
    for (size_t i = 0; i < m->n_function; i++) assert_int_equal(m->function[i]->id, i + 1);
    for (size_t i = 0; i < m->n_mapping; i++) assert_int_equal(m->mapping[i]->id, i + 1);
    assert_int_equal(m->n_location, 8); /* every frame but the thread roots */
    /* each location: one line, its kind's mapping; Java functions without the line, with a file */
    int seen = 0;
    for (size_t i = 0; i < m->n_location; i++) {
        const Perftools__Profiles__Location *l = m->location[i];
        assert_int_equal(l->n_line, 1);
        assert_true(l->mapping_id >= 1 && l->mapping_id <= m->n_mapping);
        const char *map = str(m, m->mapping[l->mapping_id - 1]->filename);
        const Perftools__Profiles__Function *f = m->function[l->line[0]->function_id - 1];
        const char *name = str(m, f->name), *file = str(m, f->filename);
        assert_string_equal(str(m, f->system_name), name);
        if (strcmp(name, "com.x.App$Inner.work") == 0) {
            assert_string_equal(map, "[jit]"), assert_string_equal(file, "com/x/App.java");
            assert_int_equal(l->line[0]->line, 42), seen |= 1;
        } else if (strcmp(name, "com.x.App.hot") == 0) {
            assert_string_equal(map, "[inlined]"), assert_int_equal(l->line[0]->line, 7), seen |= 2;
        } else if (strcmp(name, "java.lang.Thread.run") == 0) {
            assert_string_equal(map, "[interpreted]"), assert_string_equal(file, "java/lang/Thread.java"), seen |= 4;
        } else if (strcmp(name, "do_syscall_64") == 0) {
            assert_string_equal(map, "[kernel.kallsyms]"), assert_string_equal(file, ""), seen |= 8;
        } else if (strcmp(name, "Java_x_y") == 0) {
            assert_string_equal(map, "[native]"), assert_int_equal(l->line[0]->line, 0), seen |= 16;
        } else if (strcmp(name, "GCTaskThread::run()") == 0) {
            assert_string_equal(map, "[jvm]"), seen |= 32;
        } else if (strcmp(name, "[unknown_Java]") == 0) {
            assert_string_equal(map, "[error]"), seen |= 64;
        } else {
            assert_string_equal(name, "Compile.c1"), assert_string_equal(map, "[c1]"), seen |= 128;
        }
    }
    assert_int_equal(seen, 255);
    /* thread labels */
    int labelled = 0;
    for (size_t i = 0; i < m->n_sample; i++) {
        const Perftools__Profiles__Sample *s = m->sample[i];
        if (s->n_label == 0) continue;
        labelled++;
        assert_int_equal(s->n_label, 2);
        assert_string_equal(str(m, s->label[0]->key), "thread");
        assert_string_equal(str(m, s->label[1]->key), "thread_id");
        const char *t = str(m, s->label[0]->str);
        assert_true((strcmp(t, "main") == 0 && s->label[1]->num == 12) ||
                    (strcmp(t, "GC Thread#0") == 0 && s->label[1]->num == 13));
    }
    assert_int_equal(labelled, 6);
    /* the OAP counts samples, frames named function:line */
    char *tree = oap_tree(m);
    tu_assert_text(tree, "Compile.c1:3 4\n"
                         "GCTaskThread::run():0;[unknown_Java]:0 1\n"
                         "java.lang.Thread.run:829;Java_x_y:0;do_syscall_64:0 2\n"
                         "java.lang.Thread.run:829;com.x.App$Inner.work:42;com.x.App.hot:7 3\n");
    free(tree);
    perftools__profiles__profile__free_unpacked(m, NULL);
    js_profile_free(&p);
}

/* alloc, live, lock: a Sample per event (the count), the weight split exactly; aggregated: one with the sums. */
static void test_write_split_by_count(void **state UNUSED)
{
    static const struct {
        js_pprof_kind kind;
        const char *t0, *u0, *t1, *u1, *pt, *pu;
        int64_t period, want_period;
    } k[] = {
        {JS_PPROF_ALLOC, "alloc_objects", "count", "alloc_space", "bytes", "space", "bytes", 524288, 524288},
        {JS_PPROF_LIVE, "inuse_objects", "count", "inuse_space", "bytes", "space", "bytes", 524288, 524288},
        {JS_PPROF_LOCK, "contentions", "count", "delay", "nanoseconds", "contentions", "count", 0, 1},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        js_profile p;
        js_profile_init(&p);
        add(&p, 1000, 3, 2, "A.a", JS_FT_JIT, "java.lang.Object_[i]", JS_FT_INLINED);
        add(&p, 7, 7, 1, "B.b", JS_FT_JIT);
        for (int agg = 0; agg < 2; agg++) {
            js_pprof_opts o = {.kind = k[i].kind, .period = k[i].period, .aggregate = agg};
            js_pprof_stats st;
            pb_profile *m = unpack_written(&p, &o, &st);
            assert_int_equal(m->n_sample_type, 2);
            assert_string_equal(str(m, m->sample_type[0]->type), k[i].t0);
            assert_string_equal(str(m, m->sample_type[0]->unit), k[i].u0);
            assert_string_equal(str(m, m->sample_type[1]->type), k[i].t1);
            assert_string_equal(str(m, m->sample_type[1]->unit), k[i].u1);
            assert_string_equal(str(m, m->period_type->type), k[i].pt);
            assert_string_equal(str(m, m->period_type->unit), k[i].pu);
            assert_int_equal(m->period, k[i].want_period);
            assert_string_equal(str(m, m->default_sample_type), k[i].t1);
            assert_int_equal(m->n_sample, agg ? 2 : 10);
            assert_int_equal(st.aggregated, agg);
            int64_t sum[2][2] = {{0, 0}, {0, 0}}; /* per stack (by depth): objects, bytes */
            for (size_t s = 0; s < m->n_sample; s++) {
                const Perftools__Profiles__Sample *x = m->sample[s];
                int which = x->n_location_id == 2 ? 0 : 1;
                if (!agg) assert_int_equal(x->value[0], 1);
                if (!agg && which == 0) assert_true(x->value[1] == 333 || x->value[1] == 334);
                sum[which][0] += x->value[0];
                sum[which][1] += x->value[1];
            }
            assert_int_equal(sum[0][0], 3);
            assert_int_equal(sum[0][1], 1000);
            assert_int_equal(sum[1][0], 7);
            assert_int_equal(sum[1][1], 7);
            perftools__profiles__profile__free_unpacked(m, NULL);
        }
        js_profile_free(&p);
    }
}

/* wall and events take their names; a profile without a period has samples only; VALUE one Sample per stack. */
static void test_write_types(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    add(&p, 5, 0, 1, "A.a", JS_FT_JIT);
    js_pprof_opts o = {.kind = JS_PPROF_WALL, .period = 50000000};
    pb_profile *m = unpack_written(&p, &o, NULL);
    assert_string_equal(str(m, m->sample_type[1]->type), "wall");
    assert_string_equal(str(m, m->period_type->type), "wall");
    assert_int_equal(m->n_sample, 5);
    perftools__profiles__profile__free_unpacked(m, NULL);

    o = (js_pprof_opts){.kind = JS_PPROF_EVENTS, .event = "page-faults", .period = 1000};
    m = unpack_written(&p, &o, NULL);
    assert_string_equal(str(m, m->sample_type[1]->type), "page-faults");
    assert_string_equal(str(m, m->sample_type[1]->unit), "events");
    assert_int_equal(m->sample[0]->value[1], 1000);
    perftools__profiles__profile__free_unpacked(m, NULL);

    o = (js_pprof_opts){.kind = JS_PPROF_CPU}; /* period not known: the count alone, no period */
    m = unpack_written(&p, &o, NULL);
    assert_int_equal(m->n_sample_type, 1);
    assert_string_equal(str(m, m->sample_type[0]->type), "samples");
    assert_string_equal(str(m, m->default_sample_type), "samples");
    assert_null(m->period_type);
    assert_int_equal(m->n_sample, 5);
    assert_int_equal(m->sample[0]->n_value, 1);
    perftools__profiles__profile__free_unpacked(m, NULL);

    o = (js_pprof_opts){.kind = JS_PPROF_VALUE, .event = "cpu", .unit = "nanoseconds"};
    m = unpack_written(&p, &o, NULL);
    assert_int_equal(m->n_sample_type, 1);
    assert_string_equal(str(m, m->sample_type[0]->type), "cpu");
    assert_int_equal(m->n_sample, 1);
    assert_int_equal(m->sample[0]->value[0], 5);
    perftools__profiles__profile__free_unpacked(m, NULL);
    js_profile_free(&p);
}

/* Past JS_PPROF_SPLIT_MAX bytes of messages the writer aggregates, and says so; names that are not UTF-8 are
 * mended (protobuf strings must be UTF-8); unwritable output fails with one line. */
static void test_write_limits(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    add(&p, 1ull << 40, 0, 2, "bad\xff\xc0name", JS_FT_NATIVE, "cesu\xed\xa0\x80x", JS_FT_JIT);
    js_pprof_opts o = {.kind = JS_PPROF_CPU, .period = 1};
    js_pprof_stats st;
    pb_profile *m = unpack_written(&p, &o, &st);
    assert_int_equal(st.aggregated, 2);
    assert_int_equal(m->n_sample, 1);
    assert_int_equal(m->sample[0]->value[0], 1ll << 40);
    int found = 0;
    for (size_t i = 0; i < m->n_string_table; i++) {
        found += strcmp(m->string_table[i], "bad\xef\xbf\xbd\xef\xbf\xbdname") == 0;
        found += strcmp(m->string_table[i], "cesu\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx") == 0;
    }
    assert_int_equal(found, 2);
    perftools__profiles__profile__free_unpacked(m, NULL);
    FILE *full = fopen("/dev/full", "w");
    if (full) {
        char err[256] = "";
        assert_int_equal(js_write_pprof(full, &p, &o, NULL, err, sizeof err), -1);
        assert_non_null(strstr(err, "No space left"));
        assert_null(strchr(err, '\n'));
        fclose(full);
    }
    js_profile_free(&p);
}

/* ---- the reader ---- */

/* Writer -> reader: the same stacks, kinds, weights and counts, with and without threads and lines. */
static void test_round_trip(void **state UNUSED)
{
    js_profile p;
    mixed_profile(&p);
    char *want = typed_stacks(&p);
    js_pprof_kind kinds[] = {JS_PPROF_CPU, JS_PPROF_ALLOC, JS_PPROF_LOCK};
    for (size_t k = 0; k < 3; k++)
        for (int agg = 0; agg < 2; agg++) {
            js_pprof_opts o = {.kind = kinds[k], .period = 10, .aggregate = agg};
            size_t len;
            unsigned char *gz = write_mem(&p, &o, &len, NULL);
            js_pprof_read_opts ro = {.lines = 1, .threads = 1};
            js_profile q;
            js_pprof_read_info info;
            read_mem(gz, len, &ro, &q, &info);
            char *got = typed_stacks(&q);
            if (kinds[k] == JS_PPROF_CPU) { /* the default type is cpu ns: weights times the period */
                tu_assert_text(got, "Compile.c1:3(c1) 40/4\n"
                                    "[GC Thread#0 tid=13](thread);GCTaskThread::run()(cpp);[unknown_Java](error) 10/1\n"
                                    "[main tid=12](thread);java.lang.Thread.run:829(interpreted);Java_x_y(native);"
                                    "do_syscall_64(kernel) 20/2\n"
                                    "[main tid=12](thread);java.lang.Thread.run:829(interpreted);com.x.App$Inner.work:42(jit);"
                                    "com.x.App.hot:7(inlined) 30/3\n");
                assert_string_equal(q.unit, "ns");
                assert_string_equal(info.type, "cpu");
                assert_string_equal(info.types, "samples/count, cpu/nanoseconds");
                assert_int_equal(info.period, 10);
                assert_int_equal(info.messages, agg ? 4 : 10);
                js_profile_free(&q);
                ro.sample_type = "samples";
                read_mem(gz, len, &ro, &q, NULL);
                free(got);
                got = typed_stacks(&q);
                assert_string_equal(q.unit, "samples");
            }
            tu_assert_text(got, want);
            free(got);
            js_profile_free(&q);
            ro = (js_pprof_read_opts){0}; /* no thread roots, no lines */
            read_mem(gz, len, &ro, &q, NULL);
            char *plain = tu_stacks(&q);
            const char *w = kinds[k] == JS_PPROF_CPU ? "Compile.c1 40\nGCTaskThread::run();[unknown_Java] 10\n"
                                                       "java.lang.Thread.run;Java_x_y;do_syscall_64 20\n"
                                                       "java.lang.Thread.run;com.x.App$Inner.work;com.x.App.hot 30\n"
                                                     : "Compile.c1 4\nGCTaskThread::run();[unknown_Java] 1\n"
                                                       "java.lang.Thread.run;Java_x_y;do_syscall_64 2\n"
                                                       "java.lang.Thread.run;com.x.App$Inner.work;com.x.App.hot 3\n";
            tu_assert_text(plain, w);
            free(plain);
            js_profile_free(&q);
            free(gz);
        }
    free(want);
    js_profile_free(&p);
}

/* --sample-type: by name, else the default, else the last; an unknown one names those there are. */
static void test_sample_type(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    add(&p, 1000, 3, 1, "A.a", JS_FT_JIT);
    js_pprof_opts o = {.kind = JS_PPROF_ALLOC, .period = 512};
    size_t len;
    unsigned char *gz = write_mem(&p, &o, &len, NULL);
    js_profile q;
    js_pprof_read_opts ro = {.sample_type = "alloc_objects"};
    read_mem(gz, len, &ro, &q, NULL);
    assert_int_equal(q.total, 3);
    assert_string_equal(q.unit, "samples");
    js_profile_free(&q);
    read_mem(gz, len, NULL, &q, NULL);
    assert_int_equal(q.total, 1000);
    assert_int_equal(q.stacks[0].count, 3);
    assert_string_equal(q.unit, "bytes");
    js_profile_free(&q);
    ro.sample_type = "cpu";
    char err[512];
    js_profile_init(&q);
    assert_int_equal(js_pprof_read_mem(gz, len, "t.pb.gz", &ro, &q, NULL, err, sizeof err), -1);
    assert_string_equal(err, "t.pb.gz: offset 0: no sample type 'cpu' (the profile has alloc_objects/count, "
                             "alloc_space/bytes)");
    js_profile_free(&q);
    free(gz);
    js_profile_free(&p);
}

/* A growing encoder of protobuf fields by hand, for profiles the writer would never make. */
typedef struct {
    unsigned char b[4096];
    size_t n;
} enc;

static void e_varint(enc *e, uint64_t v)
{
    do {
        e->b[e->n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

static void e_tag(enc *e, unsigned field, unsigned wire) { e_varint(e, field << 3 | wire); }

static void e_uint(enc *e, unsigned field, uint64_t v)
{
    e_tag(e, field, 0);
    e_varint(e, v);
}

static void e_bytes(enc *e, unsigned field, const void *data, size_t n)
{
    e_tag(e, field, 2);
    e_varint(e, n);
    memcpy(e->b + e->n, data, n);
    e->n += n;
}

static void e_msg(enc *e, unsigned field, const enc *m) { e_bytes(e, field, m->b, m->n); }

static void e_str(enc *e, const char *s) { e_bytes(e, 6, s, strlen(s)); }

/* A Go-style profile: string table first entries "", samples/count, cpu/nanoseconds; locations with inlined
 * lines and .go files, one in a .java file, one unsymbolised in a library, one with no mapping at all. */
static void go_profile(enc *e)
{
    enc t;
    e->n = 0;
    /* sample types: samples/count (1, 2), cpu/nanoseconds (3, 4) */
    t.n = 0, e_uint(&t, 1, 1), e_uint(&t, 2, 2), e_msg(e, 1, &t);
    t.n = 0, e_uint(&t, 1, 3), e_uint(&t, 2, 4), e_msg(e, 1, &t);
    /* samples: leaf first; non-packed ids in one, packed in the other */
    t.n = 0, e_uint(&t, 1, 2), e_uint(&t, 1, 1), e_uint(&t, 2, 5), e_uint(&t, 2, 50), e_msg(e, 2, &t);
    unsigned char packed[] = {3, 1}, vals[] = {2, 20};
    t.n = 0, e_bytes(&t, 1, packed, 2), e_bytes(&t, 2, vals, 2), e_msg(e, 2, &t);
    t.n = 0, e_uint(&t, 1, 4), e_uint(&t, 2, 1), e_uint(&t, 2, 10), e_msg(e, 2, &t);
    t.n = 0, e_uint(&t, 1, 5), e_uint(&t, 2, 1), e_uint(&t, 2, 10), e_msg(e, 2, &t);
    /* mappings: 1 the binary (file 5), 2 a library (file 10) */
    t.n = 0, e_uint(&t, 1, 1), e_uint(&t, 5, 5), e_uint(&t, 7, 1), e_msg(e, 3, &t);
    t.n = 0, e_uint(&t, 1, 2), e_uint(&t, 5, 10), e_msg(e, 3, &t);
    /* location 1: main.main at 12; location 2: runtime.f inlined into main.g (lines: innermost first) */
    enc l1, l2;
    t.n = 0, l1.n = 0, e_uint(&l1, 1, 1), e_uint(&l1, 2, 12), e_uint(&t, 1, 1), e_uint(&t, 2, 1), e_msg(&t, 4, &l1);
    e_msg(e, 4, &t);
    t.n = 0, l1.n = 0, l2.n = 0, e_uint(&l1, 1, 2), e_uint(&l1, 2, 30), e_uint(&l2, 1, 3), e_uint(&l2, 2, 40);
    e_uint(&t, 1, 2), e_uint(&t, 2, 1), e_msg(&t, 4, &l1), e_msg(&t, 4, &l2), e_msg(e, 4, &t);
    /* location 3: a Java method; 4: unsymbolised in the library; 5: no mapping, no lines */
    t.n = 0, l1.n = 0, e_uint(&l1, 1, 4), e_uint(&l1, 2, 9), e_uint(&t, 1, 3), e_msg(&t, 4, &l1), e_msg(e, 4, &t);
    t.n = 0, e_uint(&t, 1, 4), e_uint(&t, 2, 2), e_uint(&t, 3, 0x1234), e_msg(e, 4, &t);
    t.n = 0, e_uint(&t, 1, 5), e_uint(&t, 3, 0xabc), e_msg(e, 4, &t);
    /* functions: 1 main.main (6, file 7), 2 runtime.f (8, file 7), 3 main.g (9, file 7), 4 a.B.c (11, file 12) */
    unsigned fn[][3] = {{1, 6, 7}, {2, 8, 7}, {3, 9, 7}, {4, 11, 12}};
    for (int i = 0; i < 4; i++)
        t.n = 0, e_uint(&t, 1, fn[i][0]), e_uint(&t, 2, fn[i][1]), e_uint(&t, 4, fn[i][2]), e_msg(e, 5, &t);
    const char *s[] = {"", "samples", "count", "cpu", "nanoseconds", "/bin/app", "main.main", "/src/main.go",
                       "runtime.f", "main.g", "/usr/lib/libc.so.6", "a.B.c", "B.java"};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) e_str(e, s[i]);
    e_uint(e, 12, 10000000); /* period */
    e_uint(e, 9, 123);       /* time_nanos */
}

/* A Go-style profile read: inlined lines caller first, kinds from files, unsymbolised locations by their mapping
 * or address, the default (last) type, gzip or not. */
static void test_read_go_style(void **state UNUSED)
{
    enc e;
    go_profile(&e);
    js_profile q;
    js_pprof_read_opts ro = {.lines = 1};
    js_pprof_read_info info;
    read_mem(e.b, e.n, &ro, &q, &info);
    char *got = typed_stacks(&q);
    tu_assert_text(got, "0xabc(native) 10/1\n"
                        "[libc.so.6](native) 10/1\n"
                        "main.main:12(native);a.B.c:9(jit) 20/2\n"
                        "main.main:12(native);main.g:40(native);runtime.f:30(native) 50/5\n");
    assert_int_equal(info.gzip, 0);
    assert_int_equal(info.period, 10000000);
    assert_int_equal(info.time_ns, 123);
    assert_string_equal(info.type, "cpu");
    free(got);
    js_profile_free(&q);
    size_t gl;
    unsigned char *gz = gzip(e.b, e.n, &gl);
    read_mem(gz, gl, &ro, &q, &info);
    assert_int_equal(info.gzip, 1);
    assert_int_equal(q.total, 90);
    js_profile_free(&q);
    /* two gzip members (as `cat a.gz b.gz` makes) are one stream */
    size_t half = e.n / 2, l1, l2;
    unsigned char *g1 = gzip(e.b, half, &l1), *g2 = gzip(e.b + half, e.n - half, &l2);
    unsigned char *both = malloc(l1 + l2);
    memcpy(both, g1, l1);
    memcpy(both + l1, g2, l2);
    read_mem(both, l1 + l2, &ro, &q, NULL);
    assert_int_equal(q.total, 90);
    js_profile_free(&q);
    free(g1), free(g2), free(both), free(gz);
}

/* Reads data and expects a failure whose one line starts "t: offset N: " and holds want. */
static void expect_fail(const void *data, size_t len, const js_pprof_read_opts *o, const char *want)
{
    js_profile q;
    js_profile_init(&q);
    char err[512] = "";
    int rc = js_pprof_read_mem(data, len, "t", o, &q, NULL, err, sizeof err);
    if (rc != -1 || !strstr(err, want) || strncmp(err, "t: offset ", 10) != 0 || strchr(err, '\n'))
        print_error("want '%s', got rc %d '%s'\n", want, rc, err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, want));
    assert_int_equal(strncmp(err, "t: offset ", 10), 0);
    assert_null(strchr(err, '\n'));
    js_profile_free(&q);
}

/* Malformed profiles: each refused with one line naming an offset. */
static void test_read_malformed(void **state UNUSED)
{
    expect_fail("", 0, NULL, "empty input");
    expect_fail("hello world", 11, NULL, "wire type");
    expect_fail("\x00\x01", 2, NULL, "field number 0");
    expect_fail("\x0a\x05\x08", 3, NULL, "ends inside a field");
    expect_fail("\x0a\xff\xff\xff\xff\x7f", 6, NULL, "of 34359738367 bytes");
    expect_fail("\x48\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11, NULL, "longer than 10 bytes");
    expect_fail("\x48", 1, NULL, "ends in a field");
    expect_fail("\x12\x03\x0a\x05\x01", 5, NULL, "malformed sample");
    enc e, t;
    go_profile(&e); /* no sample types: the ValueTypes (field 1) replaced by a comment (field 13) */
    enc x = e;
    x.b[0] = 13 << 3 | 2, x.b[6] = 13 << 3 | 2;
    expect_fail(x.b, x.n, NULL, "no sample types");
    go_profile(&e); /* a sample naming a location the profile lacks */
    t.n = 0, e_uint(&t, 1, 99), e_uint(&t, 2, 1), e_uint(&t, 2, 1), e_msg(&e, 2, &t);
    expect_fail(e.b, e.n, NULL, "location 99, which the profile does not define");
    go_profile(&e); /* a location defined twice */
    t.n = 0, e_uint(&t, 1, 3), e_msg(&e, 4, &t);
    expect_fail(e.b, e.n, NULL, "location id 3 defined twice");
    go_profile(&e); /* id 0 */
    t.n = 0, e_uint(&t, 1, 0), e_msg(&e, 5, &t);
    expect_fail(e.b, e.n, NULL, "function with id 0");
    go_profile(&e); /* a line naming a function the profile lacks */
    enc l;
    t.n = 0, l.n = 0, e_uint(&l, 1, 77), e_uint(&t, 1, 9), e_msg(&t, 4, &l), e_msg(&e, 4, &t);
    t.n = 0, e_uint(&t, 1, 9), e_uint(&t, 2, 1), e_uint(&t, 2, 1), e_msg(&e, 2, &t);
    expect_fail(e.b, e.n, NULL, "names function 77");
    go_profile(&e); /* a function naming a string past the table */
    t.n = 0, e_uint(&t, 1, 8), e_uint(&t, 2, 500), e_msg(&e, 5, &t);
    t.n = 0, l.n = 0, e_uint(&l, 1, 8), e_uint(&t, 1, 8), e_msg(&t, 4, &l), e_msg(&e, 4, &t);
    t.n = 0, e_uint(&t, 1, 8), e_uint(&t, 2, 1), e_uint(&t, 2, 1), e_msg(&e, 2, &t);
    expect_fail(e.b, e.n, NULL, "names string 500 of 13");
    go_profile(&e); /* a sample with one value in a profile of two types */
    t.n = 0, e_uint(&t, 1, 1), e_uint(&t, 2, 1), e_msg(&e, 2, &t);
    expect_fail(e.b, e.n, NULL, "a sample with 1 values in a profile of 2 sample types");
    go_profile(&e); /* a location naming a mapping the profile lacks */
    t.n = 0, e_uint(&t, 1, 8), e_uint(&t, 2, 66), e_msg(&e, 4, &t);
    t.n = 0, e_uint(&t, 1, 8), e_uint(&t, 2, 1), e_uint(&t, 2, 1), e_msg(&e, 2, &t);
    expect_fail(e.b, e.n, NULL, "names mapping 66");
    /* gzip cut short, gzip of garbage, bytes after the gzip stream */
    go_profile(&e);
    size_t gl;
    unsigned char *gz = gzip(e.b, e.n, &gl);
    expect_fail(gz, gl - 12, NULL, "cut short");
    unsigned char *bad = malloc(gl + 2);
    memcpy(bad, gz, gl);
    bad[20] ^= 0xff;
    bad[21] ^= 0x55;
    expect_fail(bad, gl, NULL, "gzip");
    memcpy(bad, gz, gl);
    bad[gl] = 'x', bad[gl + 1] = 'y';
    expect_fail(bad, gl + 2, NULL, "bytes after the end of the gzip stream");
    free(bad);
    free(gz);
}

/* A gzip bomb: a small file that inflates without end stops at max_bytes, not at the memory's end. */
static void test_read_bomb(void **state UNUSED)
{
    size_t n = 8u << 20, gl;
    unsigned char *raw = malloc(n);
    for (size_t i = 0; i < n; i += 2) raw[i] = 13 << 3, raw[i + 1] = 0; /* comment = 0, again and again */
    unsigned char *gz = gzip(raw, n, &gl);
    assert_true(gl < n / 500);
    js_pprof_read_opts o = {.max_bytes = 1u << 20};
    expect_fail(gz, gl, &o, "larger than 1048576 bytes decompressed");
    free(gz);
    free(raw);
}

/* A million equal samples: small once compressed, and read back into one stack (equal messages are summed). */
static void test_read_many_samples(void **state UNUSED)
{
    js_profile p;
    js_profile_init(&p);
    add(&p, 1000000, 0, 3, "A.a", JS_FT_JIT, "B.b", JS_FT_JIT, "C.c", JS_FT_JIT);
    add(&p, 1, 0, 1, "A.a", JS_FT_JIT);
    js_pprof_opts o = {.kind = JS_PPROF_CPU, .period = 1000};
    size_t len;
    js_pprof_stats st;
    unsigned char *gz = write_mem(&p, &o, &len, &st);
    assert_int_equal(st.samples, 1000001);
    assert_true(len < 32768); /* 14 MB of equal messages: gzip keeps about 0.2 bits of each */
    js_profile q;
    js_pprof_read_info info;
    js_pprof_read_opts ro = {.sample_type = "samples"};
    read_mem(gz, len, &ro, &q, &info);
    char *got = tu_stacks(&q);
    tu_assert_text(got, "A.a 1\nA.a;B.b;C.c 1000000\n");
    assert_int_equal(info.messages, 1000001);
    free(got);
    js_profile_free(&q);
    free(gz);
    js_profile_free(&p);
}

/* The format word and the extensions. */
static void test_format(void **state UNUSED)
{
    assert_int_equal(js_out_format_from_path("a/p.pb.gz"), JS_OUT_PPROF);
    assert_int_equal(js_out_format_from_path("p.PB.GZ"), JS_OUT_PPROF);
    assert_int_equal(js_out_format_from_path("cpu.pprof"), JS_OUT_PPROF);
    assert_int_equal(js_out_format_from_path("p.gz"), JS_OUT_NONE);
    assert_int_equal(js_out_format_from_path(".pprof"), JS_OUT_NONE);
    assert_int_equal(js_out_format_from_path("x.pb.gz/p"), JS_OUT_NONE);
    assert_string_equal(js_out_format_name(JS_OUT_PPROF), "pprof");
    assert_string_equal(js_pprof_kind_mapping(JS_FT_KERNEL), "[kernel.kallsyms]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_cpu),
        cmocka_unit_test(test_write_split_by_count),
        cmocka_unit_test(test_write_types),
        cmocka_unit_test(test_write_limits),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_sample_type),
        cmocka_unit_test(test_read_go_style),
        cmocka_unit_test(test_read_malformed),
        cmocka_unit_test(test_read_bomb),
        cmocka_unit_test(test_read_many_samples),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

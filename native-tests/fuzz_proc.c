/* fuzz_proc.c - libFuzzer target for the parsers of /proc texts and of what a target process shows us
 * (docs/FUZZING.md): a target's status, cmdline and maps and its JDK's release file (src/attach/attach_proc.c,
 * read by `jsampler list` and the attach verbs, for processes of any user), our own /proc/self/stat
 * (src/backend/plan.c), and thread names as /proc/self/task/N/comm gives them, kept in the name table
 * (src/core/thread_names.c: open addressing, deletion by backward shift, eviction of the oldest), and the
 * stat, status, io and cmdline files of any process that proc= reads (src/core/procsample.c).
 *
 * The input is a recipe: its first byte picks the parser, the rest is the text; for the name table it is a
 * list of operations (set a name, set a Java id, look up, label into a small buffer, fill the table past its
 * bound so the oldest are evicted) checked against a plain model of what the table must hold. The fuzzing build
 * lowers the bound to 1024 names (-DJS_THREAD_NAMES_MAX, Makefile), so a fill costs little.
 * Invariants beyond the sanitizers: texts kept from a target fit their buffers and hold no control character
 * (they are printed to a terminal); the name table answers exactly as the model, labels never overrun.
 */
#include "fuzz_util.h"

#include "../src/attach/attach_parse_int.h"
#include "../src/backend/backend_int.h"
#include "core/procsample.h"
#include "core/thread_names.h"

/* 1 if s has a control character (tab included). */
static int has_controls(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) return 1;
    return 0;
}

/* ---- the name table against a model ------------------------------------------------------------------ */

#define SMALL 64 /* serials the operations use; the fill uses others */
#define FILL_BASE 1000000u

typedef struct {
    int present, tid;
    int64_t java;
    char name[JS_THREAD_NAME_MAX];
} model_ent;

static model_ent model[SMALL];
static uint32_t fifo[JS_THREAD_NAMES_MAX + SMALL + 8]; /* serials in the table, oldest first */
static size_t fifo_head, fifo_n;

/* Records serial as newly added (evicting the oldest when the table is full, as the table does). */
static void model_add(uint32_t serial)
{
    if (fifo_n == JS_THREAD_NAMES_MAX) { /* no thread is alive: the oldest goes */
        uint32_t old = fifo[fifo_head];
        fifo_head = (fifo_head + 1) % (sizeof fifo / sizeof fifo[0]);
        fifo_n--;
        if (old < SMALL) model[old].present = 0;
    }
    fifo[(fifo_head + fifo_n) % (sizeof fifo / sizeof fifo[0])] = serial;
    fifo_n++;
}

/* Checks the table's answer for serial against the model. */
static void check_serial(uint32_t serial)
{
    char name[JS_THREAD_NAME_MAX + 8];
    int tid = -1;
    int64_t java = -1;
    int rc = js_threads_info(serial, name, sizeof name, &tid, &java);
    const model_ent *m = &model[serial];
    FZ_CHECK((rc == 0) == (m->present != 0), "serial %u: found %d, model %d", serial, rc == 0, m->present);
    if (rc == 0)
        FZ_CHECK(strcmp(name, m->name) == 0 && tid == m->tid && java == m->java, "serial %u: '%s' tid %d java %lld",
                 serial, name, tid, (long long)java);
}

/* Runs the operations of the input on the name table. */
static void names(fz_in *in)
{
    js_threads_clear_names();
    memset(model, 0, sizeof model);
    fifo_head = fifo_n = 0;
    int filled = 0;
    while (in->n) {
        uint8_t op = fz_u8(in) % 8;
        uint32_t serial = fz_u8(in) % SMALL;
        if (op <= 2) { /* a name as comm gives it: cut at the newline, kept up to 63 bytes */
            char *text = fz_string(in, 80), *nl = strchr(text, '\n');
            if (nl) *nl = 0;
            int tid = (int)fz_bits(in, 2);
            if (!model[serial].present) {
                model_add(serial);
                model[serial].present = 1;
                model[serial].java = 0;
            }
            model[serial].tid = tid;
            snprintf(model[serial].name, sizeof model[serial].name, "%s", text);
            js_threads_set_name(serial, tid, text);
            free(text);
        } else if (op == 3) {
            int64_t java = (int64_t)fz_bits(in, 8);
            js_threads_set_java_id(serial, java);
            if (model[serial].present) model[serial].java = java;
        } else if (op == 4) {
            size_t cap = 1 + (size_t)fz_range(in, 0, 90);
            char buf[96];
            memset(buf, 'x', sizeof buf);
            js_threads_label(serial, buf, cap);
            FZ_CHECK(memchr(buf, 0, cap) && buf[cap] == 'x', "label into %zu bytes", cap);
            if (model[serial].present && cap > 2) FZ_CHECK(buf[0] == '[', "label '%s'", buf);
        } else if (op == 5 && !filled) { /* past the bound: 1024 names in the fuzzing build, 65536 otherwise */
            filled = 1;
            uint32_t n = JS_THREAD_NAMES_MAX + (uint32_t)fz_range(in, 0, 8);
            for (uint32_t i = 0; i < n; i++) {
                js_threads_set_name(FILL_BASE + i, 1, "fill");
                model_add(FILL_BASE + i);
            }
            FZ_CHECK(js_threads_names_count() == fifo_n, "count %zu, model %zu", js_threads_names_count(), fifo_n);
        }
        check_serial(serial);
    }
    for (uint32_t s = 0; s < SMALL; s++) check_serial(s);
    FZ_CHECK(js_threads_names_count() == fifo_n, "count %zu, model %zu", js_threads_names_count(), fifo_n);
}

/* ---- the /proc and release parsers ------------------------------------------------------------------- */

/* The parsers of proc= over the bytes of one file (6 stat, 7 status, 8 io, 9 cmdline), each given no NUL. */
static void proc_files(uint8_t what, const uint8_t *p, size_t n)
{
    js_jfr_process *r = calloc(1, sizeof *r);
    uint8_t *copy = malloc(n ? n : 1); /* exactly n bytes: a read past them is an overflow */
    if (!r || !copy) abort();
    memcpy(copy, p, n);
    uint64_t ut, st, start, rss;
    if (what == 6 && js_proc_parse_stat((const char *)copy, n, r, &ut, &st, &start, &rss) == 0) {
        FZ_CHECK(r->pid > 0 && fz_fits(r->name, sizeof r->name), "pid %d name '%.20s'", r->pid, r->name);
        FZ_CHECK(r->ppid >= 0, "ppid %d", r->ppid);
    } else if (what == 7) {
        js_proc_parse_status((const char *)copy, n, r);
    } else if (what == 8) {
        js_proc_parse_io((const char *)copy, n, r);
    } else if (what == 9) {
        js_proc_parse_cmdline((const char *)copy, n, r);
        size_t len = strlen(r->cmdline);
        FZ_CHECK(len < sizeof r->cmdline && (len == 0 || r->cmdline[len - 1] != ' '), "cmdline of %zu bytes", len);
    }
    free(copy);
    free(r);
}

/* libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    uint8_t what = fz_u8(&in) % 10;
    if (what == 5) {
        names(&in);
        return 0;
    }
    char *text = fz_cstr(in.p, in.n);
    js_target t;
    memset(&t, 0, sizeof t);
    t.pid = 4242;
    switch (what) {
    case 0:
        js_target_parse_status(text, &t);
        break;
    case 1: { /* NUL-separated arguments, as read: the bytes as they are, a NUL after them */
        js_target_parse_cmdline(text, in.n, &t);
        FZ_CHECK(fz_fits(t.main, sizeof t.main) && !has_controls(t.main), "main '%s'", t.main);
        break;
    }
    case 2:
        js_target_parse_release(text, &t);
        FZ_CHECK(fz_fits(t.java_version, sizeof t.java_version) && !has_controls(t.java_version), "version '%s'",
                 t.java_version);
        FZ_CHECK(t.java_major >= 0 && t.java_major < 1000, "major %d", t.java_major);
        break;
    case 3: {
        FILE *f = in.n ? fmemopen((void *)in.p, in.n, "r") : NULL;
        if (f) {
            int jvm = js_target_maps_jvm(f);
            FZ_CHECK(jvm >= -1 && jvm <= 1, "maps %d", jvm);
            fclose(f);
        }
        break;
    }
    case 4: {
        long long ns = js_plan_stat_cpu_ns(text, 100);
        FZ_CHECK(ns >= -1, "cpu %lld", ns);
        break;
    }
    default: /* proc=: any process's stat, status, io and cmdline (src/core/procsample.c), as raw bytes */
        proc_files(what, in.p, in.n);
        break;
    }
    free(text);
    return 0;
}

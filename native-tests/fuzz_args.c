/* fuzz_args.c - libFuzzer target for the option parsers (docs/FUZZING.md): the agent's option string
 * (src/core/args.c: -agentpath, attach, the Java API, a task's start command) and SkyWalking's ExecArgs
 * (src/backend/task_cmd.c), with the start command a task makes of them read back by the first.
 *
 * The input, up to its first NUL, is both an agent option string and an ExecArgs string.
 * Invariants beyond the sanitizers: a refused option string names why in one line; an accepted one has every
 * value in its documented range (interval floor, depth, sizes, durations) and every text within its buffer;
 * output paths expand into buffers of any size without overrunning them; an ExecArgs string is refused with a
 * reason or gives a start command that fits and that the agent's parser reads as a start writing to the file
 * the task gave it. Dictionary: native-tests/fuzz-corpus/args.dict (the option names and values).
 */
#include "fuzz_util.h"

#include "../src/backend/backend_int.h"
#include "core/args.h"

/* The checks on an accepted option string. */
static void check_args(const js_args *a)
{
    FZ_CHECK(a->action <= JS_ACTION_THREADSTARTS && a->event <= JS_EV_NONE, "action %d event %d", a->action, a->event);
    if (js_event_is_count(a->event)) FZ_CHECK(a->interval_ns >= 1 && a->interval_ns <= 1000000000LL, "count");
    else FZ_CHECK(a->interval_ns >= JS_MIN_INTERVAL_NS && a->interval_ns <= JS_HOUR_NS, "interval %lld",
                  a->interval_ns);
    FZ_CHECK(a->jstackdepth >= 1 && a->jstackdepth <= JS_MAX_JSTACKDEPTH, "jstackdepth %d", a->jstackdepth);
    FZ_CHECK(a->wall_ns == 0 || (a->wall_ns >= 1000000LL && a->wall_ns <= JS_HOUR_NS) ||
                 (a->event == JS_EV_WALL && a->wall_ns == a->interval_ns),
             "wall %lld", a->wall_ns);
    FZ_CHECK(a->lock_ns >= -1 && a->lock_ns <= JS_HOUR_NS, "lock %lld", a->lock_ns);
    FZ_CHECK(a->alloc_bytes <= (1ull << 50), "alloc %llu", (unsigned long long)a->alloc_bytes);
    FZ_CHECK(a->chunk_size == 0 || a->chunk_size >= 65536, "chunksize");
    FZ_CHECK(a->chunk_time_ns == 0 || (a->chunk_time_ns >= 1000000000LL && a->chunk_time_ns <= JS_HOUR_NS),
             "chunktime");
    FZ_CHECK(a->jfr_max_size == 0 || a->jfr_max_size >= 65536, "jfrmaxsize");
    FZ_CHECK(a->timeout_ns == 0 || a->timeout_ns >= 1000000LL, "timeout");
    FZ_CHECK(a->loop_ns == 0 || a->loop_ns >= 1000000000LL, "loop");
    FZ_CHECK(a->flat_top >= 0 && a->flat_top <= 100000, "flat %d", a->flat_top);
    FZ_CHECK(fz_fits(a->file, sizeof a->file) && fz_fits(a->jfrfile, sizeof a->jfrfile) &&
                 fz_fits(a->log, sizeof a->log) &&
                 fz_fits(a->title, sizeof a->title) && fz_fits(a->include, sizeof a->include) &&
                 fz_fits(a->exclude, sizeof a->exclude) && fz_fits(a->filter, sizeof a->filter) &&
                 fz_fits(a->tracepoint, sizeof a->tracepoint) && fz_fits(a->interval_raw, sizeof a->interval_raw),
             "a text overran its buffer");
    if (a->event == JS_EV_TRACEPOINT) FZ_CHECK(strchr(a->tracepoint, ':') != NULL, "tracepoint '%s'", a->tracepoint);
    int count = 0;
    unsigned set = js_kinds(a, &count);
    FZ_CHECK((unsigned)count == (unsigned)__builtin_popcount(set), "kinds");
    for (int k = 0; k < JS_KINDS; k++) FZ_CHECK(js_kind_name(a, (js_kind)k) != NULL, "kind name");
    (void)js_args_output_format(a, a->file);
    /* %p, %t, %n expanded into buffers of every size: within them, terminated, or -1 */
    static const size_t caps[] = {1, 2, 7, 16, 64, 4096};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        char out[4096 + 1];
        out[caps[i]] = 'x';
        if (js_expand_path_seq(a->file, 12345, 1700000000LL, 7, out, caps[i]) == 0)
            FZ_CHECK(strlen(out) < caps[i], "expanded past %zu", caps[i]);
        FZ_CHECK(out[caps[i]] == 'x', "wrote past %zu", caps[i]);
        if (js_args_jfr_path(a, 1, 0, out, caps[i]) == 0) FZ_CHECK(strlen(out) < caps[i], "jfr path past %zu", caps[i]);
        FZ_CHECK(out[caps[i]] == 'x', "jfr path wrote past %zu", caps[i]);
    }
}

/* libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fz_cstr(data, size), err[512];
    js_args a;
    js_args_defaults(&a);
    err[0] = 0;
    if (js_args_parse(s, &a, err, sizeof err) == 0) check_args(&a);
    else FZ_CHECK(err[0] && fz_fits(err, sizeof err), "refused without a reason");

    js_task_opts o;
    err[0] = 0;
    if (js_task_parse_exec(s, &o, err, sizeof err) == 0) {
        char cmd[2048];
        const char *file = "/var/tmp/jsampler-tasks/t@i.seg0.jfr";
        long long iv = o.interval_ns ? o.interval_ns : 10000000;
        FZ_CHECK(js_task_start_command(&o, iv, 1 << 20, 3000, file, cmd, sizeof cmd) == 0,
                 "start command does not fit");
        js_args_defaults(&a);
        err[0] = 0;
        if (js_args_parse(cmd, &a, err, sizeof err) == 0) {
            check_args(&a);
            FZ_CHECK(a.action == JS_ACTION_START && strcmp(a.file, file) == 0 && !a.log[0] && !a.jfrfile[0],
                     "ExecArgs '%s' changed the output: '%s'", s, cmd);
            FZ_CHECK(a.timeout_ns == 3000000000LL, "ExecArgs '%s' changed the task's timeout: '%s'", s, cmd);
        } else {
            FZ_CHECK(err[0], "start command refused without a reason");
        }
    } else {
        FZ_CHECK(err[0] && fz_fits(err, sizeof err), "ExecArgs refused without a reason");
    }
    free(s);
    return 0;
}

/* fuzz_backend_msg.c - libFuzzer target for what the SkyWalking backend sends the task client (docs/FUZZING.md):
 * the protobuf messages of its answers, unpacked by the protoc-c generated code, and our handling of them.
 *
 * Each input is one answer's message bytes, taken both ways the client takes answers:
 *   - as getAsyncProfilerTaskCommands' Commands (js_sw_read_commands): each AsyncProfilerTaskQuery command
 *     becomes a task, whose ExecArgs are read (js_task_parse_exec) and turned into the dispatcher's start command
 *     (js_task_start_command, the recording path made from the TaskId as the spool makes it), which the agent's
 *     option parser then reads (js_args_parse);
 *   - as collect's AsyncProfilerCollectionResponse (js_sw_read_collect_answer).
 * Invariants beyond the sanitizers: every text kept fits its buffer; a task read as valid has a TaskId, a
 * CreateTime and a Duration of 1 s to a day; a start command always fits; and whatever the backend sends, a
 * start command the agent accepts writes to the task's own file under taskdir, with the task's size cap, and
 * names no other file (no log=, no jfrfile=): the backend chooses what to profile, never where files go.
 * Seeds: native-tests/fuzz-corpus/backend_msg, answers as the grpcio test backend builds them.
 */
#include "fuzz_util.h"

#include "../src/backend/backend_int.h"
#include "core/args.h"

#define MAX_TASKS 4
#define TASKDIR "/var/tmp/jsampler-tasks"
#define CAP (30ull << 20)

/* One task as the client would start it. */
static void start_task(const js_sw_task *t)
{
    js_task_opts o;
    char err[JS_TASK_MSG_MAX] = "";
    if (js_task_parse_exec(t->exec_args, &o, err, sizeof err) != 0) {
        FZ_CHECK(err[0] != 0, "refused ExecArgs without a reason");
        return;
    }
    FZ_CHECK(fz_fits(o.event, sizeof o.event) && o.event[0], "event '%.16s'", o.event);
    FZ_CHECK(fz_fits(o.kinds, sizeof o.kinds) && fz_fits(o.extra, sizeof o.extra) && fz_fits(o.notes, sizeof o.notes),
             "task options overran");
    char jfr[JS_BACKEND_PATH_MAX], seg[JS_BACKEND_PATH_MAX + 8], cmd[2048];
    js_spool_jfr_path(TASKDIR, t->id, "instance-1@host", jfr, sizeof jfr);
    FZ_CHECK(strncmp(jfr, TASKDIR "/", sizeof TASKDIR) == 0 && !strstr(jfr + sizeof TASKDIR, "/") &&
                 !strstr(jfr, ",") && strcmp(jfr + sizeof TASKDIR, ".jfr") != 0,
             "recording path '%s' leaves taskdir or is not one plain name", jfr);
    snprintf(seg, sizeof seg, "%.*s.seg0.jfr", (int)(strlen(jfr) - 4), jfr);
    long long timeout_ms = t->duration_s * 1000LL;
    FZ_CHECK(js_task_start_command(&o, o.interval_ns ? o.interval_ns : 10000000, CAP, timeout_ms, seg, cmd,
                                   sizeof cmd) == 0, "start command does not fit");
    js_args a;
    js_args_defaults(&a);
    if (js_args_parse(cmd, &a, err, sizeof err) != 0) {
        FZ_CHECK(err[0] != 0, "refused start command without a reason: %s", cmd);
        return;
    }
    FZ_CHECK(a.action == JS_ACTION_START, "command '%s' is not a start", cmd);
    FZ_CHECK(strcmp(a.file, seg) == 0, "the task moved the recording: file '%s' from '%s'", a.file, cmd);
    FZ_CHECK(!a.log[0] && !a.jfrfile[0], "the task names another file: '%s'", cmd);
    FZ_CHECK(a.jfr_max_size == CAP, "the task changed the size cap: '%s'", cmd);
    FZ_CHECK(a.timeout_ns == timeout_ms * 1000000LL, "the task's session does not end with it: '%s'", cmd);
}

/* libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    js_sw_task tasks[MAX_TASKS];
    int n = -1;
    char err[256] = "";
    int rc = js_sw_read_commands(data, size, tasks, MAX_TASKS, &n, err, sizeof err);
    FZ_CHECK(rc == 0 || (rc == -1 && err[0] && n == 0), "rc %d, %d tasks, '%s'", rc, n, err);
    FZ_CHECK(n >= 0 && n <= MAX_TASKS, "%d tasks", n);
    for (int i = 0; i < n; i++) {
        const js_sw_task *t = &tasks[i];
        FZ_CHECK(fz_fits(t->id, sizeof t->id) && fz_fits(t->serial, sizeof t->serial) &&
                     fz_fits(t->exec_args, sizeof t->exec_args) && fz_fits(t->invalid, sizeof t->invalid),
                 "task text overran");
        if (t->invalid[0]) continue;
        FZ_CHECK(t->id[0] && t->create_ms >= 0 && t->duration_s > 0 && t->duration_s <= 86400,
                 "accepted task: id '%s', create %lld, duration %d", t->id, t->create_ms, t->duration_s);
        start_task(t);
    }
    rc = js_sw_read_collect_answer(data, size);
    FZ_CHECK(rc >= -1 && rc <= 1, "collect answer %d", rc);
    return 0;
}

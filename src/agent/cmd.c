/* cmd.c - see cmd.h. */
#include "agent/cmd.h"

#include <stdio.h>

#include "core/args.h"
#include "core/symbols.h"
#include "core/dump.h"
#include "core/snapshot.h"
#include "util/log.h"
#include "core/profiler.h"
#include "util/version.h"

/* Checks beyond syntax that need no VM: formats the agent cannot write, outputs that cannot be created. */
static js_status check_request(const js_args *a, char *out, size_t outlen)
{
    if (a->begin[0]) { /* begin=/end= (ttsp): both must be functions of the process, at two addresses */
        uintptr_t b = js_symbols_find(a->begin), e = a->end[0] ? js_symbols_find(a->end) : 0;
        if (!b || (a->end[0] && !e)) {
            snprintf(out, outlen, "option '%s=%s': no native function of that name in this process", b ? "end" : "begin",
                     b ? a->end : a->begin);
            return JS_ERR_ARGS;
        }
        if (b == e) { /* async-profiler's words */
            snprintf(out, outlen, "begin and end symbols should not resolve to the same address");
            return JS_ERR_ARGS;
        }
    }
    if (a->event == JS_EV_FUNCTION && !js_symbols_find(a->tracepoint)) {
        snprintf(out, outlen, "option 'event=%s': neither an event nor a native function of this process (events: cpu, "
                 "ctimer, itimer, wall, alloc, lock, cpu-clock, task-clock, page-faults, context-switches, "
                 "cpu-migrations, cycles, instructions, cache-references, cache-misses, branch-instructions, "
                 "branch-misses, CATEGORY:NAME for a kernel tracepoint)", a->tracepoint);
        return JS_ERR_ARGS;
    }
    js_out_format f = js_args_output_format(a, a->file);
    if (f == JS_OUT_JSON_TREE) {
        snprintf(out, outlen, "option 'file=%s': the json tree is made by 'jsampler convert', not by the agent",
                 a->file);
        return JS_ERR_ARGS;
    }
    if (f == JS_OUT_JFR && !a->file[0] && a->action == JS_ACTION_START) {
        snprintf(out, outlen, "option 'jfr': a JFR recording needs file=PATH");
        return JS_ERR_ARGS;
    }
    if (f == JS_OUT_PPROF && !a->file[0] && a->action != JS_ACTION_STATUS && a->action != JS_ACTION_VERSION) {
        snprintf(out, outlen, "option 'pprof': a pprof profile (gzip-compressed) needs file=PATH, not the JVM's stdout");
        return JS_ERR_ARGS;
    }
    int snapshot = a->action == JS_ACTION_THREADDUMP || a->action == JS_ACTION_THREADSTARTS;
    if (snapshot && (f == JS_OUT_JFR || a->jfrfile[0])) {
        snprintf(out, outlen, "option '%s': a thread snapshot is written as a profile (collapsed, flat, tree, html, "
                              "pprof), not as a JFR recording", f == JS_OUT_JFR ? "jfr" : "jfrfile");
        return JS_ERR_ARGS;
    }
    if (f == JS_OUT_JFR && a->jfrfile[0]) {
        snprintf(out, outlen, "option 'jfrfile=%s': file= is already a JFR recording", a->jfrfile);
        return JS_ERR_ARGS;
    }
    if (a->action == JS_ACTION_START || a->action == JS_ACTION_STOP || a->action == JS_ACTION_DUMP || snapshot) {
        if (js_dump_check_output(a->file, out, outlen) != 0) return JS_ERR_IO;
        if (js_dump_check_output(a->jfrfile, out, outlen) != 0) return JS_ERR_IO;
    }
    return JS_OK;
}

js_status js_validate(const char *cmd, char *out, size_t outlen)
{
    js_args a;
    js_args_defaults(&a);
    if (js_args_parse(cmd, &a, out, outlen) != 0) return JS_ERR_ARGS;
    return check_request(&a, out, outlen);
}

/* The events this agent offers, as async-profiler's list action names them. */
static void list_events(char *out, size_t outlen)
{
    snprintf(out, outlen, "Basic events:\n  cpu\n  alloc\n  lock\n  wall\n  ctimer\n  itimer\n"
             "Perf events:\n  cpu-clock\n  task-clock\n  page-faults\n  context-switches\n  cpu-migrations\n"
             "  cycles\n  instructions\n  cache-references\n  cache-misses\n  branch-instructions\n"
             "  branch-misses\n  CATEGORY:NAME (a kernel tracepoint)\n  FUNCTION (a native function's calls: malloc, "
             "G1CollectedHeap::humongous_obj_allocate)");
}

js_status js_execute(const char *cmd, char *out, size_t outlen)
{
    return js_execute_capture(cmd, NULL, out, outlen);
}

js_status js_execute_capture(const char *cmd, void *capture, char *out, size_t outlen)
{
    js_args a;
    js_args_defaults(&a);
    if (js_args_parse(cmd, &a, out, outlen) != 0) return JS_ERR_ARGS;
    a.capture = capture;
    if (a.action == JS_ACTION_NONE && a.format != JS_OUT_NONE) a.action = JS_ACTION_DUMP; /* "collapsed": a dump */
    js_status st = check_request(&a, out, outlen);
    if (st != JS_OK) return st;
    /* Each option changes only itself: loglevel= keeps the log file, log= keeps the level. */
    char err[256];
    if (a.log[0] && js_log_set_file(a.log, err, sizeof err) != 0) js_error("%s", err);
    if (a.loglevel_set) js_log_set_level(a.loglevel);
    js_debug("command '%s'", cmd);
    switch (a.action) {
    case JS_ACTION_START:
    case JS_ACTION_RESUME: return js_profiler_start(&a, out, outlen);
    case JS_ACTION_LIST: list_events(out, outlen); return JS_OK;
    case JS_ACTION_STOP: return js_profiler_stop(&a, out, outlen);
    case JS_ACTION_DUMP: return js_profiler_dump(&a, out, outlen);
    case JS_ACTION_STATUS: return js_profiler_status(out, outlen);
    case JS_ACTION_VERSION: snprintf(out, outlen, "jsampler %s", JS_VERSION); return JS_OK;
    case JS_ACTION_THREADDUMP: return js_snapshot_threads(&a, out, outlen);
    case JS_ACTION_THREADSTARTS: return js_snapshot_thread_starts(&a, out, outlen);
    case JS_ACTION_NONE: break;
    }
    snprintf(out, outlen, "no command given (expected start, resume, stop, dump, status, list, version, threaddump or "
                          "threadstarts)");
    return JS_ERR_ARGS;
}

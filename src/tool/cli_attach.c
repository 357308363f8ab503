/* cli_attach.c - the verbs that drive a running JVM: list, start, status, dump, stop, collect.
 *
 * Each verb turns its flags (asprof's where asprof has one) into one agent command string, loads
 * the agent into the target with it (attach.h) and prints the agent's reply. The attach protocol
 * carries only the agent's return code, so the command also names a reply file in the target's
 * /tmp ("reply=PATH", read by the agent's Agent_OnAttach only, its name not to be guessed), which
 * the agent creates and we read (only if it is the JVM user's regular file) and remove.
 */
#include "cli_int.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attach/attach.h"

#define CMD_MAX 1024      /* the attach protocol's limit on one argument */
#define DEFAULT_TIMEOUT_MS 6000

typedef struct {
    const char *verb;
    const char *event, *interval, *file, *format, *title, *lib, *raw;
    char include[512], exclude[512];
    int threads;
    long duration_s;
    int timeout_ms;
    int pid;
} cli_opts;

static void verb_help(FILE *f, const char *verb)
{
    fprintf(f,
            "Usage: jsampler %s [OPTIONS] PID [-- AGENT_OPTIONS]\n"
            "\n"
            "  list                     running JVMs: pid, JDK, whether they can be attached, main class or jar\n"
            "  start PID                start profiling (-e, -i, -f, -o, -t, -I, -X, --title)\n"
            "  status PID               the session: state, event, interval, elapsed, samples, drops, failed walks,\n"
            "                           samples per second\n"
            "  dump PID                 write the profile so far without stopping (-f, -o)\n"
            "  stop PID                 stop and write the profile (-f, -o)\n"
            "  collect -d SECONDS PID   start, wait (Ctrl-C stops early and still writes), stop\n"
            "  attach-backend PID OPTS  start the SkyWalking task client in the JVM; OPTS as with -agentpath:\n"
            "                           backend=HOST:PORT,service=NAME[,instance=,token=,tls,cafile=,poll=,...];\n"
            "                           what they leave out (all of them, if none) comes from the JVM's\n"
            "                           SW_AGENT_* variables\n"
            "\n"
            "Options:\n"
            "  -e EVENT       cpu (default), ctimer, itimer, wall, alloc, lock, page-faults,\n"
            "                 context-switches, cpu-migrations, task-clock, cpu-clock or a hardware\n"
            "                 counter; more events after --, e.g. -- alloc,lock,file=p-%%e.html\n"
            "  -i INTERVAL    sampling interval: 10ms (default), 1ms, 500us, or ns\n"
            "  -d SECONDS     collect: how long to profile\n"
            "  -f FILE        output file (made absolute here); its extension picks the format\n"
            "  -o FORMAT      collapsed, flat, tree, html, jfr or pprof (overrides the extension)\n"
            "  -t             one root frame per thread\n"
            "  -I PATTERN     keep only stacks with a matching frame (repeatable)\n"
            "  -X PATTERN     drop stacks with a matching frame (repeatable)\n"
            "  --title TITLE  title of the flame graph and of the flat and tree headers\n"
            "  --lib PATH     agent library (default: libjsampler.so beside this program)\n"
            "  --timeout MS   how long to wait for the JVM's attach listener (default %d)\n"
            "  -- OPTIONS     any agent option string, as with -agentpath, appended to the command\n"
            "\n"
            "Exit status: 0 done; 2 usage error; 4 the JVM could not be attached (no such process, not a JVM,\n"
            "permission, attach disabled, timed out, library unusable); 5 the agent refused the command (bad\n"
            "option, or the session is not in the right state: e.g. stop while idle). Each failure prints one line.\n",
            verb ? verb : "VERB", DEFAULT_TIMEOUT_MS);
}

/* Append ",text" to cmd (bounded); -1 if it does not fit. */
static int add(char *cmd, size_t len, const char *key, const char *val)
{
    size_t n = strlen(cmd);
    int w = snprintf(cmd + n, len - n, "%s%s%s%s", n ? "," : "", key, val ? "=" : "", val ? val : "");
    return w < 0 || (size_t)w >= len - n ? -1 : 0;
}

/* pattern appended to a '|'-joined list. */
static int add_pattern(char *list, size_t len, const char *p)
{
    size_t n = strlen(list);
    int w = snprintf(list + n, len - n, "%s%s", n ? "|" : "", p);
    return w < 0 || (size_t)w >= len - n ? -1 : 0;
}

/* Parse flags and the pid; 0, or an exit code. */
static int parse(int argc, char **argv, cli_opts *o)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = !strcmp(a, "-e") || !strcmp(a, "-i") || !strcmp(a, "-d") || !strcmp(a, "-f") ||
                    !strcmp(a, "-o") || !strcmp(a, "-I") || !strcmp(a, "-X") || !strcmp(a, "--title") ||
                    !strcmp(a, "--lib") || !strcmp(a, "--timeout");
        if (takes && !next) return js_cli_die(CLI_EXIT_USAGE, "%s: %s needs a value (see jsampler %s --help)", o->verb, a, o->verb);
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            verb_help(stdout, o->verb);
            return -1;
        } else if (!strcmp(a, "--")) {
            o->raw = i + 1 < argc ? argv[i + 1] : NULL;
            if (i + 2 < argc) return js_cli_die(CLI_EXIT_USAGE, "%s: give the agent options after -- as one argument", o->verb);
            break;
        } else if (!strcmp(a, "-e")) o->event = next;
        else if (!strcmp(a, "-i")) o->interval = next;
        else if (!strcmp(a, "-f")) o->file = next;
        else if (!strcmp(a, "-o")) o->format = next;
        else if (!strcmp(a, "--title")) o->title = next;
        else if (!strcmp(a, "--lib")) o->lib = next;
        else if (!strcmp(a, "-t")) o->threads = 1;
        else if (!strcmp(a, "-d")) {
            char *end;
            o->duration_s = strtol(next, &end, 10);
            if (*end || o->duration_s <= 0) return js_cli_die(CLI_EXIT_USAGE, "%s: -d expects seconds > 0, not '%s'", o->verb, next);
        } else if (!strcmp(a, "--timeout")) {
            char *end;
            o->timeout_ms = (int)strtol(next, &end, 10);
            if (*end || o->timeout_ms <= 0) return js_cli_die(CLI_EXIT_USAGE, "%s: --timeout expects ms > 0", o->verb);
        } else if (!strcmp(a, "-I") || !strcmp(a, "-X")) {
            char *list = a[1] == 'I' ? o->include : o->exclude;
            if (add_pattern(list, sizeof o->include, next) != 0) return js_cli_die(CLI_EXIT_USAGE, "%s: patterns too long", o->verb);
        } else if (a[0] == '-') {
            return js_cli_die(CLI_EXIT_USAGE, "%s: unknown option '%s' (see jsampler %s --help)", o->verb, a, o->verb);
        } else if (!o->pid) {
            char *end;
            long pid = strtol(a, &end, 10);
            if (*end || pid <= 0 || pid > INT_MAX) return js_cli_die(CLI_EXIT_USAGE, "%s: '%s' is not a process id", o->verb, a);
            o->pid = (int)pid;
        } else if (!strcmp(o->verb, "attach-backend") && !o->raw) {
            o->raw = a; /* the task client's options */
        } else {
            return js_cli_die(CLI_EXIT_USAGE, "%s: unexpected argument '%s'", o->verb, a);
        }
        if (takes) i++;
    }
    if (!o->pid) return js_cli_die(CLI_EXIT_USAGE, "%s: which JVM? give its pid (see jsampler list)", o->verb);
    if (!strcmp(o->verb, "collect") && !o->duration_s) return js_cli_die(CLI_EXIT_USAGE, "collect: -d SECONDS is required");
    return 0;
}

/* The output options of a command: file (absolute), format, threads, filters, title. 0 or -1. */
static int add_outputs(const cli_opts *o, char *cmd, size_t len)
{
    char abs[PATH_MAX + 2];
    if (o->file) {
        if (o->file[0] == '/') snprintf(abs, sizeof abs, "%s", o->file);
        else {
            char cwd[PATH_MAX];
            if (!getcwd(cwd, sizeof cwd)) return -1;
            if (snprintf(abs, sizeof abs, "%s/%s", cwd, o->file) >= (int)sizeof abs) return -1;
        }
        if (add(cmd, len, "file", abs) != 0) return -1;
    }
    if (o->format && add(cmd, len, o->format, NULL) != 0) return -1;
    if (o->threads && add(cmd, len, "threads", NULL) != 0) return -1;
    if (o->include[0] && add(cmd, len, "include", o->include) != 0) return -1;
    if (o->exclude[0] && add(cmd, len, "exclude", o->exclude) != 0) return -1;
    if (o->title && add(cmd, len, "title", o->title) != 0) return -1;
    return 0;
}

/* 1 if the option string opts holds a 'backend' or 'backend=...' token. */
static int has_backend(const char *opts)
{
    for (const char *p = opts ? opts : ""; *p;) {
        size_t n = strcspn(p, ",");
        if (n >= 7 && strncmp(p, "backend", 7) == 0 && (n == 7 || p[7] == '=')) return 1;
        p += n;
        if (*p == ',') p++;
    }
    return 0;
}

/* The agent command for verb ("start" for collect's first step). 0 or an exit code. */
static int build(const cli_opts *o, const char *verb, char *cmd, size_t len)
{
    cmd[0] = 0;
    int rc = 0;
    if (strcmp(verb, "attach-backend")) rc = add(cmd, len, verb, NULL);
    else if (!has_backend(o->raw)) rc = add(cmd, len, "backend", NULL); /* the verb asks for the client */
    if (!strcmp(verb, "start")) {
        if (!rc && o->event) rc = add(cmd, len, "event", o->event);
        if (!rc && o->interval) rc = add(cmd, len, "interval", o->interval);
    }
    if (!rc && (!strcmp(verb, "start") || !strcmp(verb, "stop") || !strcmp(verb, "dump"))) rc = add_outputs(o, cmd, len);
    if (!rc && o->raw && o->raw[0]) rc = add(cmd, len, o->raw, NULL);
    if (rc) return js_cli_die(CLI_EXIT_USAGE, "%s: the agent command is longer than %d bytes", o->verb, CMD_MAX);
    return 0;
}

/* Default agent library: libjsampler.so beside this executable. */
static int default_lib(char *buf, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = 0;
    return snprintf(buf, len, "%s/libjsampler.so", exe) < (int)len ? 0 : -1;
}

/* Attach to o->pid and run one agent command; prints the reply. 0, or an exit code. */
static int run_agent(const cli_opts *o, const char *command)
{
    js_target t;
    char err[1024];
    js_attach_code ac = js_target_inspect(o->pid, &t, err, sizeof err);
    if (ac != JS_AT_OK) return js_cli_die(CLI_EXIT_ATTACH, "%s", err);
    if (t.is_jvm == 0)
        return js_cli_die(CLI_EXIT_ATTACH, "process %d is not a HotSpot JVM (no libjvm.so in its memory map; see jsampler list)",
                    o->pid);
    if (t.java_major && t.java_major != 17 && t.java_major != 25)
        fprintf(stderr, "jsampler: warning: process %d runs Java %s; jsampler is tested on 17 and 25\n", o->pid,
                t.java_version);
    if ((ac = js_attach_clear_stale(&t, err, sizeof err)) != JS_AT_OK) return js_cli_die(CLI_EXIT_ATTACH, "%s", err);
    if ((ac = js_attach_become(&t, err, sizeof err)) != JS_AT_OK) return js_cli_die(CLI_EXIT_ATTACH, "%s", err);
    if (t.is_jvm < 0 && geteuid() != t.uid)
        return js_cli_die(CLI_EXIT_ATTACH, "cannot read the memory map of process %d", o->pid);
    char lib[PATH_MAX], where[PATH_MAX];
    if (o->lib) snprintf(lib, sizeof lib, "%s", o->lib);
    else if (default_lib(lib, sizeof lib) != 0) return js_cli_die(CLI_EXIT_ATTACH, "cannot find libjsampler.so beside jsampler");
    if ((ac = js_attach_place_library(&t, lib, where, sizeof where, err, sizeof err)) != JS_AT_OK)
        return js_cli_die(CLI_EXIT_ATTACH, "%s", err);
    char name[96], opts[CMD_MAX + 128], text[4096], reply[16384];
    js_attach_reply_name(&t, name, sizeof name);
    snprintf(opts, sizeof opts, "%s,reply=%s", command, name);
    int agent_rc;
    ac = js_attach_load(&t, where, opts, o->timeout_ms ? o->timeout_ms : DEFAULT_TIMEOUT_MS, &agent_rc, text,
                        sizeof text, err, sizeof err);
    if (js_attach_take_reply(&t, name, reply, sizeof reply) == 0) js_cli_reply_text(reply);
    if (ac != JS_AT_OK) return js_cli_die(CLI_EXIT_ATTACH, "%s", err);
    if (agent_rc != 0)
        return js_cli_die(CLI_EXIT_AGENT, "%s", reply[0] ? reply : "the agent refused the command (see the JVM's log)");
    if (reply[0]) printf("%s\n", reply);
    return fflush(stdout) == 0 ? 0 : CLI_EXIT_IO;
}

/* collect: SIGINT/SIGTERM end the wait early. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    interrupted = sig;
}

static int collect(const cli_opts *o)
{
    char cmd[CMD_MAX + 1];
    int rc = build(o, "start", cmd, sizeof cmd);
    if (rc || (rc = run_agent(o, cmd)) != 0) return rc;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct timespec end, now;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += o->duration_s;
    do {
        struct timespec step = {0, 100000000L};
        nanosleep(&step, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (!interrupted && (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec)));
    if (interrupted) fprintf(stderr, "jsampler: interrupted: stopping and writing the profile\n");
    if ((rc = build(o, "stop", cmd, sizeof cmd)) != 0) return rc;
    return run_agent(o, cmd);
}

int js_cli_attach_verb(const char *verb, int argc, char **argv)
{
    cli_opts o;
    memset(&o, 0, sizeof o);
    o.verb = verb;
    int rc = parse(argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
    signal(SIGPIPE, SIG_IGN);
    if (!strcmp(verb, "collect")) return collect(&o);
    char cmd[CMD_MAX + 1];
    if ((rc = build(&o, verb, cmd, sizeof cmd)) != 0) return rc;
    return run_agent(&o, cmd);
}

/* One row of `list`. */
static int list_row(const js_target *t, void *ctx)
{
    const char *why = t->listening ? "yes (listening)"
                      : t->disabled ? "no: -XX:+DisableAttachMechanism"
                      : geteuid() != 0 && geteuid() != t->uid ? "no: another user's JVM"
                      : !t->catches_quit ? "no: does not handle SIGQUIT"
                                         : "yes";
    printf("%-8d %-10s %-32s %s%s\n", t->pid, t->java_version[0] ? t->java_version : "?", why,
           t->main[0] ? t->main : "?", t->other_mnt ? " (in a container)" : "");
    return 0;
}

int js_cli_list(int argc, char **argv)
{
    if (argc > 0 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        verb_help(stdout, "list");
        return 0;
    }
    if (argc > 0) return js_cli_die(CLI_EXIT_USAGE, "list: unexpected argument '%s'", argv[0]);
    printf("%-8s %-10s %-32s %s\n", "PID", "JDK", "ATTACHABLE", "MAIN");
    if (js_attach_list(list_row, NULL) != 0) return js_cli_die(CLI_EXIT_IO, "list: cannot read /proc");
    return fflush(stdout) == 0 ? 0 : CLI_EXIT_IO;
}

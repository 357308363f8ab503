/* cli_attach.c - the actions that drive a running JVM (start, resume, stop, dump, status, list, version,
 * collect, attach-backend) and the list of JVMs.
 *
 * Each action becomes one agent command string (cli_args.c reads asprof's command line), loaded into the
 * target with it (attach.h); the agent's reply is printed. The attach protocol carries only the agent's
 * return code, so the command also names a reply file in the target's /tmp ("reply=PATH", read by the
 * agent's Agent_OnAttach only, its name not to be guessed), which the agent creates and we read (only if it is
 * the JVM user's regular file) and remove. A profile written without -f goes, as with asprof, through a file in
 * the target's /tmp (named and read the same way) that we copy to our stdout and remove: stdout carries the
 * profile (and status, list, version), stderr the agent's messages.
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

#define DEFAULT_TIMEOUT_MS 6000
#define OUT_CHUNK 65536

/* The target, resolved once for every command of a run. */
typedef struct {
    js_target t;
    char lib[PATH_MAX]; /* the library's path as the target sees it */
} cli_target;

/* Append ",key[=val]" to cmd (bounded); -1 if it does not fit. */
static int add(char *cmd, size_t len, const char *key, const char *val)
{
    if (!key || !key[0]) return 0;
    size_t n = strlen(cmd);
    int w = snprintf(cmd + n, len - n, "%s%s%s%s", n ? "," : "", key, val ? "=" : "", val ? val : "");
    return w < 0 || (size_t)w >= len - n ? -1 : 0;
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

/* Inspect the target, take its user, place the library. 0, or an exit code. */
static int prepare(const cli_opts *o, cli_target *ct)
{
    js_target *t = &ct->t;
    char err[1024];
    js_attach_code ac = js_target_inspect(o->pid, t, err, sizeof err);
    if (ac != JS_AT_OK) return js_cli_die(CLI_EXIT_ATTACH, "%s", err);
    if (t->is_jvm == 0)
        return js_cli_die(CLI_EXIT_ATTACH, "process %d is not a HotSpot JVM (no libjvm.so in its memory map; see jsampler list)",
                          o->pid);
    if (t->java_major && t->java_major != 17 && t->java_major != 25)
        fprintf(stderr, "jsampler: warning: process %d runs Java %s; jsampler is tested on 17 and 25\n", o->pid,
                t->java_version);
    if ((ac = js_attach_clear_stale(t, err, sizeof err)) != JS_AT_OK) return js_cli_die(CLI_EXIT_ATTACH, "%s", err);
    if ((ac = js_attach_become(t, err, sizeof err)) != JS_AT_OK) return js_cli_die(CLI_EXIT_ATTACH, "%s", err);
    if (t->is_jvm < 0 && geteuid() != t->uid)
        return js_cli_die(CLI_EXIT_ATTACH, "cannot read the memory map of process %d", o->pid);
    char lib[PATH_MAX];
    if (o->libpath) snprintf(lib, sizeof lib, "%s", o->libpath);
    else if (default_lib(lib, sizeof lib) != 0) return js_cli_die(CLI_EXIT_ATTACH, "cannot find libjsampler.so beside jsampler");
    if ((ac = js_attach_place_library(t, lib, ct->lib, sizeof ct->lib, err, sizeof err)) != JS_AT_OK)
        return js_cli_die(CLI_EXIT_ATTACH, "%s", err);
    return 0;
}

/* Run one agent command in the target; the reply goes to stdout (to_stdout) or stderr. 0, or an exit code. */
static int run_agent(const cli_opts *o, const cli_target *ct, const char *command, int to_stdout)
{
    char name[96], opts[CLI_CMD_MAX + 128], text[4096], reply[16384], err[1024];
    js_attach_reply_name(&ct->t, name, sizeof name);
    if (snprintf(opts, sizeof opts, "%s%sreply=%s", command, command[0] ? "," : "", name) >= (int)sizeof opts)
        return js_cli_die(CLI_EXIT_USAGE, "the agent command is longer than %d bytes", CLI_CMD_MAX);
    int agent_rc;
    js_attach_code ac = js_attach_load(&ct->t, ct->lib, opts, o->attach_timeout_ms ? o->attach_timeout_ms : DEFAULT_TIMEOUT_MS,
                                       &agent_rc, text, sizeof text, err, sizeof err);
    if (js_attach_take_reply(&ct->t, name, reply, sizeof reply) == 0) js_cli_reply_text(reply);
    if (ac != JS_AT_OK) return js_cli_die(CLI_EXIT_ATTACH, "%s", err);
    if (agent_rc != 0)
        return js_cli_die(CLI_EXIT_AGENT, "%s", reply[0] ? reply : "the agent refused the command (see the JVM's log)");
    if (reply[0]) fprintf(to_stdout ? stdout : stderr, "%s\n", reply);
    return fflush(stdout) == 0 ? 0 : CLI_EXIT_IO;
}

/* Copy the file the agent wrote (path as the target sees it) to our stdout and remove it. 0, or an exit code. */
static int print_output(const cli_target *ct, const char *path)
{
    int fd = js_attach_take_file(&ct->t, path);
    if (fd < 0) return 0; /* nothing was written there (e.g. the session's output is a JFR file of its own) */
    static char buf[OUT_CHUNK];
    ssize_t r;
    int rc = 0;
    while ((r = read(fd, buf, sizeof buf)) > 0)
        if (fwrite(buf, 1, (size_t)r, stdout) != (size_t)r) rc = CLI_EXIT_IO;
    if (r < 0) rc = js_cli_die(CLI_EXIT_IO, "cannot read the profile at %s%s: %s", ct->t.root, path, strerror(errno));
    close(fd);
    if (fflush(stdout) != 0) rc = CLI_EXIT_IO;
    return rc;
}

/* -f made absolute (asprof does so with its own working directory), or the temporary output in the target's /tmp
 * when tmp is given and there is no -f. 0 or an exit code. */
static int output_path(const cli_opts *o, const cli_target *ct, int tmp, char *out, size_t len)
{
    out[0] = 0;
    if (o->file && o->file[0] == '/') {
        snprintf(out, len, "%s", o->file);
    } else if (o->file) {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd) || snprintf(out, len, "%s/%s", cwd, o->file) >= (int)len)
            return js_cli_die(CLI_EXIT_USAGE, "-f %s: the path is too long", o->file);
    } else if (tmp) {
        js_attach_tmp_name(&ct->t, "out", out, len);
    }
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

/* The agent command for action (collect's steps are "start" and "stop"): the action, the file, -o, the output
 * options, what only a start takes, quiet for collect, the options after --. 0 or an exit code. */
static int build(const cli_opts *o, const char *action, const char *file, int quiet, char *cmd, size_t len)
{
    cmd[0] = 0;
    int starts = !strcmp(action, "start") || !strcmp(action, "resume");
    int writes = starts || !strcmp(action, "stop") || !strcmp(action, "dump");
    int rc = 0;
    if (strcmp(action, "attach-backend")) rc = add(cmd, len, action, NULL);
    else if (!has_backend(o->raw)) rc = add(cmd, len, "backend", NULL); /* the action asks for the client */
    if (!rc && writes && file[0]) rc = add(cmd, len, "file", file);
    if (!rc && writes && o->output) rc = add(cmd, len, o->output, NULL);
    if (!rc && writes) rc = add(cmd, len, o->outopts, NULL);
    if (!rc && starts) rc = add(cmd, len, o->params, NULL);
    if (!rc && quiet) rc = add(cmd, len, "quiet", NULL);
    if (!rc && o->raw && o->raw[0]) rc = add(cmd, len, o->raw, NULL);
    if (rc) return js_cli_die(CLI_EXIT_USAGE, "the agent command is longer than %d bytes", CLI_CMD_MAX);
    return 0;
}

/* collect: SIGINT/SIGTERM end the wait early. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    interrupted = sig;
}

/* Start, wait -d seconds (or until interrupted, or until the JVM exits), stop; the profile on stdout when there
 * is no -f. */
static int collect(const cli_opts *o, const cli_target *ct)
{
    char cmd[CLI_CMD_MAX + 1], file[PATH_MAX];
    int rc = output_path(o, ct, 1, file, sizeof file);
    if (rc || (rc = build(o, "start", file, 1, cmd, sizeof cmd)) != 0 || (rc = run_agent(o, ct, cmd, 0)) != 0) return rc;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    fprintf(stderr, "Profiling for %ld seconds\n", o->duration_s);
    struct timespec end, now;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += o->duration_s;
    int gone = 0;
    do {
        struct timespec step = {0, 100000000L};
        nanosleep(&step, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
        gone = kill(o->pid, 0) != 0 && errno == ESRCH;
    } while (!interrupted && !gone && (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec)));
    if (gone) { /* the agent wrote the profile at the JVM's exit, to the start's file */
        fprintf(stderr, "jsampler: process %d exited: its profile was written at its exit\n", o->pid);
        return o->file ? 0 : print_output(ct, file);
    }
    if (interrupted) fprintf(stderr, "jsampler: interrupted: stopping and writing the profile\n");
    if ((rc = build(o, "stop", file, 1, cmd, sizeof cmd)) != 0) return rc;
    rc = run_agent(o, ct, cmd, 0);
    int prc = o->file ? 0 : print_output(ct, file);
    return rc ? rc : prc;
}

int js_cli_run(const cli_opts *o)
{
    cli_target ct;
    memset(&ct, 0, sizeof ct);
    int rc = prepare(o, &ct);
    if (rc) return rc;
    signal(SIGPIPE, SIG_IGN);
    if (!strcmp(o->action, "collect")) return collect(o, &ct);
    /* dump -o jfr completes the session's own recording where it is: no file of ours to print */
    int jfr_dump = !strcmp(o->action, "dump") && o->output && !strcmp(o->output, "jfr") && !o->file;
    int writes = (!strcmp(o->action, "stop") || !strcmp(o->action, "dump")) && !jfr_dump;
    char cmd[CLI_CMD_MAX + 1], file[PATH_MAX];
    if ((rc = output_path(o, &ct, writes, file, sizeof file)) != 0) return rc;
    if ((rc = build(o, o->action, file, 0, cmd, sizeof cmd)) != 0) return rc;
    int starts = !strcmp(o->action, "start") || !strcmp(o->action, "resume");
    rc = run_agent(o, &ct, cmd, !(starts || writes));
    int prc = writes && !o->file ? print_output(&ct, file) : 0;
    return rc ? rc : prc;
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
    if (argc > 0) return js_cli_die(CLI_EXIT_USAGE, "list: unexpected argument '%s'", argv[0]);
    printf("%-8s %-10s %-32s %s\n", "PID", "JDK", "ATTACHABLE", "MAIN");
    if (js_attach_list(list_row, NULL) != 0) return js_cli_die(CLI_EXIT_IO, "list: cannot read /proc");
    return fflush(stdout) == 0 ? 0 : CLI_EXIT_IO;
}

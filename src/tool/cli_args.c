/* cli_args.c - asprof's command line, read into one request (cli_int.h).
 *
 * `jsampler [action] [options] PID` as asprof takes it: the action first or anywhere, collect by default;
 * every asprof flag either becomes the agent option asprof would send (the agent implements it or refuses
 * it in one line naming it) or is refused here when it has no meaning for jsampler. Options are split as
 * asprof splits them: what only a start needs (the events) and what every command that writes needs (the
 * output's names, filters and counters).
 */
#include "cli_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/attach.h"

enum { TO_START = 1, TO_OUTPUT = 2 };

/* asprof's flags: short and long spelling, whether a value follows, where it goes, the agent's word. */
typedef struct {
    const char *s, *l;
    int value;
    int to;
    const char *key;
} cli_flag;

static const cli_flag flags[] = {
    {"-e", "--event", 1, TO_START, "event"},
    {"-i", "--interval", 1, TO_START, "interval"},
    {"-j", "--jstackdepth", 1, TO_START, "jstackdepth"},
    {"-t", "--threads", 0, TO_START, "threads"},
    {"-s", "--simple", 0, TO_OUTPUT, "simple"},
    {"-n", "--norm", 0, TO_OUTPUT, "norm"},
    {"-g", "--sig", 0, TO_OUTPUT, "sig"},
    {"-a", "--ann", 0, TO_OUTPUT, "ann"},
    {"-l", "--lib", 0, TO_OUTPUT, "lib"},
    {NULL, "--dot", 0, TO_OUTPUT, "dot"},
    {"-I", "--include", 1, TO_OUTPUT, "include"},
    {"-X", "--exclude", 1, TO_OUTPUT, "exclude"},
    {"-L", "--log", 1, TO_OUTPUT, "loglevel"},
    {"-F", "--features", 1, TO_OUTPUT, "features"},
    {NULL, "--filter", 1, TO_START, "filter"},
    {NULL, "--title", 1, TO_OUTPUT, "title"},
    {NULL, "--width", 1, TO_OUTPUT, "width"},
    {NULL, "--height", 1, TO_OUTPUT, "height"},
    {NULL, "--minwidth", 1, TO_OUTPUT, "minwidth"},
    {NULL, "--inverted", 0, TO_OUTPUT, "inverted"},
    {NULL, "--samples", 0, TO_OUTPUT, "samples"},
    {NULL, "--total", 0, TO_OUTPUT, "total"},
    {NULL, "--alloc", 1, TO_START, "alloc"},
    {NULL, "--nativemem", 1, TO_START, "nativemem"},
    {NULL, "--nativelock", 1, TO_START, "nativelock"},
    {NULL, "--lock", 1, TO_START, "lock"},
    {NULL, "--wall", 1, TO_START, "wall"},
    {NULL, "--trace", 1, TO_START, "trace"},
    {NULL, "--chunksize", 1, TO_START, "chunksize"},
    {NULL, "--chunktime", 1, TO_START, "chunktime"},
    {NULL, "--cstack", 1, TO_START, "cstack"},
    {NULL, "--signal", 1, TO_START, "signal"},
    {NULL, "--clock", 1, TO_START, "clock"},
    {NULL, "--begin", 1, TO_START, "begin"},
    {NULL, "--end", 1, TO_START, "end"},
    {NULL, "--target-cpu", 1, TO_START, "target-cpu"},
    {NULL, "--proc", 1, TO_START, "proc"},
    {NULL, "--memlimit", 1, TO_START, "memlimit"},
    {NULL, "--all", 0, TO_START, "all"},
    {NULL, "--live", 0, TO_START, "live"},
    {NULL, "--nobatch", 0, TO_START, "nobatch"},
    {NULL, "--nofree", 0, TO_START, "nofree"},
    {NULL, "--nostop", 0, TO_START, "nostop"},
    {NULL, "--record-cpu", 0, TO_START, "record-cpu"},
    {NULL, "--sched", 0, TO_START, "sched"},
    {NULL, "--tlab", 0, TO_START, "tlab"},
    {NULL, "--ttsp", 0, TO_START, "ttsp"},
    {NULL, "--all-user", 0, TO_START, "alluser"},
    {NULL, "--fdtransfer", 0, TO_START, "fdtransfer"},
    {NULL, "--jfrsync", 1, TO_START, "jfrsync"},
    {NULL, "--jfropts", 1, TO_START, "jfropts"},
    {NULL, "--timeout", 1, TO_START, "timeout"},
    {NULL, "--loop", 1, TO_START, "loop"},
};

/* The actions, asprof's and jsampler's own. */
static const char *const actions[] = {"start", "resume", "stop", "dump", "status", "metrics", "list", "collect",
                                      "version", "attach-backend"};

/* jattach's own actions, which asprof forwards to jattach. */
static const char *const jattach_actions[] = {"load", "jcmd", "threaddump", "dumpheap", "inspectheap"};

/* Append ",key[=val]" to list (cap bytes); the value's characters in from are replaced by to (for ',' inside values).
 * 0, or -1 if it does not fit. */
static int append(char *list, size_t cap, const char *key, const char *val, char from, const char *to)
{
    size_t n = strlen(list);
    int w = snprintf(list + n, cap - n, "%s%s%s", n ? "," : "", key, val ? "=" : "");
    if (w < 0 || (size_t)w >= cap - n) return -1;
    n += (size_t)w;
    for (const char *v = val; v && *v; v++) {
        const char *add = *v == from ? to : NULL;
        size_t k = add ? strlen(add) : 1;
        if (n + k + 1 > cap) return -1;
        if (add) memcpy(list + n, add, k);
        else list[n] = *v;
        n += k;
    }
    list[n] = 0;
    return 0;
}

/* 1 if s is one of the n words. */
static int one_of(const char *s, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, words[i]) == 0) return 1;
    return 0;
}

/* The flag named a, or NULL. */
static const cli_flag *find_flag(const char *a)
{
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if ((flags[i].s && !strcmp(a, flags[i].s)) || !strcmp(a, flags[i].l)) return &flags[i];
    return NULL;
}

/* One flag with its value into o; 0 or an exit code. */
static int take_flag(const cli_flag *f, const char *a, const char *v, cli_opts *o)
{
    char *list = f->to == TO_START ? o->params : o->outopts;
    size_t cap = f->to == TO_START ? sizeof o->params : sizeof o->outopts;
    char from = 0;
    const char *to = NULL;
    if (!strcmp(f->l, "--features")) from = ',', to = "+";
    else if (!strcmp(f->l, "--filter")) from = ',', to = ";";
    else if (!strcmp(f->l, "--title")) from = ',', to = "&#44;";
    if (append(list, cap, f->key, f->value ? v : NULL, from, to) != 0)
        return js_cli_die(CLI_EXIT_USAGE, "the agent command is longer than %d bytes (at %s)", CLI_CMD_MAX, a);
    if (!strcmp(f->l, "--jfrsync") || !strcmp(f->l, "--jfropts")) o->output = "jfr";
    if ((!strcmp(f->l, "--timeout") || !strcmp(f->l, "--loop")) && !strcmp(o->action, "collect") && !o->action_given)
        snprintf(o->action, sizeof o->action, "start");
    return 0;
}

/* A JVM named as jps names it: its main class (or its simple name) or jar. */
typedef struct {
    const char *name;
    int pid, matches;
    unsigned long long newest;
} jvm_pick;

/* Start time of pid in clock ticks since boot (0 if unknown). */
static unsigned long long start_time(int pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    unsigned long long t = 0;
    for (int field = 2; p && *p && field < 22; p++)
        if (*p == ' ') field++;
    if (p) t = strtoull(p, NULL, 10);
    return t;
}

/* js_attach_list callback: the newest JVM (name NULL), or the ones whose main is name. */
static int pick(const js_target *t, void *ctx)
{
    jvm_pick *k = ctx;
    if (k->name) {
        const char *m = t->main, *dot = strrchr(m, '.'), *slash = strrchr(m, '/');
        int jar = dot && !strcmp(dot, ".jar");
        const char *simple = jar ? (slash ? slash + 1 : m) : (dot ? dot + 1 : m);
        if (strcmp(m, k->name) && strcmp(simple, k->name)) return 0;
        k->matches++;
        k->pid = t->pid;
        return 0;
    }
    unsigned long long st = start_time(t->pid);
    if (!k->pid || st > k->newest) k->pid = t->pid, k->newest = st;
    k->matches++;
    return 0;
}

/* The pid for a target word: a number, "jps" (the newest JVM) or a main class / jar name. 0 or an exit code. */
static int resolve_target(const char *w, cli_opts *o)
{
    char *end;
    long pid = strtol(w, &end, 10);
    if (*w >= '0' && *w <= '9') {
        if (*end || pid <= 0 || pid > INT_MAX) return js_cli_die(CLI_EXIT_USAGE, "'%s' is not a process id", w);
        o->pid = (int)pid;
        return 0;
    }
    jvm_pick k = {strcmp(w, "jps") ? w : NULL, 0, 0, 0};
    if (js_attach_list(pick, &k) != 0) return js_cli_die(CLI_EXIT_IO, "cannot read /proc");
    if (!k.matches && k.name) return js_cli_die(CLI_EXIT_ATTACH, "no JVM runs %s (see jsampler list)", k.name);
    if (!k.matches) return js_cli_die(CLI_EXIT_ATTACH, "no JVM is running (see jsampler list)");
    if (k.name && k.matches > 1)
        return js_cli_die(CLI_EXIT_USAGE, "%d JVMs run %s: give the pid (see jsampler list)", k.matches, k.name);
    o->pid = k.pid;
    return 0;
}

int js_cli_parse(int argc, char **argv, cli_opts *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->action, sizeof o->action, "collect");
    o->duration_s = 60;
    const char *target = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        const cli_flag *f = find_flag(a);
        if (one_of(a, actions, sizeof actions / sizeof actions[0]) && !o->action_given && !target) {
            snprintf(o->action, sizeof o->action, "%s", a);
            o->action_given = 1;
        } else if (one_of(a, jattach_actions, sizeof jattach_actions / sizeof jattach_actions[0]) && !target) {
            return js_cli_die(CLI_EXIT_USAGE, "'%s' is a jattach action, not a profiler one: use jcmd or jattach for it", a);
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            js_cli_help(stdout);
            return -1;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--version")) {
            printf("jsampler %s\n", js_cli_version());
            return -1;
        } else if (!strcmp(a, "--")) {
            o->raw = next;
            if (i + 2 < argc) return js_cli_die(CLI_EXIT_USAGE, "give the agent options after -- as one argument");
            break;
        } else if (!strcmp(a, "--reverse")) {
            return js_cli_die(CLI_EXIT_USAGE, "--reverse: not supported: stacks are merged from their root; the flame "
                                              "graph's 'reverse' button and --inverted show it as an icicle");
        } else if (f || !strcmp(a, "-d") || !strcmp(a, "-f") || !strcmp(a, "-o") || !strcmp(a, "--libpath") ||
                   !strcmp(a, "--attach-timeout")) {
            int value = f ? f->value : 1;
            if (value && !next) return js_cli_die(CLI_EXIT_USAGE, "option %s needs a value (see jsampler --help)", a);
            int rc = 0;
            if (f) rc = take_flag(f, a, next, o);
            else if (!strcmp(a, "-f")) o->file = next;
            else if (!strcmp(a, "-o")) o->output = next;
            else if (!strcmp(a, "--libpath")) o->libpath = next;
            else {
                char *end;
                long v = strtol(next, &end, 10);
                if (*end || v <= 0 || v > (a[1] == 'd' ? 30L * 24 * 3600 : 3600000L))
                    return js_cli_die(CLI_EXIT_USAGE, "%s expects %s > 0, not '%s'", a, a[1] == 'd' ? "seconds" : "ms", next);
                if (a[1] == 'd') o->duration_s = v;
                else o->attach_timeout_ms = (int)v;
            }
            if (rc) return rc;
            if (value) i++;
        } else if (a[0] == '-') {
            return js_cli_die(CLI_EXIT_USAGE, "unknown option '%s' (see jsampler --help)", a);
        } else if (!target) {
            target = a;
        } else if (!strcmp(o->action, "attach-backend") && !o->raw) {
            o->raw = a; /* the task client's options */
        } else {
            return js_cli_die(CLI_EXIT_USAGE, "unexpected argument '%s' after the target '%s'", a, target);
        }
    }
    if (!target) return js_cli_die(CLI_EXIT_USAGE, "which JVM? give its pid, 'jps' or its main class (see jsampler list)");
    return resolve_target(target, o);
}

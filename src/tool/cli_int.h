/* cli_int.h - what the CLI's files share: exit codes, the help and error lines (cli_help.c), asprof's command line
 * (cli_args.c), the attach verbs (cli_attach.c) and convert (cli_convert.c). */
#ifndef JS_CLI_INT_H
#define JS_CLI_INT_H

#include <stdio.h>

#define CLI_EXIT_IO 1
#define CLI_EXIT_USAGE 2
#define CLI_EXIT_NOTHING 3 /* convert: the JFR selection matched no event */
#define CLI_EXIT_ATTACH 4 /* the JVM could not be attached */
#define CLI_EXIT_AGENT 5  /* the agent refused the command */

#define CLI_CMD_MAX 1024  /* the attach protocol's limit on one argument */

/* One command line, as asprof reads it. */
typedef struct {
    char action[16];        /* start resume stop dump status metrics list collect version attach-backend */
    int action_given;       /* named on the command line (else collect) */
    int pid;
    char params[CLI_CMD_MAX];  /* options a start takes: events, intervals, depth... */
    char outopts[CLI_CMD_MAX]; /* options every command that writes takes: names, filters, counters, title */
    const char *file;       /* -f, as given */
    const char *output;     /* -o, or jfr for --jfrsync / --jfropts */
    long duration_s;        /* -d, for collect (default 60) */
    const char *libpath;    /* --libpath */
    int attach_timeout_ms;  /* --attach-timeout, 0 = default */
    const char *raw;        /* the agent options after --, or attach-backend's options */
} cli_opts;

/* Prints "jsampler: <msg>" as one line on stderr and returns code. */
__attribute__((format(printf, 2, 3))) int js_cli_die(int code, const char *fmt, ...);
/* The help text. */
void js_cli_help(FILE *f);
/* This program's version. */
const char *js_cli_version(void);

/* Read asprof's command line (without the program name) into o: 0, -1 when it printed help or the version
 * (exit 0), or an exit code after one line on stderr. */
int js_cli_parse(int argc, char **argv, cli_opts *o);
/* Attach to o->pid and run what o asks (collect: start, wait, stop). An exit code. */
int js_cli_run(const cli_opts *o);
/* jsampler convert [OPTIONS] INPUT OUTPUT (the arguments after the command word). An exit code. */
int js_cli_convert(int argc, char **argv);
/* jsampler list: running JVMs. */
int js_cli_list(int argc, char **argv);
/* The agent's reply file text (NUL-terminated) made ready to print, in place: the status line and trailing
 * newlines dropped, control characters but newline and tab as '?' (cli_reply.c). */
void js_cli_reply_text(char *text);

#endif

/* cli_int.h - what the CLI's files share: exit codes and the attach verbs (cli_attach.c). */
#ifndef JS_CLI_INT_H
#define JS_CLI_INT_H

#define CLI_EXIT_IO 1
#define CLI_EXIT_USAGE 2
#define CLI_EXIT_ATTACH 4 /* the JVM could not be attached */
#define CLI_EXIT_AGENT 5  /* the agent refused the command */

/* Prints "jsampler: <msg>" as one line on stderr and returns code. */
__attribute__((format(printf, 2, 3))) int js_cli_die(int code, const char *fmt, ...);

/* jsampler start|status|dump|stop|collect ARGS: attach to a JVM and run one command (collect: two). */
int js_cli_attach_verb(const char *verb, int argc, char **argv);
/* jsampler list: running JVMs. */
int js_cli_list(int argc, char **argv);
/* The agent's reply file text (NUL-terminated) made ready to print, in place: the status line and trailing
 * newlines dropped, control characters but newline and tab as '?' (cli_reply.c). */
void js_cli_reply_text(char *text);

#endif

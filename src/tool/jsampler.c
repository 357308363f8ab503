/* jsampler.c - the jsampler command-line tool: its command word picks a subcommand (convert: cli_convert.c;
 * list, help, version); any other command line is asprof's (cli_args.c), run against a JVM by cli_attach.c. */
#include <stdio.h>
#include <string.h>

#include "cli_int.h"

/* jsampler version (no target) */
static int cmd_version(int argc, char **argv)
{
    printf("jsampler %s\n", js_cli_version());
    return fflush(stdout) == 0 ? 0 : CLI_EXIT_IO;
}

/* jsampler help */
static int cmd_help(int argc, char **argv)
{
    js_cli_help(stdout);
    return fflush(stdout) == 0 ? 0 : CLI_EXIT_IO;
}

static const struct {
    const char *name;
    int (*run)(int argc, char **argv); /* arguments after the command word */
} commands[] = {
    {"convert", js_cli_convert}, {"help", cmd_help}, {"--help", cmd_help}, {"-h", cmd_help},
};

/* Dispatches argv[1] to its command. */
int main(int argc, char **argv)
{
    if (argc < 2) {
        js_cli_help(stderr);
        return CLI_EXIT_USAGE;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 2, argv + 2);
    if (argc == 2 && !strcmp(argv[1], "list")) return js_cli_list(0, NULL);
    if (argc == 2 && !strcmp(argv[1], "version")) return cmd_version(0, NULL);
    cli_opts o;
    int rc = js_cli_parse(argc - 1, argv + 1, &o);
    if (rc) return rc < 0 ? 0 : rc;
    return js_cli_run(&o);
}

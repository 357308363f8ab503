/* cli_reply.c - the agent's reply file as the attach verbs print it (see cli_int.h). */
#include "cli_int.h"

#include <string.h>

void js_cli_reply_text(char *text)
{
    char *nl = strchr(text, '\n');
    if (nl) memmove(text, nl + 1, strlen(nl + 1) + 1); /* the status line */
    size_t n = strlen(text);
    while (n && text[n - 1] == '\n') text[--n] = 0;
    for (char *c = text; *c; c++) /* the file is in the target's /tmp: its user may have written anything */
        if (((unsigned char)*c < 0x20 && *c != '\n' && *c != '\t') || *c == 0x7f) *c = '?';
}

/* cmd.h - the one command dispatcher every entry point calls.
 *
 * -agentpath options, attach requests, the Java API and backend tasks all hand a command
 * string ("start,event=cpu,file=p.html", "stop", "status", ...) to js_execute, which parses
 * it (args.h) and runs it on the profiler core. The reply is text in the caller's buffer plus
 * a status code with a strerror.
 */
#ifndef JS_CMD_H
#define JS_CMD_H

#include <stddef.h>
#include "core/status.h"

/* Parse and execute cmd; reply text (one or more lines) into out. */
js_status js_execute(const char *cmd, char *out, size_t outlen);
/* js_execute for an in-process caller (the Java and C APIs): a text profile the command writes without file= goes
 * to capture (a FILE*, or NULL for the JVM's stdout). A bare output format ("collapsed") means dump. */
js_status js_execute_capture(const char *cmd, void *capture, char *out, size_t outlen);
/* Check used at -agentpath load to fail fast, before the VM runs: the syntax (JS_ERR_ARGS) and that
 * the outputs can be created (JS_ERR_IO), with one line in out. */
js_status js_validate(const char *cmd, char *out, size_t outlen);

#endif

/* attach_parse_int.h - internal to the attach layer: the parsers of what a target process tells us (its /proc
 * texts, its JDK's release file, its attach listener's reply), on text already read, so tests and the fuzzing
 * targets can feed them any bytes. attach.h is the layer's contract. */
#ifndef JS_ATTACH_PARSE_INT_H
#define JS_ATTACH_PARSE_INT_H

#include <stddef.h>
#include <stdio.h>

#include "attach/attach.h"

/* Ids, namespace pid, SIGQUIT disposition and run state of t from a /proc/<pid>/status text (NUL-terminated). */
void js_target_parse_status(const char *status, js_target *t);
/* Main class or jar (control characters as '?') and -XX:+DisableAttachMechanism from a /proc/<pid>/cmdline of
 * n bytes (NUL-separated arguments; buf[n] must be a NUL). */
void js_target_parse_cmdline(const char *buf, size_t n, js_target *t);
/* JAVA_VERSION (control characters as '?') and the major version from a JDK release file's text. */
void js_target_parse_release(const char *text, js_target *t);
/* 1 if a /proc/<pid>/maps stream maps libjvm.so, 0 if not, -1 if it is empty. */
int js_target_maps_jvm(FILE *maps);
/* The outcome of a `load` request from the JVM's reply text (NUL-terminated): JS_AT_OK with *agent_rc for
 * "0\nreturn code: N", else the JVM's refusal as one line in err naming process pid and library lib. */
js_attach_code js_attach_load_reply(const char *text, int pid, const char *lib, int *agent_rc, char *err,
                                    size_t errlen);

#endif

/* output.h - writers that turn a js_profile into files people read.
 *
 * All writers take a FILE* and return 0, or -1 with one line in err (never partial silence).
 * Not for signal context. Formats: collapsed (flamegraph.pl / speedscope), flat top-N,
 * text call tree, self-contained HTML flame graph (no network).
 */
#ifndef JS_OUTPUT_H
#define JS_OUTPUT_H

#include <stdio.h>
#include "output/format.h"
#include "output/profile.h"


/* frame;frame;frame weight - one line per distinct stack, root first. */
int js_write_collapsed(FILE *f, const js_profile *p, char *err, size_t errlen);
/* Top-N methods by self and by total weight, with percentages (top_n 0 = 20). */
int js_write_flat(FILE *f, const js_profile *p, int top_n, char *err, size_t errlen);
/* The heaviest stacks (top_n, 0 = 100), each with its weight, share and event count, frames leaf first. */
int js_write_traces(FILE *f, const js_profile *p, int top_n, char *err, size_t errlen);
/* Indented call tree with total and self weight per node. */
int js_write_tree(FILE *f, const js_profile *p, char *err, size_t errlen);
/* Self-contained interactive HTML flame graph; reverse=1 starts as an icicle. */
int js_write_html(FILE *f, const js_profile *p, int reverse, char *err, size_t errlen);
/* SkyWalking OAP analysis tree as JSON: {"trees":[{"type":T,"unit":U,"elements":[{"id":"0","parentId":"-1",
 * "codeSignature":"all","total":W,"self":W}, ...]}]}, ids in preorder (see out_json.c). type is the OAP event type
 * ("EXECUTION_SAMPLE", "LOCK", ...; NULL = "EXECUTION_SAMPLE"); "OBJECT_ALLOCATION" writes the two trees
 * OBJECT_ALLOCATION_IN_NEW_TLAB and OBJECT_ALLOCATION_OUTSIDE_TLAB (leaf frame of kind kernel). */
int js_write_json_tree(FILE *f, const js_profile *p, const char *type, char *err, size_t errlen);
/* Write s with HTML/JS-string escaping (&, <, >, ", ', \, control chars). */
void js_html_escape(FILE *f, const char *s);

#endif

/* out_json.c - the SkyWalking OAP's async-profiler analysis tree as JSON.
 *
 * Shaped like the OAP's GraphQL answer (AsyncProfilerStackTree: type + elements; AsyncProfilerStackElement:
 * id, parentId, codeSignature, total, self), one object per tree:
 *
 *   {"trees":[{"type":"EXECUTION_SAMPLE","unit":"samples","elements":[
 *     {"id":"0","parentId":"-1","codeSignature":"all","total":1006,"self":0},
 *     {"id":"1","parentId":"0","codeSignature":"app.Main.main","total":1006,"self":6},
 *     ...]}]}
 *
 * As in the OAP (FrameTreeBuilder / AsyncProfilerStackTree): element 0 is the root "all" holding every
 * stack's weight (its self = stacks without frames), ids are assigned in preorder from 0 and parentId of
 * the root is -1; nodes are keyed by frame name (frame types are not part of a node); codeSignature is the
 * frame name. Ids are written as JSON strings, as the GraphQL schema and the UI type them. Children are
 * ordered by total weight descending, then by name (the OAP leaves the order unspecified). The type
 * "OBJECT_ALLOCATION" writes two trees, as the OAP files allocations: OBJECT_ALLOCATION_IN_NEW_TLAB (stacks
 * whose leaf frame is not of kind kernel) and OBJECT_ALLOCATION_OUTSIDE_TLAB (leaf frame of kind kernel:
 * the reader's "_[k]" class frames). Strings are escaped for JSON: '"', '\\', control characters, and
 * bytes that are not valid UTF-8 (written as \ufffd), so the output is always valid UTF-8 JSON.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/calltree.h"
#include "output/output.h"

/* Writes one line to err: "json output: <why>[: errno text]"; returns -1. */
static int fail(char *err, size_t errlen, const char *why, int with_errno)
{
    int e = errno;
    if (err && errlen) {
        if (with_errno) snprintf(err, errlen, "json output: %s: %s", why, e ? strerror(e) : "I/O error");
        else snprintf(err, errlen, "json output: %s", why);
    }
    return -1;
}

/* Length of the valid UTF-8 sequence starting at s (s[0] >= 0x80), or 0 if it is not valid. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xbf;
    size_t n;
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) n = 3;
    else if (c >= 0xf0 && c <= 0xf4) n = 4;
    else return 0;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return n;
}

/* Writes s as a JSON string literal (quotes included). */
static void put_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    putc('"', f);
    while (*s) {
        unsigned char c = *s;
        size_t n = 1;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\r') fputs("\\r", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c < 0x20 || c == 0x7f) fprintf(f, "\\u%04x", c);
        else if (c < 0x80) putc(c, f);
        else if ((n = utf8_len(s)) != 0) fwrite(s, 1, n, f);
        else {
            fputs("\\ufffd", f);
            n = 1;
        }
        s += n;
    }
    putc('"', f);
}

/* Tree part a stack belongs to: 0 = all, 1 = allocation in a new TLAB, 2 = outside a TLAB. */
static int part_of(const js_profile *p, const js_pstack *st)
{
    return st->depth && p->frames[st->frames[st->depth - 1]].type == JS_FT_KERNEL ? 2 : 1;
}

/* js_calltree_keep of the allocation trees: the stacks of the part *ctx (see part_of). */
static int in_part(const js_profile *p, const js_pstack *st, void *ctx)
{
    return part_of(p, st) == *(const int *)ctx;
}

/* Writes one element: its id, its parent's (-1 for the root), name and weights. */
static void put_element(FILE *f, const js_calltree *t, uint32_t node, const char *name, uint32_t id, long long parent)
{
    fprintf(f, "%s\n{\"id\":\"%u\",\"parentId\":\"%lld\",\"codeSignature\":", node ? "," : "", id, parent);
    put_string(f, name);
    fprintf(f, ",\"total\":%llu,\"self\":%llu}", (unsigned long long)t->total[node], (unsigned long long)t->self[node]);
}

/* Writes the elements in preorder, ids numbered from 0 in that order; 0 or -1 without memory. */
static int write_elements(FILE *f, const js_calltree *t, const js_calltree_names *nm)
{
    js_calltree_walk w;
    uint32_t *id = malloc(t->n * sizeof *id);
    if (!id || js_calltree_walk_begin(&w, t) != 0) {
        free(id);
        return -1;
    }
    uint32_t next = 1, c, lv;
    id[0] = 0;
    put_element(f, t, 0, "all", 0, -1);
    while (!ferror(f) && (c = js_calltree_walk_next(&w, &lv)) != JS_CALLTREE_NONE) {
        id[c] = next++;
        put_element(f, t, c, nm->name[t->nid[c]], id[c], id[t->parent[c]]);
    }
    js_calltree_walk_free(&w);
    free(id);
    return 0;
}

/* Writes one {"type":..,"unit":..,"elements":[..]} object for the stacks in part (0 = all); 0 or -1. */
static int write_one(FILE *f, const js_profile *p, const js_calltree_names *nm, const char *type, int part)
{
    js_calltree t;
    int rc = js_calltree_build(&t, p, nm, part ? in_part : NULL, &part);
    if (rc == 0) {
        fputs("{\"type\":", f);
        put_string(f, type);
        fputs(",\"unit\":", f);
        put_string(f, p->unit[0] ? p->unit : "samples");
        fputs(",\"elements\":[", f);
        rc = write_elements(f, &t, nm);
        fputs("\n]}", f);
    }
    js_calltree_free(&t);
    return rc;
}

/* The analysis tree(s) of p as JSON (see the top of this file); 0, or -1 with one line in err. */
int js_write_json_tree(FILE *f, const js_profile *p, const char *type, char *err, size_t errlen)
{
    if (!f || !p) {
        errno = EINVAL;
        return fail(err, errlen, "no output file or profile", 0);
    }
    if (!type || !*type) type = "EXECUTION_SAMPLE";
    int alloc = strcmp(type, "OBJECT_ALLOCATION") == 0;
    js_calltree_names nm;
    int rc = js_calltree_names_build(&nm, p);
    errno = 0;
    if (rc == 0) {
        fputs("{\"trees\":[", f);
        if (alloc) {
            rc = write_one(f, p, &nm, "OBJECT_ALLOCATION_IN_NEW_TLAB", 1);
            fputs(",\n", f);
            if (rc == 0) rc = write_one(f, p, &nm, "OBJECT_ALLOCATION_OUTSIDE_TLAB", 2);
        } else {
            rc = write_one(f, p, &nm, type, 0);
        }
        fputs("]}\n", f);
    }
    js_calltree_names_free(&nm);
    if (rc != 0) return fail(err, errlen, "out of memory", 0);
    if (fflush(f) != 0 || ferror(f)) return fail(err, errlen, "write error", 1);
    return 0;
}

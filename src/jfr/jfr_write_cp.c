/* jfr_write_cp.c - the JFR writer's checkpoint (see jfr_write_int.h): pool keys, names pulled through the
 * js_jfr_source, the size estimates that enforce max_size, and the pools of the checkpoint event that ends a chunk.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jfr_write_int.h"

/* Method key of a caller's method key (stable for the writer's life). */
uint32_t js_jfrw_method_key(js_jfr_writer *w, uint64_t caller_key)
{
    uint32_t id = js_jfr_idmap_id(&w->method_ids, caller_key);
    if (id && id < KEY_LIMIT - 1) {
        uint32_t slot = METHOD_MEMO_SLOT(caller_key);
        w->mmemo_key[slot] = caller_key;
        w->mmemo_id[slot] = id + 1;
        return id + 1;
    }
    js_jfrw_set_error(w, ENOMEM);
    return PLACEHOLDER_METHOD;
}

uint32_t js_jfrw_class_key(js_jfr_writer *w, const char *name)
{
    size_t n = js_jfr_utf8_cut(name, strlen(name), JS_JFR_STR_MAX);
    uint32_t id = js_jfr_strtab_id(&w->class_names, name, n);
    if (!id) js_jfrw_set_error(w, ENOMEM);
    return id ? id : 1;
}

/* Symbol key of s[0..len) in the current chunk. */
static uint32_t symbol_n(js_jfr_writer *w, const char *s, size_t len)
{
    uint32_t band = (w->chunk_no - 1) % SYMBOL_BANDS + 1;
    uint32_t id = 0;
    if (w->symbols.count < SYMBOL_MAX) id = js_jfr_strtab_id(&w->symbols, s, js_jfr_utf8_cut(s, len, JS_JFR_STR_MAX));
    if (!id) js_jfrw_set_error(w, w->symbols.count < SYMBOL_MAX ? ENOMEM : EOVERFLOW);
    return band << 24 | (id ? id : 1);
}

/* Package key of an internal class name ("java/lang" of "java/lang/String"), 0 for none. */
static uint32_t package_key(js_jfr_writer *w, const char *cls, size_t len)
{
    const char *slash = memrchr(cls, '/', len);
    if (!slash || cls[0] == '[') return 0; /* arrays have no package */
    uint32_t key = symbol_n(w, cls, (size_t)(slash - cls));
    js_jfrw_ref(w, &w->packages, key);
    return key;
}

/* ---- resolution through the source ---- */

/* Method m's names; "[unknown]" with an empty class for the placeholder or an unknown key, and
 * async-profiler's "()L;" for a missing or malformed descriptor. */
static void resolve_method(js_jfr_writer *w, uint32_t m, js_jfr_method *out)
{
    memset(out, 0, sizeof *out);
    if (m == PLACEHOLDER_METHOD || !w->src.method ||
        w->src.method(w->src.ctx, w->method_ids.keys[m - 1], out) != 0) {
        memset(out, 0, sizeof *out);
        out->name = UNKNOWN;
    }
    if (!out->class_name) out->class_name = "";
    if (!out->name) out->name = UNKNOWN;
    if (!out->descriptor || !js_jfr_descriptor_ok(out->descriptor)) out->descriptor = NO_DESCRIPTOR;
}

/* Thread id's description; "[unknown]" if the source does not know it. */
static void resolve_thread(js_jfr_writer *w, uint32_t id, js_jfr_thread *out)
{
    memset(out, 0, sizeof *out);
    if (!w->src.thread || w->src.thread(w->src.ctx, id, out) != 0) memset(out, 0, sizeof *out);
    if (!out->os_name) out->os_name = UNKNOWN;
}

/* ---- checkpoint size estimates (only with max_size) ---- */

/* Upper bound of an encoding-3 string's bytes. */
static uint64_t str_cost(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return 1 + VAR_MAX + (n < JS_JFR_STR_MAX ? n : JS_JFR_STR_MAX);
}

/* Upper bound of Method entry m with its symbols and, if its class is new to the estimate, the
 * Class entry with its name and package symbols and the Package entry. */
static uint64_t method_cost(js_jfr_writer *w, uint32_t m)
{
    js_jfr_method jm;
    resolve_method(w, m, &jm);
    uint64_t cost = 7 * VAR_MAX + 1 + str_cost(jm.name) + str_cost(jm.descriptor);
    if (js_jfrw_ref(w, &w->est_classes, js_jfrw_class_key(w, jm.class_name)))
        cost += 8 * VAR_MAX + 2 + 2 * str_cost(jm.class_name);
    return cost;
}

uint64_t js_jfrw_class_cost(js_jfr_writer *w, uint32_t cls, const char *name)
{
    return cls && js_jfrw_ref(w, &w->est_classes, cls) ? 8 * VAR_MAX + 2 + 2 * str_cost(name) : 0;
}

/* Upper bound of the entry of the fresh trace just resolved (encoded in w->tenc) plus the methods and classes it
 * adds. */
static uint64_t trace_cost(js_jfr_writer *w, const js_jfrw_trace_ref *t)
{
    uint64_t cost = t->bytes;
    for (uint32_t i = 0; i < w->tmeth_n; i++)
        if (js_jfrw_ref(w, &w->est_methods, w->tmeth[i])) cost += method_cost(w, w->tmeth[i]);
    return cost;
}

/* Upper bound of thread id's Thread entry. */
static uint64_t thread_cost(js_jfr_writer *w, uint32_t id)
{
    js_jfr_thread t;
    resolve_thread(w, id, &t);
    return VAR_MAX + str_cost(t.os_name) + LONG_MAX_BYTES + str_cost(t.java_name) + LONG_MAX_BYTES;
}

/* Whether `bytes` more event bytes, plus the pool entries their ids add, keep the file within
 * max_size; the first refusal caps the writer for good. */
int js_jfrw_admit(js_jfr_writer *w, uint32_t thread, const js_jfrw_trace_ref *trace, uint32_t state, uint64_t bytes)
{
    if (w->capped) return 0;
    uint64_t extra = 0;
    if (!js_jfr_set_has(&w->threads, thread)) extra += thread_cost(w, thread);
    if (state != JS_JFRW_NO_STATE && !js_jfr_set_has(&w->states, state + 1)) extra += STATE_COST;
    if (trace->fresh) extra += trace_cost(w, trace);
    if (js_jfrw_pos(w) + bytes + w->reserve + extra > w->o.max_size) {
        w->capped = 1;
        return 0;
    }
    w->reserve += extra;
    return 1;
}

/* ---- checkpoint ---- */

/* Start a pool of `count` entries of type; 0 (nothing written) if there are none. */
static int pool_begin(js_jfr_writer *w, uint32_t type, uint64_t count)
{
    if (count) {
        js_jfrw_put_var(w, type);
        js_jfrw_put_var(w, count);
    }
    return count != 0;
}

/* ThreadState pool; 1 if written, 0 if the chunk has no state. */
static int pool_states(js_jfr_writer *w)
{
    if (!pool_begin(w, js_jfrw_type(w, JS_JFR_T_THREAD_STATE), w->states.count)) return 0;
    for (uint32_t i = 0, k; (k = js_jfr_set_next(&w->states, &i));) {
        js_jfrw_put_var(w, k - 1);
        js_jfrw_put_str(w, js_jfr_state_name(k - 1));
    }
    return 1;
}

/* Thread pool: osName, osThreadId, javaName, javaThreadId; 1 if written. */
static int pool_threads(js_jfr_writer *w)
{
    if (!pool_begin(w, js_jfrw_type(w, JS_JFR_T_THREAD), w->threads.count)) return 0;
    for (uint32_t i = 0, id; (id = js_jfr_set_next(&w->threads, &i));) {
        js_jfr_thread t;
        resolve_thread(w, id, &t);
        js_jfrw_put_var(w, id);
        js_jfrw_put_str(w, t.os_name);
        js_jfrw_put_var(w, t.os_tid);
        js_jfrw_put_str(w, t.java_name);
        js_jfrw_put_var(w, t.java_tid);
    }
    return 1;
}

/* FrameType pool, all seven types once stack traces use any (async-profiler writes them so, and its converter
 * reads a "Native" frame as a C function only when the pool holds "Kernel"; the JDK's jfr reads it either way);
 * 1 if written. */
static int pool_frame_types(js_jfr_writer *w)
{
    if (!w->frame_types || !pool_begin(w, js_jfrw_type(w, JS_JFR_T_FRAME_TYPE), 7)) return 0;
    for (uint8_t t = 0; t < 7; t++) {
        js_jfrw_put_var(w, t);
        js_jfrw_put_str(w, js_jfr_frame_type_name(t));
    }
    return 1;
}

/* Method pool: class, name, descriptor, modifiers, hidden (marks the classes used); 1 if written. */
static int pool_methods(js_jfr_writer *w)
{
    if (!pool_begin(w, js_jfrw_type(w, JS_JFR_T_METHOD), w->methods.count)) return 0;
    for (uint32_t i = 0, m; (m = js_jfr_set_next(&w->methods, &i));) {
        js_jfr_method jm;
        resolve_method(w, m, &jm);
        uint32_t cls = js_jfrw_class_key(w, jm.class_name);
        js_jfrw_ref(w, &w->classes, cls);
        js_jfrw_put_var(w, m);
        js_jfrw_put_var(w, cls);
        js_jfrw_put_var(w, symbol_n(w, jm.name, strlen(jm.name)));
        js_jfrw_put_var(w, symbol_n(w, jm.descriptor, strlen(jm.descriptor)));
        js_jfrw_put_int(w, jm.modifiers);
        js_jfrw_put_u8(w, jm.hidden != 0);
    }
    return 1;
}

/* Class pool: no class loader, name symbol, package, modifiers 0, not hidden; 1 if written. */
static int pool_classes(js_jfr_writer *w)
{
    if (!pool_begin(w, js_jfrw_type(w, JS_JFR_T_CLASS), w->classes.count)) return 0;
    for (uint32_t i = 0, c; (c = js_jfr_set_next(&w->classes, &i));) {
        size_t len;
        const char *name = js_jfr_strtab_str(&w->class_names, c, &len);
        js_jfrw_put_var(w, c);
        js_jfrw_put_var(w, 0);
        js_jfrw_put_var(w, symbol_n(w, name, len));
        js_jfrw_put_var(w, package_key(w, name, len));
        js_jfrw_put_int(w, 0);
        js_jfrw_put_u8(w, 0);
    }
    return 1;
}

/* Package pool: each package's key is its name's symbol key; 1 if written. */
static int pool_packages(js_jfr_writer *w)
{
    if (!pool_begin(w, js_jfrw_type(w, JS_JFR_T_PACKAGE), w->packages.count)) return 0;
    for (uint32_t i = 0, k; (k = js_jfr_set_next(&w->packages, &i));) {
        js_jfrw_put_var(w, k);
        js_jfrw_put_var(w, k);
    }
    return 1;
}

/* Symbol pool: every string interned in this chunk, as encoding 3; 1 if written. */
static int pool_symbols(js_jfr_writer *w)
{
    if (!pool_begin(w, js_jfrw_type(w, JS_JFR_T_SYMBOL), w->symbols.count)) return 0;
    uint32_t band = (w->chunk_no - 1) % SYMBOL_BANDS + 1;
    for (uint32_t id = 1; id <= w->symbols.count; id++) {
        size_t len;
        const char *s = js_jfr_strtab_str(&w->symbols, id, &len);
        js_jfrw_put_var(w, band << 24 | id);
        js_jfrw_put_u8(w, 3);
        js_jfrw_put_var(w, len);
        js_jfrw_put(w, s, len);
    }
    return 1;
}

/* The thread pools of the chunk's last checkpoint (jfr_write_int.h): thread states, threads. */
int js_jfrw_cp_threads(js_jfr_writer *w)
{
    return pool_states(w) + pool_threads(w);
}

/* The name pools of the chunk's last checkpoint (jfr_write_int.h), in dependency order: frame types, methods (they
 * mark classes), classes (they make packages and symbols), packages, symbols. */
int js_jfrw_cp_names(js_jfr_writer *w)
{
    int pools = pool_frame_types(w);
    pools += pool_methods(w);
    pools += pool_classes(w);
    pools += pool_packages(w);
    pools += pool_symbols(w);
    return pools;
}

/* jfr_write_trace.c - the JFR writer's per-chunk copies of stack traces (see jfr_write_int.h).
 *
 * A trace's frames are pulled through js_jfr_source.trace once, when an event first references the trace in
 * the current chunk, and copied here with their method keys already mapped to the writer's; the chunk's
 * checkpoint writes the StackTrace pool from these copies. So the producer may forget (or reuse) a trace id
 * as soon as js_jfr_execution_sample returns. The copies live until the chunk ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jfr_write_int.h"

/* Frames of trace id from the source into w->frames (leaf first); the count, or -1 if unknown. */
int js_jfrw_trace_pull(js_jfr_writer *w, uint32_t id, int *truncated)
{
    *truncated = 0;
    int n = w->src.trace ? w->src.trace(w->src.ctx, id, w->frames, w->o.max_depth, truncated) : -1;
    if (n > w->o.max_depth) n = w->o.max_depth, *truncated = 1;
    if (n < 1) *truncated = 0;
    return n >= 1 ? n : -1;
}

/* Make room for `more` frame copies and one more trace record; 0 or -1 without memory. */
static int trace_room(js_jfr_writer *w, size_t more)
{
    if (w->ntframes + more > w->tframes_cap) {
        size_t cap = w->tframes_cap ? w->tframes_cap : 1024;
        while (cap < w->ntframes + more) cap *= 2;
        js_jfrw_frame *f = realloc(w->tframes, cap * sizeof *f);
        if (!f) return -1;
        w->tframes = f;
        w->tframes_cap = cap;
    }
    uint32_t need = w->trace_ids.count + 2; /* slots are 1-based; the next one is count + 1 */
    if (need > w->trace_cap) {
        uint32_t cap = w->trace_cap ? w->trace_cap : 256;
        while (cap < need) {
            if (cap >= KEY_LIMIT) return -1;
            cap *= 2;
        }
        js_jfrw_trace *t = realloc(w->trace_rec, (size_t)cap * sizeof *t);
        if (!t) return -1;
        w->trace_rec = t;
        w->trace_cap = cap;
    }
    return 0;
}

/* Copy the n frames pulled into w->frames (n < 0: unknown) as this chunk's trace id; 0 or -1. */
int js_jfrw_trace_keep(js_jfr_writer *w, uint32_t id, int n, int truncated)
{
    size_t count = n > 0 ? (size_t)n : 0;
    if (trace_room(w, count) != 0) {
        js_jfrw_set_error(w, ENOMEM);
        return -1;
    }
    js_jfrw_trace rec = {w->ntframes, (uint32_t)count, (uint8_t)(count && truncated)};
    for (size_t i = 0; i < count; i++) {
        const js_jfr_frame *f = &w->frames[i];
        w->tframes[w->ntframes++] =
            (js_jfrw_frame){js_jfrw_method_key(w, f->method), js_jfrw_line(f->line), f->bci, f->type > 6 ? 4 : f->type};
    }
    uint32_t slot = js_jfr_idmap_id(&w->trace_ids, id);
    if (!slot) {
        w->ntframes = rec.first;
        js_jfrw_set_error(w, ENOMEM);
        return -1;
    }
    w->trace_rec[slot] = rec;
    return 0;
}

/* The copied trace of slot 1..trace_ids.count. */
const js_jfrw_trace *js_jfrw_trace_at(const js_jfr_writer *w, uint32_t slot)
{
    return &w->trace_rec[slot];
}

/* Bytes held by this chunk's trace copies. */
uint64_t js_jfrw_trace_bytes(const js_jfr_writer *w)
{
    return (uint64_t)w->ntframes * sizeof(js_jfrw_frame) + (uint64_t)w->trace_ids.count * sizeof(js_jfrw_trace);
}

/* Forget this chunk's traces; large buffers are released rather than kept for the next chunk. */
void js_jfrw_trace_reset(js_jfr_writer *w)
{
    js_jfr_idmap_clear(&w->trace_ids);
    w->ntframes = 0;
    if (w->tframes_cap * sizeof(js_jfrw_frame) > TRACE_KEEP_BYTES) {
        free(w->tframes);
        w->tframes = NULL;
        w->tframes_cap = 0;
    }
    if ((size_t)w->trace_cap * sizeof(js_jfrw_trace) > TRACE_KEEP_BYTES) {
        free(w->trace_rec);
        w->trace_rec = NULL;
        w->trace_cap = 0;
        js_jfr_idmap_free(&w->trace_ids);
    }
}

/* Release every trace copy. */
void js_jfrw_trace_free(js_jfr_writer *w)
{
    free(w->tframes);
    free(w->trace_rec);
    js_jfr_idmap_free(&w->trace_ids);
    w->tframes = NULL;
    w->trace_rec = NULL;
    w->tframes_cap = w->ntframes = 0;
    w->trace_cap = 0;
}

/* jfr_write_event.c - the events besides jdk.ExecutionSample: allocations, monitor and park waits, wall
 * samples beside cpu ones, processes (jfr_write.h). Each is one record with a one-byte size, its stack trace resolved the
 * first time the chunk sees its key, exactly as js_jfr_execution_sample does. */
#include "jfr/jfr_write.h"

#include <stdio.h>
#include <string.h>

#include "jfr_write_int.h"

#define EVENT_MAX 128 /* the largest record below: type, 3 longs, 4 keys, 2 longs, address */
#define PROC_EVENT_MAX 2400 /* a process sample: two strings (16 and 2047 bytes) and 19 numbers */

/* Append a JFR long (two's complement as a varint) to ev at n. */
static size_t put_long(uint8_t *ev, size_t n, int64_t v)
{
    return n + js_jfr_varint(ev + n, (uint64_t)v);
}

/* 1 if w takes no more events: failed (*rc = -1, err set) or capped (the event counted as dropped, *rc = 0). */
static int closed(js_jfr_writer *w, int *rc, char *err, size_t errlen)
{
    if (w->err_no) {
        *rc = js_jfrw_fail(w, err, errlen);
        return 1;
    }
    if (w->capped) {
        w->st.dropped_by_cap++;
        *rc = 0;
        return 1;
    }
    return 0;
}

/* An event the size cap does not admit: counted as dropped; -1 if admitting it failed the writer. */
static int refused(js_jfr_writer *w, char *err, size_t errlen)
{
    w->st.dropped_by_cap++;
    return w->err_no ? js_jfrw_fail(w, err, errlen) : 0;
}

/* After an event's bytes were put: counted; -1 if putting them failed the writer. */
static int written(js_jfr_writer *w, char *err, size_t errlen)
{
    w->st.events++;
    w->chunk_events++;
    return w->err_no ? js_jfrw_fail(w, err, errlen) : 0;
}

/* Encode e's record into ev (class key cls, StackTrace key trace); its length. */
static size_t encode(js_jfr_writer *w, const js_jfr_event *e, uint32_t cls, uint32_t trace, uint8_t *ev)
{
    static const uint32_t types[] = {0, JS_JFR_T_ALLOC_IN_TLAB, JS_JFR_T_MONITOR_ENTER, JS_JFR_T_THREAD_PARK,
                                     JS_JFR_T_WALL_SAMPLE, JS_JFR_T_ALLOC_OUTSIDE_TLAB};
    size_t n = 1;
    n += js_jfr_varint(ev + n, js_jfrw_type(w, types[e->type]));
    n += js_jfr_varint(ev + n, js_jfrw_tick(w, e->ticks));
    if (e->type == JS_JFR_EV_MONITOR || e->type == JS_JFR_EV_PARK) n += js_jfr_varint(ev + n, e->duration);
    n += js_jfr_varint(ev + n, e->thread);
    n += js_jfr_varint(ev + n, trace);
    switch (e->type) {
    case JS_JFR_EV_ALLOC:
        n += js_jfr_varint(ev + n, cls);
        n += js_jfr_varint(ev + n, e->size);
        n += js_jfr_varint(ev + n, e->weight);
        break;
    case JS_JFR_EV_ALLOC_OUTSIDE:
        n += js_jfr_varint(ev + n, cls);
        n += js_jfr_varint(ev + n, e->weight);
        break;
    case JS_JFR_EV_MONITOR:
        n += js_jfr_varint(ev + n, cls);
        n += js_jfr_varint(ev + n, 0); /* previousOwner: not known */
        n += js_jfr_varint(ev + n, 0); /* address */
        break;
    case JS_JFR_EV_PARK:
        n += js_jfr_varint(ev + n, cls);
        n = put_long(ev, n, e->timeout);
        n = put_long(ev, n, e->until);
        n += js_jfr_varint(ev + n, 0); /* address */
        break;
    case JS_JFR_EV_WALL:
        n += js_jfr_varint(ev + n, e->state);
        n += js_jfr_varint(ev + n, (uint32_t)(e->weight > INT32_MAX ? INT32_MAX : e->weight));
        n += js_jfr_varint(ev + n, e->span);
        break;
    }
    ev[0] = (uint8_t)n;
    return n;
}

int js_jfr_write_event(js_jfr_writer *w, const js_jfr_event *e, char *err, size_t errlen)
{
    if (!e->thread || e->thread >= KEY_LIMIT || !e->trace || e->state >= KEY_LIMIT - 1 || e->type < JS_JFR_EV_ALLOC ||
        e->type > JS_JFR_EV_ALLOC_OUTSIDE) {
        snprintf(err, errlen, "invalid JFR event: type %d, thread %u, trace %llu", (int)e->type, e->thread,
                 (unsigned long long)e->trace);
        return -1;
    }
    if (e->type == JS_JFR_EV_WALL && e->weight == 0 && !w->err_no) return 0; /* nothing to record */
    int rc;
    if (closed(w, &rc, err, errlen)) return rc;
    const char *cname = e->type != JS_JFR_EV_WALL && e->class_name && e->class_name[0] ? e->class_name : NULL;
    uint32_t cls = cname ? js_jfrw_class_key(w, cname) : 0;
    js_jfrw_trace_ref ref;
    if (js_jfrw_trace_resolve(w, e->trace, &ref) != 0) return js_jfrw_fail(w, err, errlen); /* the only pull this chunk */
    uint8_t ev[EVENT_MAX];
    size_t n = encode(w, e, cls, ref.key, ev);
    uint32_t state = e->type == JS_JFR_EV_WALL ? e->state : JS_JFRW_NO_STATE;
    if (w->o.max_size && !js_jfrw_admit(w, e->thread, &ref, state, n + js_jfrw_class_cost(w, cls, cname)))
        return refused(w, err, errlen);
    if (js_jfrw_trace_take(w, e->trace, &ref, e->ticks) != 0) return js_jfrw_fail(w, err, errlen);
    js_jfrw_ref(w, &w->threads, e->thread);
    if (state != JS_JFRW_NO_STATE) js_jfrw_ref(w, &w->states, state + 1);
    if (cls) js_jfrw_ref(w, &w->classes, cls);
    js_jfrw_put(w, ev, n);
    return written(w, err, errlen);
}

int js_jfr_window(js_jfr_writer *w, uint64_t start, uint64_t end, uint32_t thread, char *err, size_t errlen)
{
    if (!thread || thread >= KEY_LIMIT) {
        snprintf(err, errlen, "invalid JFR window: thread %u", thread);
        return -1;
    }
    int rc;
    if (closed(w, &rc, err, errlen)) return rc;
    uint8_t ev[EVENT_MAX];
    size_t n = 1;
    n += js_jfr_varint(ev + n, js_jfrw_type(w, JS_JFR_T_WINDOW));
    n += js_jfr_varint(ev + n, js_jfrw_tick(w, start));
    n += js_jfr_varint(ev + n, end > start ? end - start : 0);
    n += js_jfr_varint(ev + n, thread);
    ev[0] = (uint8_t)n;
    js_jfrw_trace_ref none = {0};
    if (w->o.max_size && !js_jfrw_admit(w, thread, &none, JS_JFRW_NO_STATE, n)) return refused(w, err, errlen);
    js_jfrw_ref(w, &w->threads, thread);
    js_jfrw_put(w, ev, n);
    return written(w, err, errlen);
}

/* Append a JFR float (IEEE 754, big-endian) to ev at n. */
static size_t put_float(uint8_t *ev, size_t n, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    for (int i = 3; i >= 0; i--) ev[n++] = (uint8_t)(u >> (8 * i));
    return n;
}

/* Append a string (encoding 3, cut at a character boundary to cap bytes) to ev at n. */
static size_t put_string(uint8_t *ev, size_t n, const char *s, size_t cap)
{
    size_t len = js_jfr_utf8_cut(s, strnlen(s, cap), cap);
    ev[n++] = 3;
    n += js_jfr_varint(ev + n, len);
    memcpy(ev + n, s, len);
    return n + len;
}

int js_jfr_process_sample(js_jfr_writer *w, uint64_t ticks, const js_jfr_process *p, char *err, size_t errlen)
{
    int rc;
    if (closed(w, &rc, err, errlen)) return rc;
    uint8_t ev[PROC_EVENT_MAX];
    size_t n = 0;
    n += js_jfr_varint(ev + n, js_jfrw_type(w, JS_JFR_T_PROCESS_SAMPLE));
    n += js_jfr_varint(ev + n, js_jfrw_tick(w, ticks));
    n += js_jfr_varint(ev + n, (uint32_t)p->pid);
    n += js_jfr_varint(ev + n, (uint32_t)p->ppid);
    n = put_string(ev, n, p->name, sizeof p->name - 1);
    n = put_string(ev, n, p->cmdline, sizeof p->cmdline - 1);
    n += js_jfr_varint(ev + n, p->uid);
    ev[n++] = p->state;
    n += js_jfr_varint(ev + n, p->start_ms);
    n = put_float(ev, n, p->cpu_user);
    n = put_float(ev, n, p->cpu_system);
    n = put_float(ev, n, p->cpu_fraction);
    n += js_jfr_varint(ev + n, p->threads);
    const uint64_t longs[] = {p->vm_size, p->vm_rss, p->rss_anon, p->rss_files, p->rss_shmem,
                              p->minor_faults, p->major_faults, p->io_read, p->io_write};
    for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++) n += js_jfr_varint(ev + n, longs[i]);
    if (w->o.max_size && js_jfrw_pos(w) + n + 2 + w->reserve > w->o.max_size) {
        w->capped = 1;
        w->st.dropped_by_cap++;
        return 0;
    }
    uint8_t size[2] = {(uint8_t)(((n + 2) & 0x7f) | 0x80), (uint8_t)((n + 2) >> 7)}; /* a 2-byte varint size */
    js_jfrw_put(w, size, 2);
    js_jfrw_put(w, ev, n);
    return written(w, err, errlen);
}

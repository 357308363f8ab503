/* session_store.c - the session's pair of call-trace stores: one written by signal handlers, the other
 * empty and ready; swapped when the active one fills up, the full one folded into the profile and emptied. */
#include <malloc.h>
#include <stdio.h>

#include "core/fold.h"
#include "core/jfr_stream.h"
#include "core/names.h"
#include "core/stats_format.h"
#include "engine/engine.h"
#include "sample/sampler.h"
#include "sample/stats.h"
#include "session_int.h"
#include "util/log.h"
#include "util/monotime.h"

/* Address space per store (touched only as used): 32 Ki traces (0.9 MiB with the journal), 64 Ki pairs
 * (1 MiB), 2 Mi frames (32 MiB). The housekeeper swaps stores once a table is half full or 384 Ki frames
 * (6 MiB) are used, so one store holds at most about 8 MiB plus what arrives in one 50 ms round. */
#define STORE_TRACES (1u << 15)
#define STORE_FRAMES (2ull << 20)
#define STORE_PAIRS (1u << 16)
#define ROTATE_FRAMES (384ull << 10)

int js_session_stores_ready(char *err, size_t errlen)
{
    for (int i = 0; i < 2; i++) {
        if (!js_sess.stores[i] && !(js_sess.stores[i] = js_store_create(STORE_TRACES, STORE_FRAMES, STORE_PAIRS, err, errlen)))
            return -1;
        js_store_reset(js_sess.stores[i]);
    }
    js_store_set_gen(js_sess.stores[js_sess.active], ++js_sess.gen);
    js_sess.names_cursor = 0;
    return 0;
}

void js_session_reset_counters(void)
{
    atomic_store(&js_sess.rotations, 0);
    atomic_store(&js_sess.unaggregated_weight, 0);
    js_sess.dropped_written = 0;
    js_sess.throttle_logged = 0;
    js_sess.seq = 0;
    js_sess.aged_chunks = js_jfr_stream_chunks_ended();
    js_sess.rotated_since_age = 0;
    js_sess.aged_logged = 0;
}

int js_session_store_full(void)
{
    js_store_fill f;
    js_store_usage(js_sess.stores[js_sess.active], &f);
    atomic_store(&js_sess.fill_traces, f.traces);
    atomic_store(&js_sess.fill_frames, f.frames);
    atomic_store(&js_sess.fill_pairs, f.pairs);
    return f.traces >= f.max_traces / 2 || f.frames >= ROTATE_FRAMES || f.frames >= f.max_frames / 2 ||
           f.pairs >= f.max_pairs / 2;
}

int js_session_rotate(char *err, size_t errlen)
{
    int old_i = js_sess.active, next_i = 1 - js_sess.active;
    if (!js_sess.stores[next_i] && !(js_sess.stores[next_i] = js_store_create(STORE_TRACES, STORE_FRAMES, STORE_PAIRS, err,
                                                                  errlen)))
        return -1;
    js_store *next = js_sess.stores[next_i], *full = js_sess.stores[old_i];
    js_store_set_gen(next, ++js_sess.gen);
    if (js_sess.jfr) js_jfr_stream_stores(js_sess.stores[0], js_sess.stores[1]); /* before handlers write to next */
    js_store *old = js_sampler_swap_store(next);
    js_sess.active = next_i;
    js_sess.names_cursor = 0;
    atomic_fetch_add(&js_sess.rotations, 1);
    /* The full store's samples go to every output, also when a handler stalled inside it: reading it is safe. */
    if (js_sess.jfr) js_jfr_stream_flush(); /* events naming it are written before it is emptied */
    js_store_fill f;
    js_store_usage(full, &f);
    atomic_fetch_add(&js_sess.unaggregated_weight, f.pair_dropped_weight);
    int rc = 0;
    if (js_sess.text_output) rc = js_fold_store(full, &js_sess.args, js_sess.profiles, err, errlen);
    js_sess.rotated_since_age = 1; /* its names are in the profiles now */
    if (!old) {
        /* A handler is still inside it after 1 s: leave it to that handler, never reset or reuse it; what the handler
         * adds later is in no output. */
        js_sess.stores[old_i] = NULL;
        if (js_sess.jfr) js_jfr_stream_stores(js_sess.stores[0], js_sess.stores[1]);
        atomic_fetch_add(&js_sess.abandoned_stores, 1);
        snprintf(err, errlen, "a signal handler stayed inside the call-trace store for 1 s; store abandoned");
        return -1;
    }
    js_store_reset(old);
    js_debug("store rotated: %u traces, %llu frames, %u pairs folded", f.traces, (unsigned long long)f.frames,
             f.pairs);
    return rc;
}

void js_session_format_status(int running, char *out, size_t outlen)
{
    js_stats_snapshot s;
    js_stats_get(&s);
    char stats[1024] = "";
    js_stats_format(&s, stats, sizeof stats);
    char iv[32] = "-";
    double elapsed = 0, rate = 0;
    /* The process's malloc heap, everyone's (the JVM's, ours, the C library's): in use (small blocks and mmapped ones)
     * and free but kept by the allocator. With Native Memory Tracking's malloc total, it splits a long run's growth. */
    struct mallinfo2 m = mallinfo2();
    if (running) {
        js_session_format_ns(js_sess.args.interval_ns, iv, sizeof iv);
        elapsed = (double)(js_mono_ns() - js_sess.started_ns) / 1e9;
        rate = elapsed > 0 ? (double)s.samples / elapsed : 0;
    }
    snprintf(out, outlen,
             "event=%s engine=%s interval=%s elapsed_s=%.1f samples_per_s=%.1f perf_counters_open=%lld names_cached=%llu "
             "heap_used_kib=%zu heap_free_kib=%zu\n"
             "store: traces=%llu/%u frames=%llu/%llu pairs=%llu/%u rotations=%llu not_aggregated_weight=%llu%s%s\n%s",
             running ? js_kind_name(&js_sess.args, JS_KIND_EXEC) : "-", running ? js_sess.eng.engine : "none", iv, elapsed, rate,
             js_engine_perf_counters_open(), (unsigned long long)js_names_cached(), (m.uordblks + m.hblkhd) / 1024,
             m.fordblks / 1024,
             (unsigned long long)atomic_load(&js_sess.fill_traces), STORE_TRACES,
             (unsigned long long)atomic_load(&js_sess.fill_frames), (unsigned long long)STORE_FRAMES,
             (unsigned long long)atomic_load(&js_sess.fill_pairs), STORE_PAIRS,
             (unsigned long long)atomic_load(&js_sess.rotations), (unsigned long long)atomic_load(&js_sess.unaggregated_weight),
             running && js_sess.eng.why[0] ? "\nnote: " : "", running ? js_sess.eng.why : "", stats);
}

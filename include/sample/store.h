/* store.h - lock-free call-trace store, written from signal handlers.
 *
 * Memory is reserved once at create (mmap, touched lazily); js_store_add is async-signal-safe:
 * no malloc, no locks, bounded probing, atomics only. A trace is keyed by a 64-bit hash of its
 * frames (a collision between distinct stacks is treated as the same trace: ~n^2/2^65).
 * Sample weights live in (trace, thread) pairs so per-thread attribution is kept. When any
 * table or the frame arena is full the sample is counted as dropped, never lost silently.
 * Readers (dump) run on a normal thread and skip entries still being published.
 */
#ifndef JS_STORE_H
#define JS_STORE_H

#include <stddef.h>
#include <stdint.h>

/* One raw frame as captured in the handler: a jmethodID plus bci, or a pseudo-frame. */
typedef enum {
    JS_RF_JAVA = 0,   /* method = jmethodID, bci = bytecode index (-1 unknown) */
    JS_RF_NATIVE = 1, /* Java native method: method = jmethodID */
    JS_RF_ERROR = 2,  /* method unused, bci = walker error code (see walker.h) */
    JS_RF_NULL_ID = 3, /* a Java frame whose jmethodID was not yet created */
    JS_RF_CLASS = 4,   /* an allocated or locked class, the leaf of alloc and lock stacks: method = class id */
    JS_RF_NATIVE_PC = 5, /* a native frame (cstack=fp): method = its pc; bci 0 the interrupted pc, 1 a return address */
    JS_RF_CPU = 6,     /* record-cpu: the CPU the sample was taken on (bci), the root of a cpu stack */
    JS_RF_KLASS = 7    /* a class as HotSpot's Klass* (method): bci JS_KLASS_RECEIVER (features=vtable: a vtable/itable
                        * call's receiver), or a tlab allocation's class, the stack's leaf */
} js_raw_kind;
enum { JS_KLASS_RECEIVER = 0, JS_KLASS_NEW_TLAB = 2, JS_KLASS_OUTSIDE_TLAB = 3 };

typedef struct {
    int32_t bci;
    int32_t kind;
    const void *method;
} js_raw_frame;

typedef struct js_store js_store;

/* Hard caps on create's arguments (larger requests are refused with an error). */
#define JS_STORE_MAX_TRACES (1u << 24)
#define JS_STORE_MAX_PAIRS (1u << 26)
#define JS_STORE_MAX_FRAMES (1ull << 30)

/* Reserve a store for up to max_traces distinct stacks, max_frames frames in total and
 * max_pairs (trace, thread) pairs; NULL with err on failure. */
js_store *js_store_create(uint32_t max_traces, uint64_t max_frames, uint32_t max_pairs, char *err, size_t errlen);
/* Unmap everything. No handler may be running. */
void js_store_destroy(js_store *s);
/* Signal-safe. Record weight for the stack frames[0..n) (frames[0] = leaf) on thread `thread`.
 * Returns the trace id (>0), or 0 if the sample was dropped because the trace table or frame
 * arena is full. When only the (trace, thread) pair table is full the trace id is still returned
 * (a streamed event can name it) and the weight is counted in pair_dropped_weight. */
uint32_t js_store_add(js_store *s, const js_raw_frame *frames, int n, uint32_t thread, uint64_t weight);
/* Signal-safe. Record weight once more for trace id (returned by an earlier js_store_add on s) on thread; 0, or -1
 * if s holds no such trace. */
int js_store_add_again(js_store *s, uint32_t id, uint32_t thread, uint64_t weight);
/* Forget all traces (and give the memory back). No handler may be running. */
void js_store_reset(js_store *s);

/* Readers, on a normal thread. */
uint64_t js_store_dropped(const js_store *s);
uint64_t js_store_total_weight(const js_store *s);
uint32_t js_store_trace_count(const js_store *s);
/* Frames of trace id (leaf first), or NULL if the id is unknown or not yet published. */
const js_raw_frame *js_store_trace(const js_store *s, uint32_t id, int *n);
/* The 64-bit hash of trace id's frames (never 0: the store's identity of a stack, equal for equal frames in any
 * store), or 0 if the id is unknown or not yet published. */
uint64_t js_store_trace_hash(const js_store *s, uint32_t id);
/* Call fn for every published (trace, thread) pair with non-zero weight; stops if fn returns non-zero. */
typedef int (*js_pair_fn)(uint32_t trace, uint32_t thread, uint64_t weight, void *ctx);
int js_store_foreach_pair(const js_store *s, js_pair_fn fn, void *ctx);
/* The same with the pair's sample count: how many js_store_add / js_store_add_again calls made its weight (the
 * allocations or contentions behind an alloc or lock weight). A count read while a handler adds may lag its weight
 * by that one sample. */
typedef int (*js_pair_counted_fn)(uint32_t trace, uint32_t thread, uint64_t weight, uint64_t count, void *ctx);
int js_store_foreach_pair_counted(const js_store *s, js_pair_counted_fn fn, void *ctx);
/* Id of the seq-th trace published (0-based, in publication order), or 0 if not yet published:
 * lets a reader visit only the traces added since it last looked. */
uint32_t js_store_trace_id_at(const js_store *s, uint32_t seq);
/* Generation tag of the store (set by its owner between uses; read by the handler to tag events). */
void js_store_set_gen(js_store *s, uint32_t gen);
uint32_t js_store_gen(const js_store *s);
/* How full the store is, and what it could not keep: samples dropped because the trace table or
 * arena was full, and weight whose trace was kept but not aggregated (pair table full). */
typedef struct {
    uint32_t traces, max_traces;
    uint64_t frames, max_frames;
    uint32_t pairs, max_pairs;
    uint64_t dropped, pair_dropped_weight;
} js_store_fill;
void js_store_usage(const js_store *s, js_store_fill *f);
/* Bytes of address space reserved (for status and docs). */
size_t js_store_reserved_bytes(const js_store *s);

#endif

/* names.h - turn captured frames into names, outside the signal handler.
 *
 * Caches, per jmethodID, "pkg.Class.method", the signature and the line table, filled through
 * JVMTI while the class is alive: js_names_refresh, run often during profiling, resolves the
 * methods of the traces published since its last call, so methods of classes unloaded later
 * still have names. An id that JVMTI no longer accepts and was never cached becomes
 * "[unloaded_method]" and is counted (js_names_unresolved). No lock is ever held across a
 * JVMTI call: ids are collected under the cache lock, resolved without it and published under
 * it again.
 *
 * Frame kinds come from CompiledMethodLoad/Unload records, kept by compiled code address with
 * reference counts under their own short lock (so the VM's compile callbacks never wait behind
 * name resolution): a frame is inlined if its method is inlined into a caller on the stack in
 * some compiled code still loaded, JIT if it has compiled code of its own, interpreted
 * otherwise (an approximation: AsyncGetCallTrace does not report frame kinds). Unloading code
 * removes its facts, so they do not grow without bound. Thread-safe; never call from a signal
 * handler.
 */
#ifndef JS_NAMES_H
#define JS_NAMES_H

#include <jvmti.h>
#include <stddef.h>
#include <stdint.h>
#include "output/profile.h"
#include "sample/store.h"

/* Remember the VM and JVMTI environment used for lookups. */
void js_names_init(JavaVM *vm, jvmtiEnv *jvmti);
/* Resolve the methods of the traces published in s since *cursor (0 for a new store
 * generation) and advance *cursor; methods already cached cost one lookup. A cursor beyond
 * the store's count (the store was reset) starts over. */
void js_names_refresh(const js_store *s, uint32_t *cursor);
/* CompiledMethodLoad: code at code_addr compiles root, with the given methods inlined into it. */
void js_names_compiled(const void *code_addr, jmethodID root, const jmethodID *inlined, int n);
/* CompiledMethodUnload: the code at code_addr (compiling root) is gone; its facts are dropped. */
void js_names_compiled_unload(const void *code_addr, jmethodID root);
/* How js_names_frame names frames (flags). */
#define JS_NF_LINES 1 /* ":LINE" after Java frames */
#define JS_NF_SIG 2   /* the method's descriptor after Java frames */
#define JS_NF_LIB 4   /* native frames with a symbol as "library`symbol" */
/* Name frames[i] (leaf first, n frames) into buf as flags (JS_NF_*) ask; returns its kind. */
js_frame_type js_names_frame(const js_raw_frame *frames, int i, int n, unsigned flags, char *buf, size_t len);
/* A Java method split the way JFR records it. */
typedef struct {
    char cls[512];  /* declaring class, internal form "java/util/HashMap$Node" */
    char name[256]; /* method name */
    char sig[512];  /* JVM descriptor "(I)V" */
    int modifiers;
} js_method_parts;
/* The Java name ("java.lang.Integer") of the class at klass (a Klass* a features=vtable frame holds), read from
 * HotSpot's Symbol through safe reads; 0, or -1 if it cannot be read (a class unloaded since). */
int js_names_klass(const void *klass, char *buf, size_t len);
/* The same name as the VM keeps it ("java/lang/String", "[B"). */
int js_names_klass_internal(const void *klass, char *buf, size_t len);
/* Parts of method (a jmethodID); 0, or -1 if it cannot be named. */
int js_names_method_parts(const void *method, js_method_parts *out);
/* Source line of bci in method, or -1 if unknown. */
int js_names_line(const void *method, int bci);
/* Kind of frames[i] (leaf first, n frames) without naming it. */
js_frame_type js_names_kind(const js_raw_frame *frames, int i, int n);
/* Kinds (js_frame_type) of frames[0..n) (leaf first): what js_names_kind gives frame by frame, with the compile facts
 * lock taken once for the whole trace (names_kinds.c). */
void js_names_trace_kinds(const js_raw_frame *frames, int n, uint8_t *kinds);
/* Kinds (js_frame_type) and source lines (-1 unknown, and for frames other than Java frames with a bci) of
 * frames[0..n) (leaf first): what js_names_kind and js_names_line give frame by frame, with each cache lock taken
 * about once for the whole trace. */
void js_names_trace_info(const js_raw_frame *frames, int n, uint8_t *kinds, int32_t *lines);
/* Distinct methods cached as not nameable (their class was unloaded before they were resolved). */
uint64_t js_names_unresolved(void);
/* Methods whose names are cached now (status reports it). */
uint64_t js_names_cached(void);
/* Between sessions (no stored trace refers to a cached name): if more than keep methods are cached, forget them all,
 * so that a JVM that loads classes without end (throw-away class loaders, generated code) does not grow the cache
 * without end; live methods are named again when sampled. Returns how many were forgotten (0 if none). */
uint64_t js_names_trim(uint64_t keep);
/* Within a session, at a point where every output has used the names it took before the last call (a JFR chunk
 * ended, text profiles folded): if more than keep methods are cached, forget those not looked up since the last
 * call; then begin a new age. What an output still needs must have been looked up since: a trace when it is
 * refreshed or written (js_names_touch), whatever waits in a store or a table (js_names_touch_store, live) just before
 * this call. Returns how many were forgotten (0 if none). */
uint64_t js_names_age(uint64_t keep);
/* Count frames[0..n)'s methods as looked up now (those cached; nothing is resolved). */
void js_names_touch(const js_raw_frame *frames, int n);
/* js_names_touch for every trace of s. */
void js_names_touch_store(const js_store *s);
/* Forget cached names and compile records (VM death). */
void js_names_clear(void);
/* Forget the compile facts only (before the VM replays its loaded code: js_methodids_on). */
void js_names_compiled_clear(void);

#endif

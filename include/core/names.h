/* names.h - turn captured frames into names, outside the signal handler.
 *
 * Caches, per jmethodID, "pkg.Class.method", the signature and the line table, filled through
 * JVMTI while the class is alive (js_names_refresh runs periodically during profiling), so
 * methods of classes unloaded later still have names; an id that JVMTI no longer accepts and
 * was never cached becomes "[unloaded_method]". Frame kinds come from CompiledMethodLoad
 * records: inlined if the method was inlined into a caller on the stack, JIT if it has
 * compiled code of its own, interpreted otherwise (an approximation: AsyncGetCallTrace does
 * not report frame kinds). Thread-safe (one mutex); never call from a signal handler.
 */
#ifndef JS_NAMES_H
#define JS_NAMES_H

#include <jvmti.h>
#include <stddef.h>
#include "output/profile.h"
#include "sample/store.h"

/* Remember the VM and JVMTI environment used for lookups. */
void js_names_init(JavaVM *vm, jvmtiEnv *jvmti);
/* Resolve and cache every method seen in the store so far. */
void js_names_refresh(const js_store *s);
/* Record a compiled method and the methods inlined into it (CompiledMethodLoad). */
void js_names_compiled(jmethodID root, const jmethodID *inlined, int n);
/* Name frames[i] (leaf first, n frames) into buf; returns its kind. */
js_frame_type js_names_frame(const js_raw_frame *frames, int i, int n, int lines, int sig, char *buf, size_t len);
/* A Java method split the way JFR records it. */
typedef struct {
    char cls[512];  /* declaring class, internal form "java/util/HashMap$Node" */
    char name[256]; /* method name */
    char sig[512];  /* JVM descriptor "(I)V" */
    int modifiers;
} js_method_parts;
/* Parts of method (a jmethodID); 0, or -1 if it cannot be named. */
int js_names_method_parts(const void *method, js_method_parts *out);
/* Source line of bci in method, or -1 if unknown. */
int js_names_line(const void *method, int bci);
/* Kind of frames[i] (leaf first, n frames) without naming it. */
js_frame_type js_names_kind(const js_raw_frame *frames, int i, int n);
/* Forget cached names and compile records (VM death). */
void js_names_clear(void);

#endif

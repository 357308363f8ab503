/* vmevents.h - the events the VM reports rather than a signal: sampled allocations and lock waits.
 *
 * alloc: JVMTI SampledObjectAlloc at SetHeapSamplingInterval(alloc=), each sample weighted by the bytes it
 * stands for (unbiased). lock: JVMTI MonitorContendedEnter/Entered (contended `synchronized`, the wait
 * timed between the two) and LockSupport.park (jdk.internal.misc.Unsafe.park bound to a timing wrapper when
 * the VM first binds it, which only an agent loaded at start-up sees; the wrapper costs one atomic load while
 * lock is off), a wait recorded when it lasted at least lock=. (Thread.start0 is wrapped the same way for the thread
 * starts of core/snapshot.h.) Each event's stack (JVMTI
 * GetStackTrace, in the thread itself) ends in a class frame: the allocated class, the monitor's, the park
 * blocker's. Events go through js_sampler_record into the session's store and JFR stream.
 *
 * The callbacks run in the thread the event is about; none blocks on the profiler (a class id costs one
 * short mutex). The capabilities each event needs are added at start and relinquished at stop (sampled
 * allocations are one JVMTI environment's at a time: another agent may want them); one the VM refuses turns
 * the matching event into a start error naming it.
 */
#ifndef JS_VMEVENTS_H
#define JS_VMEVENTS_H

#include <jvmti.h>
#include <stddef.h>
#include <stdint.h>

#include "core/args.h"

/* Remember the VM and JVMTI environment (the agent adds the capabilities it could get). */
void js_vmevents_init(JavaVM *vm, jvmtiEnv *jvmti);
/* Start-up (Agent_OnLoad) only: watch native method binding to wrap, when the VM binds them, Unsafe.park (park:
 * lock events time parking) and Thread.start0 (thread_starts: core/snapshot.h records who starts threads). 0 or
 * -1. */
int js_vmevents_capture(jvmtiEnv *jvmti, int park, int thread_starts);
/* Start-up (Agent_OnLoad) only, when the start-up command samples allocations: set the VM's heap sampling interval
 * now. A thread draws its first sample point at the interval in force when it is created, so threads made before
 * VMInit (main among them) would otherwise sample nothing until they had allocated about 512 KiB. The capability
 * is given back at once (the session takes it again). 0, or -1 if the VM refused (nothing changed). */
int js_vmevents_early_interval(jvmtiEnv *jvmti, uint64_t alloc_bytes);
/* Enable what a asks for (alloc, lock); 0, or -1 with one line in err (nothing left enabled). note gets a
 * warning line, or "" (e.g. park not traced). */
int js_vmevents_start(const js_args *a, char *note, size_t notelen, char *err, size_t errlen);
/* Disable every event enabled by start and give back its capabilities and the heap sampling interval (the
 * callbacks may still run briefly: they record nothing). */
void js_vmevents_stop(void);

/* JVMTI callbacks, forwarded by the agent. */
void js_vmevents_on_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass, jlong size);
void js_vmevents_on_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object);
void js_vmevents_on_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object);
void js_vmevents_on_native_bind(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method, void *address,
                                void **new_address);

#endif

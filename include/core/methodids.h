/* methodids.h - the JVM events that make jmethodIDs, on only while a session runs.
 *
 * AsyncGetCallTrace names a Java frame only by a jmethodID that already exists; it cannot make one in a
 * signal handler. So every method of every loaded class needs its id before it is sampled: ids are made for
 * all loaded classes when a session starts, and for each class the JVM prepares while it runs (ClassPrepare).
 * CompiledMethodLoad, which tells which frames are compiled or inlined, makes ids too: while it is on, the JIT
 * makes one for every method it compiles.
 *
 * HotSpot never frees a jmethodID: a class loader that had one leaves about 100 bytes of C heap behind when it is
 * unloaded (JDK 17 and 25). Were the events on all the time, an agent only waiting for its first command, or for
 * backend tasks for weeks, would leave that behind for every loader an application drops. So between sessions
 * they are off, and a start turns them on, has the VM replay its compiled code and makes the ids of the classes
 * loaded so far.
 */
#ifndef JS_METHODIDS_H
#define JS_METHODIDS_H

#include <jvmti.h>

/* Remember the VM and JVMTI environment (both NULL without a JVM: every call below does nothing). */
void js_methodids_init(JavaVM *vm, jvmtiEnv *jvmti);
/* A session starts: the events on, the compile facts replayed, ids for every class loaded so far. Returns the
 * classes visited, or -1 if JVMTI refused (logged; the session runs, frames of classes without ids are unnamed). */
int js_methodids_on(void);
/* The session ended: the events off. */
void js_methodids_off(void);
/* ClassPrepare: ids for every method of klass. */
void js_methodids_class(jvmtiEnv *env, jclass klass);

#endif

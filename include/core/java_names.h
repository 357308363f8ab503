/* java_names.h - Java threads named as the JVM names them now, not only as they were called when
 * they started: a thread renamed later (Thread.setName, by itself or by another thread) shows its
 * latest name in every output.
 *
 * The refresh lists the VM's live threads (JVMTI GetAllThreads), reads each one's name (GetThreadInfo)
 * and Java id (Thread.tid), and renames the entries of thread_names.h recorded with that Java id. A thread
 * recorded without a Java id (found in /proc before an attach set the agent up, named by its 15-byte comm) is
 * matched through HotSpot's JavaThread (Thread.eetop, then JavaThread::_osthread and OSThread::_thread_id
 * from gHotSpotVMStructs, read through the kernel) and takes its full name if its comm is the JVM's cut of it.
 * It
 * runs on a thread attached to the VM: the housekeeper (every JS_JAVA_NAMES_MS while a session runs)
 * and the stop and dump commands (right before an output is written). A thread's last name is taken
 * when it ends (ThreadEnd). The JVM's own Java threads (JIT compilers), hidden from JVMTI, are named
 * through HotSpot's thread list (vm_names.h); threads that run no Java (GC) keep the kernel's name of them,
 * 15 characters at most. Normal threads only, never a signal handler.
 */
#ifndef JS_JAVA_NAMES_H
#define JS_JAVA_NAMES_H

#include <jni.h>
#include <jvmti.h>

#define JS_JAVA_NAMES_MS 1000

/* Remember the VM and the JVMTI environment (NULL: refresh does nothing, as in native tests). */
void js_java_names_init(JavaVM *vm, jvmtiEnv *jvmti);
/* Rename recorded Java threads to their current names; the number renamed, or -1 if the VM's
 * threads could not be listed (the calling thread is not attached, or the VM is gone). */
int js_java_names_refresh(void);

#endif

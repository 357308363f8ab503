/* vm_names.h - full names of the JVM's own Java threads, which JVMTI hides (JIT compilers, service threads):
 * the kernel keeps 15 bytes of a thread's name (`C2 CompilerThre`), HotSpot keeps the whole of it in the
 * thread's java.lang.Thread.
 *
 * The names are read, never guessed: HotSpot's list of JavaThreads (ThreadsSMRSupport::_java_thread_list) and
 * the fields from each one to its OS tid and to its java.lang.Thread come from gHotSpotVMStructs; where
 * java.lang.Thread.name, String.value and String.coder sit in an object, and how references are compressed,
 * from the JDK's own Unsafe and gHotSpotVMStructs. Every read goes through the kernel (js_safe_read): the VM
 * frees and moves what is read meanwhile, so a stale pointer costs a failed read. A name is taken only if
 * the JavaThread's tid is the thread's, every pointer on the way read the same again after the characters,
 * and the thread's comm is the JVM's 15-byte cut of that name. The reads are first checked on the threads
 * JVMTI does list (their names must come out exactly as JVMTI gives them): a JVM where they do not (another
 * layout, a collector whose references cannot be read raw) keeps comm.
 * Threads that are not JavaThreads (GC workers, the VM thread) are not on that list and keep comm.
 *
 * Runs on a thread attached to the VM (java_names.c's refresh), never in a signal handler.
 */
#ifndef JS_VM_NAMES_H
#define JS_VM_NAMES_H

#include <jni.h>
#include <stddef.h>
#include <stdint.h>

#include "core/thread_names.h"

/* Give recorded threads still named by a 15-byte comm, with no Java id, their full names from the JVM.
 * tops/names: JavaThread* (Thread.eetop) and JVMTI name of the n threads JVMTI listed, to check the reads on.
 * The number of threads renamed. */
int js_vm_names_refresh(JNIEnv *jni, const uintptr_t *tops, const char (*names)[JS_THREAD_NAME_MAX], size_t n);

#endif

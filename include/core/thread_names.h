/* thread_names.h - display names and Java ids of threads, by the serial the thread table gives.
 *
 * Written when a thread is seen (JVMTI ThreadStart, the /proc rescan), read when outputs are
 * written; names outlive their threads. A hash table by serial, bounded at
 * JS_THREAD_NAMES_MAX entries: once full, recording a new serial evicts the oldest recorded
 * name whose thread has ended (its tid no longer holds that serial in the thread table), so
 * a process that keeps creating threads uses bounded memory and samples of long-gone threads
 * are then labelled "[unknown thread]". Live threads are never evicted (the bound exceeds the
 * thread table's capacity). Normal threads only (a mutex), never a signal handler.
 */
#ifndef JS_THREAD_NAMES_H
#define JS_THREAD_NAMES_H

#include <stddef.h>
#include <stdint.h>

#define JS_THREAD_NAME_MAX 64
#ifndef JS_THREAD_NAMES_MAX /* the fuzzing build lowers it, so its targets reach eviction cheaply (docs/FUZZING.md) */
#define JS_THREAD_NAMES_MAX 65536 /* names kept (about 6 MiB at most); > JS_THREADS_MAX */
#endif
#define JS_VM_NAME_TRIES 3 /* lookups of a thread's full name in the JVM before it keeps its comm */

/* Record a display name for a serial (copied; later names for the same serial win). */
void js_threads_set_name(uint32_t serial, int tid, const char *name);
/* Name of serial into buf as "[name tid=N]"; "[tid=N]" or "[unknown thread]" if none. */
void js_threads_label(uint32_t serial, char *buf, size_t len);
/* Record the java.lang.Thread id of serial (after its name was set). */
void js_threads_set_java_id(uint32_t serial, int64_t java_tid);
/* Name, OS tid and Java thread id (0 if not Java) of serial; -1 if nothing was recorded. */
int js_threads_info(uint32_t serial, char *name, size_t len, int *tid, int64_t *java_tid);
/* Rename the entries recorded with Java thread id ids[i] to names[i] (i < n; Java ids are never reused); the
 * number of entries whose name changed. matched (NULL, or n flags) gets 1 where an entry had ids[i]. */
int js_threads_rename_java(const int64_t *ids, const char (*names)[JS_THREAD_NAME_MAX], size_t n,
                           unsigned char *matched);
/* The live thread tid, recorded without a Java id (found in /proc, named by its comm), is the Java thread java_tid
 * named name: recorded so if its comm is what the JVM made of that name (its first 15 bytes). 1 if it was. */
int js_threads_adopt_java(int tid, int64_t java_tid, const char *name);
/* Tids (at most max) of live threads recorded without a Java id whose name is a 15-byte comm, perhaps the
 * kernel's cut of a longer name, each returned at most JS_VM_NAME_TRIES times; their number. */
size_t js_threads_cut_names(int *tids, size_t max);
/* The live thread tid, recorded without a Java id under its comm, is named name by the JVM: renamed so if its comm
 * is the first 15 bytes of that longer name. 1 if it was. */
int js_threads_adopt_vm(int tid, const char *name);
/* Rename the entry of the thread that holds tid in the thread table now (its name as it ends). */
void js_threads_rename_tid(int tid, const char *name);
/* Drop all recorded names. */
void js_threads_clear_names(void);
/* Read /proc/self/task/TID/comm into buf; -1 if the thread is gone. */
int js_threads_comm(int tid, char *buf, size_t len);
/* Names currently kept (tests, diagnostics). */
size_t js_threads_names_count(void);

#endif

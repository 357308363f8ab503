/* vm_names_int.h - the reads behind vm_names.h, with the layout handed in (native tests build one in memory). */
#ifndef JS_VM_NAMES_INT_H
#define JS_VM_NAMES_INT_H

#include <stddef.h>
#include <stdint.h>

/* Where HotSpot keeps what leads from its list of JavaThreads to each one's OS tid and java.lang.Thread name.
 * Offsets are -1 when unknown; addresses 0. */
typedef struct {
    uintptr_t java_thread_list; /* &ThreadsSMRSupport::_java_thread_list (a ThreadsList*) */
    long long list_length;      /* ThreadsList::_length (uint32) */
    long long list_threads;     /* ThreadsList::_threads (JavaThread *const *) */
    long long osthread;         /* JavaThread::_osthread (Thread::_osthread in JDK 25) */
    long long os_thread_id;     /* OSThread::_thread_id (int32) */
    long long thread_obj;       /* JavaThread::_threadObj (an OopHandle) */
    long long handle_obj;       /* OopHandle::_obj (the oop's slot) */
    int narrow_oops;            /* 1: reference fields are 32-bit compressed oops */
    uintptr_t oop_base;         /* their base and shift (CompressedOops) */
    int oop_shift;
    long long name_field;       /* java.lang.Thread.name (String) */
    long long value_field;      /* java.lang.String.value (byte[]) */
    long long coder_field;      /* java.lang.String.coder (byte: 0 Latin-1, 1 UTF-16) */
    long long byte_base;        /* first element of a byte[]; its int length sits right before it */
} js_vm_layout;

/* 1 if every offset of l is known. */
int js_vm_layout_complete(const js_vm_layout *l);
/* The JavaThreads of HotSpot's current list, at most max, into out; their number, or -1 if it cannot be read. */
int js_vm_java_threads(const js_vm_layout *l, uintptr_t *out, size_t max);
/* The OS tid of a JavaThread, or -1. */
int js_vm_thread_tid(const js_vm_layout *l, uintptr_t java_thread);
/* The name of java_thread's java.lang.Thread as UTF-8 into out (cut to len-1 bytes), if its OS tid is tid and
 * every pointer on the way read the same before and after the characters did: 0, or -1 (stale, moving, absent). */
int js_vm_thread_name(const js_vm_layout *l, uintptr_t java_thread, int tid, char *out, size_t len);
/* A Java string's characters (coder 0 Latin-1, 1 UTF-16 little-endian) as UTF-8 into out, cut at a whole
 * character to len-1 bytes; its length, or -1 for an unknown coder or an odd UTF-16 length. */
int js_vm_string_utf8(int coder, const unsigned char *chars, size_t n, char *out, size_t len);
/* 1 if comm is the kernel's 15-byte cut of name and name is longer (a thread's full name for that comm). */
int js_vm_name_extends(const char *comm, const char *name);

#endif

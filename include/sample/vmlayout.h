/* vmlayout.h - the layout of HotSpot's own structures, read from the tables it publishes for its
 * serviceability agent (gHotSpotVMStructs, gHotSpotVMTypes in libjvm).
 *
 * js_vmlayout_init runs once on a normal thread (dlsym, string compares) and fills one
 * process-wide js_vmlayout; handlers only read it. Field names differ between JDK 17 and 25
 * (CompiledMethod::_method vs nmethod::_method, CodeBlob::_code_begin vs _code_offset, ...):
 * the parser records whichever is present, and refuses a layout it cannot complete.
 */
#ifndef JS_VMLAYOUT_H
#define JS_VMLAYOUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int ok; /* 1 when every field below was found */
    /* CodeCache statics and the heaps they list */
    uintptr_t heaps_addr;      /* &CodeCache::_heaps (GrowableArray<CodeHeap*>*) */
    uintptr_t low_bound_addr;  /* &CodeCache::_low_bound */
    uintptr_t high_bound_addr; /* &CodeCache::_high_bound */
    int ga_len, ga_data;       /* GrowableArrayBase::_len, GrowableArray<int>::_data */
    int heap_memory, heap_segmap, heap_log2_seg; /* CodeHeap::_memory, _segmap (VirtualSpace), _log2_segment_size */
    int vs_low, vs_high;       /* VirtualSpace::_low, _high: the committed part */
    int hb_used;               /* HeapBlock::Header::_used */
    int hb_size;               /* sizeof(HeapBlock): the blob follows its block header */
    /* CodeBlob */
    int cb_name, cb_size, cb_frame_size;
    int cb_frame_complete, cb_frame_complete_bytes; /* int (17) or int16_t (25) */
    int cb_code_begin, cb_code_end;   /* JDK 17: address fields, else -1 */
    int cb_code_offset, cb_data_offset; /* JDK 25: offsets from the blob, else -1 */
    int nm_method;                    /* CompiledMethod::_method (17) / nmethod::_method (25) */
    int nm_verified_entry_point;      /* JDK 17: nmethod::_verified_entry_point (address), else -1 */
    int nm_verified_entry_offset;     /* JDK 25: nmethod::_verified_entry_offset (u2 from code begin), else -1 */
    /* Method* -> jmethodID */
    int m_const_method, cm_constants, cm_idnum, cp_holder, ik_jmethod_ids;
    /* JavaThread: stack bounds */
    int jt_stack_base, jt_stack_size;
    int jt_anchor, anchor_sp; /* JavaThread::_anchor, JavaFrameAnchor::_last_Java_sp */
    int anchor_pc, anchor_fp; /* JavaFrameAnchor::_last_Java_pc, _last_Java_fp; -1 when the tables lack one */
    int jt_state;             /* JavaThread::_thread_state (JavaThreadState, an int); -1 if absent */
    /* features=vtable and comptask (each -1, or 0 for an address, when the tables lack it) */
    uintptr_t ckp_base_addr, ckp_shift_addr; /* &CompressedKlassPointers::_base and _shift (17: _narrow_klass.*) */
    int oop_klass;            /* oopDesc::_metadata._compressed_klass */
    int klass_name, sym_length, sym_body; /* Klass::_name, Symbol::_length (u2), Symbol::_body */
    int ct_env, env_task, task_method;    /* CompilerThread::_env, ciEnv::_task, CompileTask::_method */
    uintptr_t stub_ret_addr;  /* &StubRoutines::_call_stub_return_address; 0 if absent */
    int jcw_anchor;           /* JavaCallWrapper::_anchor; -1 if absent */
    uintptr_t flags_addr, nflags_addr;    /* &JVMFlag::flags (JVMFlag*), &JVMFlag::numFlags (size_t); 0 if absent */
    int flag_name, flag_addr, flag_flags, flag_size; /* JVMFlag::_name, _addr, _flags, sizeof(JVMFlag); -1 if absent */
} js_vmlayout;

/* The layout handlers read (zeroed until js_vmlayout_init succeeds). */
extern js_vmlayout js_vm;

/* Signal-safe: 1 if the JavaThread thread, the calling thread's own, is in a state in which no other thread walks
 * its stack (_thread_in_Java, _thread_in_vm and their transitions: safepoints and handshakes wait for it), so its
 * frame anchor may be changed for a moment and put back. 0 otherwise (_thread_blocked, _thread_in_native: a
 * GC or a handshake may be walking it from its anchor right now), or when the state cannot be read. */
int js_vm_anchor_private(uintptr_t thread);

/* Read HotSpot's tables from the loaded libjvm (normal thread). 0, or -1 with err naming what is
 * missing; on -1 js_vm.ok stays 0. */
int js_vmlayout_init(char *err, size_t errlen);

/* One entry of the loaded libjvm's gHotSpotVMStructs: a field of a VM type, with its offset in an instance (instance
 * fields) or its address (static fields). */
typedef struct {
    const char *type, *field; /* "JavaThread", "_osthread" */
    const char *type_string;  /* declared type ("OSThread*"), or NULL */
    int is_static;
    uint64_t offset;          /* instance fields */
    uintptr_t address;        /* static fields */
} js_vmstruct;

/* Call fn(ctx, entry) for every entry of the loaded libjvm's gHotSpotVMStructs, in order (normal thread: dlopen).
 * 0, or -1 when libjvm.so is not loaded or publishes no such table. */
int js_vmstructs_each(void (*fn)(void *ctx, const js_vmstruct *e), void *ctx);

/* Fill js_vm from tables given directly (tests: a fake VM's tables). Same result as init. */
typedef struct {
    const char *type, *field; /* "CodeBlob", "_frame_size"; type alone names a type size entry */
    const char *type_string;  /* declared type ("int16_t"), or NULL */
    uint64_t value;           /* offset, static address or type size */
} js_vmlayout_entry;
int js_vmlayout_from(const js_vmlayout_entry *entries, int n, char *err, size_t errlen);

#endif

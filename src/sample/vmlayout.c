/* vmlayout.c - see vmlayout.h. */
#include "sample/vmlayout.h"

#include <dlfcn.h>
#include <string.h>

#include "sample/safe_fmt.h"

/* Written once by init on a normal thread before any handler reads it. */
js_vmlayout js_vm;

/* How a wanted entry is stored: a field offset (int), a static's address, or a type size. */
enum { OFF, STATIC, SIZE };

typedef struct {
    const char *type, *field;
    int kind;
    int required; /* 0: one of a pair of alternatives (checked after parsing) */
    size_t dest;  /* offsetof(js_vmlayout, ...) */
} wanted;

#define W(t, f, k, r, d) {t, f, k, r, offsetof(js_vmlayout, d)}
static const wanted WANTED[] = {
    W("CodeCache", "_heaps", STATIC, 1, heaps_addr),
    W("CodeCache", "_low_bound", STATIC, 1, low_bound_addr),
    W("CodeCache", "_high_bound", STATIC, 1, high_bound_addr),
    W("GrowableArrayBase", "_len", OFF, 1, ga_len),
    W("GrowableArray<int>", "_data", OFF, 1, ga_data),
    W("CodeHeap", "_memory", OFF, 1, heap_memory),
    W("CodeHeap", "_segmap", OFF, 1, heap_segmap),
    W("CodeHeap", "_log2_segment_size", OFF, 1, heap_log2_seg),
    W("VirtualSpace", "_low", OFF, 1, vs_low),
    W("VirtualSpace", "_high", OFF, 1, vs_high),
    W("HeapBlock::Header", "_used", OFF, 1, hb_used),
    W("HeapBlock", NULL, SIZE, 1, hb_size),
    W("CodeBlob", "_name", OFF, 1, cb_name),
    W("CodeBlob", "_size", OFF, 1, cb_size),
    W("CodeBlob", "_frame_size", OFF, 1, cb_frame_size),
    W("CodeBlob", "_frame_complete_offset", OFF, 1, cb_frame_complete),
    W("CodeBlob", "_code_begin", OFF, 0, cb_code_begin),
    W("CodeBlob", "_code_end", OFF, 0, cb_code_end),
    W("CodeBlob", "_code_offset", OFF, 0, cb_code_offset),
    W("CodeBlob", "_data_offset", OFF, 0, cb_data_offset),
    W("CompiledMethod", "_method", OFF, 0, nm_method),
    W("nmethod", "_method", OFF, 0, nm_method),
    W("nmethod", "_verified_entry_point", OFF, 0, nm_verified_entry_point),
    W("nmethod", "_verified_entry_offset", OFF, 0, nm_verified_entry_offset),
    W("Method", "_constMethod", OFF, 1, m_const_method),
    W("ConstMethod", "_constants", OFF, 1, cm_constants),
    W("ConstMethod", "_method_idnum", OFF, 1, cm_idnum),
    W("ConstantPool", "_pool_holder", OFF, 1, cp_holder),
    W("InstanceKlass", "_methods_jmethod_ids", OFF, 1, ik_jmethod_ids),
    W("JavaThread", "_stack_base", OFF, 1, jt_stack_base),
    W("JavaThread", "_stack_size", OFF, 1, jt_stack_size),
    W("JavaThread", "_anchor", OFF, 1, jt_anchor),
    W("JavaFrameAnchor", "_last_Java_sp", OFF, 1, anchor_sp),
    W("JavaFrameAnchor", "_last_Java_pc", OFF, 0, anchor_pc),
    W("JavaFrameAnchor", "_last_Java_fp", OFF, 0, anchor_fp),
    W("JavaThread", "_thread_state", OFF, 0, jt_state),
    W("CompressedKlassPointers", "_narrow_klass._base", STATIC, 0, ckp_base_addr),
    W("CompressedKlassPointers", "_narrow_klass._shift", STATIC, 0, ckp_shift_addr),
    W("CompressedKlassPointers", "_base", STATIC, 0, ckp_base_addr),
    W("CompressedKlassPointers", "_shift", STATIC, 0, ckp_shift_addr),
    W("oopDesc", "_metadata._compressed_klass", OFF, 0, oop_klass),
    W("Klass", "_name", OFF, 0, klass_name),
    W("Symbol", "_length", OFF, 0, sym_length),
    W("Symbol", "_body", OFF, 0, sym_body),
    W("CompilerThread", "_env", OFF, 0, ct_env),
    W("ciEnv", "_task", OFF, 0, env_task),
    W("CompileTask", "_method", OFF, 0, task_method),
    W("StubRoutines", "_call_stub_return_address", STATIC, 0, stub_ret_addr),
    W("JavaCallWrapper", "_anchor", OFF, 0, jcw_anchor),
    W("JVMFlag", "flags", STATIC, 0, flags_addr),
    W("JVMFlag", "numFlags", STATIC, 0, nflags_addr),
    W("JVMFlag", "_name", OFF, 0, flag_name),
    W("JVMFlag", "_addr", OFF, 0, flag_addr),
    W("JVMFlag", "_flags", OFF, 0, flag_flags),
    W("JVMFlag", NULL, SIZE, 0, flag_size),
};
#undef W
#define NWANTED ((int)(sizeof WANTED / sizeof WANTED[0]))

/* Parse state: which wanted entries were seen. */
typedef struct {
    js_vmlayout l;
    unsigned char seen[NWANTED];
} parse;

/* Sanity limit on a field offset or type size (HotSpot objects are a few KiB). */
#define MAX_OFFSET 65536

/* Record one table entry if it is wanted. */
static void consider(parse *p, const char *type, const char *field, const char *type_string, uint64_t value)
{
    for (int i = 0; i < NWANTED; i++) {
        const wanted *w = &WANTED[i];
        if (strcmp(w->type, type) != 0) continue;
        if ((w->field == NULL) != (field == NULL) || (field && strcmp(w->field, field) != 0)) continue;
        char *dest = (char *)&p->l + w->dest;
        if (w->kind == STATIC) {
            uintptr_t a = (uintptr_t)value;
            memcpy(dest, &a, sizeof a);
        } else {
            if (value >= MAX_OFFSET) return;
            int v = (int)value;
            memcpy(dest, &v, sizeof v);
            if (dest == (char *)&p->l.cb_frame_complete)
                p->l.cb_frame_complete_bytes = type_string && strstr(type_string, "16") ? 2 : 4;
        }
        p->seen[i] = 1;
    }
}

/* 1 if wanted entry (type, field) was seen. */
static int seen(const parse *p, const char *type, const char *field)
{
    for (int i = 0; i < NWANTED; i++)
        if (p->seen[i] && !strcmp(WANTED[i].type, type) && WANTED[i].field && !strcmp(WANTED[i].field, field))
            return 1;
    return 0;
}

/* Check the parse is complete and consistent; publish it into js_vm. */
static int finish(parse *p, char *err, size_t errlen)
{
    for (int i = 0; i < NWANTED; i++) {
        if (WANTED[i].required && !p->seen[i]) {
            js_safe_fmt(err, errlen, "HotSpot layout not understood: %s%s%s missing", WANTED[i].type,
                        WANTED[i].field ? "::" : "", WANTED[i].field ? WANTED[i].field : " size");
            return -1;
        }
    }
    int old_code = seen(p, "CodeBlob", "_code_begin") && seen(p, "CodeBlob", "_code_end");
    int new_code = seen(p, "CodeBlob", "_code_offset") && seen(p, "CodeBlob", "_data_offset");
    if (!old_code && !new_code) {
        js_safe_fmt(err, errlen, "HotSpot layout not understood: no code bounds in CodeBlob");
        return -1;
    }
    if (!seen(p, "CompiledMethod", "_method") && !seen(p, "nmethod", "_method")) {
        js_safe_fmt(err, errlen, "HotSpot layout not understood: no nmethod::_method");
        return -1;
    }
    int old_entry = seen(p, "nmethod", "_verified_entry_point"), new_entry = seen(p, "nmethod", "_verified_entry_offset");
    if (!old_entry && !new_entry) {
        js_safe_fmt(err, errlen, "HotSpot layout not understood: no nmethod verified entry");
        return -1;
    }
    if (old_entry) p->l.nm_verified_entry_offset = -1;
    else p->l.nm_verified_entry_point = -1;
    static const struct { const char *type, *field; size_t dest; } optional[] = {
        {"oopDesc", "_metadata._compressed_klass", offsetof(js_vmlayout, oop_klass)},
        {"Klass", "_name", offsetof(js_vmlayout, klass_name)},
        {"Symbol", "_length", offsetof(js_vmlayout, sym_length)},
        {"Symbol", "_body", offsetof(js_vmlayout, sym_body)},
        {"CompilerThread", "_env", offsetof(js_vmlayout, ct_env)},
        {"ciEnv", "_task", offsetof(js_vmlayout, env_task)},
        {"CompileTask", "_method", offsetof(js_vmlayout, task_method)},
        {"JavaCallWrapper", "_anchor", offsetof(js_vmlayout, jcw_anchor)},
        {"JVMFlag", "_name", offsetof(js_vmlayout, flag_name)},
        {"JVMFlag", "_addr", offsetof(js_vmlayout, flag_addr)},
        {"JVMFlag", "_flags", offsetof(js_vmlayout, flag_flags)},
    };
    for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++) /* what features= reads: -1 when absent */
        if (!seen(p, optional[i].type, optional[i].field)) *(int *)((char *)&p->l + optional[i].dest) = -1;
    int flag_size_seen = 0;
    for (int i = 0; i < NWANTED; i++)
        if (p->seen[i] && !strcmp(WANTED[i].type, "JVMFlag") && !WANTED[i].field) flag_size_seen = 1;
    if (!flag_size_seen) p->l.flag_size = -1;
    if (!seen(p, "JavaFrameAnchor", "_last_Java_pc")) p->l.anchor_pc = -1;
    if (!seen(p, "JavaFrameAnchor", "_last_Java_fp")) p->l.anchor_fp = -1;
    if (!seen(p, "JavaThread", "_thread_state")) p->l.jt_state = -1;
    if (old_code) p->l.cb_code_offset = p->l.cb_data_offset = -1;
    else p->l.cb_code_begin = p->l.cb_code_end = -1;
    p->l.ok = 1;
    js_vm = p->l;
    return 0;
}

int js_vmlayout_from(const js_vmlayout_entry *entries, int n, char *err, size_t errlen)
{
    parse p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < n; i++) consider(&p, entries[i].type, entries[i].field, entries[i].type_string, entries[i].value);
    return finish(&p, err, errlen);
}

/* Value of libjvm's uint64_t variable `name`, or -1 if absent. */
static int64_t sym_u64(void *jvm, const char *name)
{
    const uint64_t *p = dlsym(jvm, name);
    return p ? (int64_t)*p : -1;
}

int js_vmstructs_each(void (*fn)(void *ctx, const js_vmstruct *e), void *ctx)
{
    void *jvm = dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD);
    if (!jvm) return -1;
    char *const *table = dlsym(jvm, "gHotSpotVMStructs");
    int64_t tn = sym_u64(jvm, "gHotSpotVMStructEntryTypeNameOffset");
    int64_t fn_ = sym_u64(jvm, "gHotSpotVMStructEntryFieldNameOffset");
    int64_t ts = sym_u64(jvm, "gHotSpotVMStructEntryTypeStringOffset");
    int64_t st = sym_u64(jvm, "gHotSpotVMStructEntryIsStaticOffset");
    int64_t of = sym_u64(jvm, "gHotSpotVMStructEntryOffsetOffset");
    int64_t ad = sym_u64(jvm, "gHotSpotVMStructEntryAddressOffset");
    int64_t stride = sym_u64(jvm, "gHotSpotVMStructEntryArrayStride");
    int rc = -1;
    if (table && *table && tn >= 0 && fn_ >= 0 && ts >= 0 && st >= 0 && of >= 0 && ad >= 0 && stride > 0) {
        for (const char *e = *table;; e += stride) { /* {typeName, fieldName, typeString, isStatic, offset, address} */
            js_vmstruct v = {*(const char *const *)(e + tn), *(const char *const *)(e + fn_),
                             *(const char *const *)(e + ts), *(const int32_t *)(e + st), *(const uint64_t *)(e + of),
                             (uintptr_t) * (void *const *)(e + ad)};
            if (!v.type || !v.field) break;
            fn(ctx, &v);
        }
        rc = 0;
    }
    dlclose(jvm);
    return rc;
}

/* js_vmstructs_each's callback for js_vmlayout_init: the value of a field is its address if static, else offset. */
static void consider_struct(void *ctx, const js_vmstruct *e)
{
    consider(ctx, e->type, e->field, e->type_string, e->is_static ? (uint64_t)e->address : e->offset);
}

/* Walk gHotSpotVMTypes for the type sizes we need. */
static int read_types(void *jvm, parse *p)
{
    char *const *table = dlsym(jvm, "gHotSpotVMTypes");
    int64_t tn = sym_u64(jvm, "gHotSpotVMTypeEntryTypeNameOffset");
    int64_t sz = sym_u64(jvm, "gHotSpotVMTypeEntrySizeOffset");
    int64_t stride = sym_u64(jvm, "gHotSpotVMTypeEntryArrayStride");
    if (!table || !*table || tn < 0 || sz < 0 || stride <= 0) return -1;
    for (const char *e = *table;; e += stride) {
        const char *type = *(const char *const *)(e + tn);
        if (!type) break;
        consider(p, type, NULL, NULL, *(const uint64_t *)(e + sz));
    }
    return 0;
}

int js_vmlayout_init(char *err, size_t errlen)
{
    if (js_vm.ok) return 0;
    void *jvm = dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD);
    if (!jvm) {
        js_safe_fmt(err, errlen, "libjvm.so is not loaded (HotSpot is required)");
        return -1;
    }
    parse p;
    memset(&p, 0, sizeof p);
    int rc = js_vmstructs_each(consider_struct, &p) == 0 && read_types(jvm, &p) == 0 ? 0 : -1;
    dlclose(jvm);
    if (rc != 0) {
        js_safe_fmt(err, errlen, "libjvm.so publishes no gHotSpotVMStructs tables");
        return -1;
    }
    return finish(&p, err, errlen);
}

/* JavaThreadState (HotSpot's globalDefinitions.hpp, the same from JDK 8 to 25): a transition state is its state + 1. */
#define JS_THREAD_IN_VM 6
#define JS_THREAD_IN_JAVA 8

int js_vm_anchor_private(uintptr_t thread)
{
    if (!js_vm.ok || !thread || js_vm.jt_state < 0) return 0;
    int st = *(const volatile int *)(thread + (uintptr_t)js_vm.jt_state); /* the calling thread's own JavaThread */
    return st == JS_THREAD_IN_VM || st == JS_THREAD_IN_VM + 1 || st == JS_THREAD_IN_JAVA || st == JS_THREAD_IN_JAVA + 1;
}

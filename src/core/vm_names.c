/* vm_names.c - see vm_names.h and vm_names_int.h. */
#include "core/vm_names.h"

#include <stdlib.h>
#include <string.h>

#include "core/thread_names.h"
#include "sample/safe_read.h"
#include "sample/vmlayout.h"
#include "vm_names_int.h"

#define MAX_LIST 65536     /* JavaThreads read from HotSpot's list at most */
#define MAX_CHARS 256      /* bytes of a name's characters read at most */
#define CHECK_ROUNDS 5     /* refreshes that may try to confirm the reads before they are given up */
#define MAX_CANDIDATES 4096 /* cut names looked up per refresh at most */
#define MAX_JUDGED 64      /* threads JVMTI lists whose names check the reads, per round */

int js_vm_layout_complete(const js_vm_layout *l)
{
    return l->java_thread_list && l->list_length >= 0 && l->list_threads >= 0 && l->osthread >= 0 &&
           l->os_thread_id >= 0 && l->thread_obj >= 0 && l->handle_obj >= 0 && l->name_field >= 0 &&
           l->value_field >= 0 && l->coder_field >= 0 && l->byte_base >= 4 && l->oop_shift >= 0 && l->oop_shift < 32;
}

int js_vm_java_threads(const js_vm_layout *l, uintptr_t *out, size_t max)
{
    uintptr_t list = 0, threads = 0;
    uint32_t n = 0;
    if (js_safe_word(l->java_thread_list, &list) != 0 || !list ||
        js_safe_read(list + (uintptr_t)l->list_length, &n, sizeof n) != 0 ||
        js_safe_word(list + (uintptr_t)l->list_threads, &threads) != 0 || (n && !threads) || n > MAX_LIST)
        return -1;
    if (n > max) n = (uint32_t)max;
    if (n && js_safe_read(threads, out, sizeof *out * n) != 0) return -1;
    return (int)n;
}

int js_vm_thread_tid(const js_vm_layout *l, uintptr_t java_thread)
{
    uintptr_t os = 0;
    int32_t tid = -1;
    if (!java_thread || js_safe_word(java_thread + (uintptr_t)l->osthread, &os) != 0 || !os ||
        js_safe_read(os + (uintptr_t)l->os_thread_id, &tid, sizeof tid) != 0)
        return -1;
    return tid > 0 ? tid : -1;
}

/* The object a reference field at addr points to (decoding a compressed oop), or 0. */
static uintptr_t ref_at(const js_vm_layout *l, uintptr_t addr)
{
    if (l->narrow_oops) {
        uint32_t v = 0;
        if (js_safe_read(addr, &v, sizeof v) != 0 || !v) return 0;
        return l->oop_base + ((uintptr_t)v << l->oop_shift);
    }
    uintptr_t v = 0;
    return js_safe_word(addr, &v) == 0 ? v : 0;
}

/* The pointers from a JavaThread to its name's characters, read together so two reads can be compared. */
typedef struct {
    int tid;
    uintptr_t thread_oop, string, array;
} name_path;

/* Follow java_thread to its name's byte[]; 0 or -1. */
static int read_path(const js_vm_layout *l, uintptr_t java_thread, name_path *p)
{
    uintptr_t slot = 0;
    memset(p, 0, sizeof *p);
    p->tid = js_vm_thread_tid(l, java_thread);
    if (p->tid < 0 || js_safe_word(java_thread + (uintptr_t)l->thread_obj + (uintptr_t)l->handle_obj, &slot) != 0 ||
        !slot || js_safe_word(slot, &p->thread_oop) != 0 || !p->thread_oop)
        return -1;
    p->string = ref_at(l, p->thread_oop + (uintptr_t)l->name_field);
    p->array = p->string ? ref_at(l, p->string + (uintptr_t)l->value_field) : 0;
    return p->array ? 0 : -1;
}

int js_vm_thread_name(const js_vm_layout *l, uintptr_t java_thread, int tid, char *out, size_t len)
{
    name_path before, after;
    unsigned char chars[MAX_CHARS];
    int32_t n = -1;
    int8_t coder = -1;
    if (!len || read_path(l, java_thread, &before) != 0 || before.tid != tid ||
        js_safe_read(before.string + (uintptr_t)l->coder_field, &coder, sizeof coder) != 0 ||
        js_safe_read(before.array + (uintptr_t)l->byte_base - 4, &n, sizeof n) != 0 || n < 0)
        return -1;
    size_t take = (size_t)n < sizeof chars ? (size_t)n : sizeof chars;
    take &= coder == 1 ? ~(size_t)1 : ~(size_t)0;
    if (js_safe_read(before.array + (uintptr_t)l->byte_base, chars, take) != 0) return -1;
    /* A JavaThread that ended, a Thread object the collector moved, a renamed thread: some pointer differs. */
    if (read_path(l, java_thread, &after) != 0 || memcmp(&before, &after, sizeof before) != 0) return -1;
    return js_vm_string_utf8(coder, chars, take, out, len) < 0 ? -1 : 0;
}

/* Append code point c as UTF-8 at out[*at] if it fits before len-1; 0, or -1 (full). */
static int put_utf8(unsigned c, char *out, size_t len, size_t *at)
{
    unsigned char b[4];
    size_t k = 0;
    if (c < 0x80) {
        b[k++] = (unsigned char)c;
    } else if (c < 0x800) {
        b[k++] = (unsigned char)(0xC0 | c >> 6);
        b[k++] = (unsigned char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        b[k++] = (unsigned char)(0xE0 | c >> 12);
        b[k++] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        b[k++] = (unsigned char)(0x80 | (c & 0x3F));
    } else {
        b[k++] = (unsigned char)(0xF0 | c >> 18);
        b[k++] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
        b[k++] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        b[k++] = (unsigned char)(0x80 | (c & 0x3F));
    }
    if (*at + k > len - 1) return -1;
    memcpy(out + *at, b, k);
    *at += k;
    return 0;
}

int js_vm_string_utf8(int coder, const unsigned char *chars, size_t n, char *out, size_t len)
{
    if (!len || (coder != 0 && coder != 1) || (coder == 1 && n % 2)) return -1;
    size_t at = 0;
    for (size_t i = 0; i < n;) {
        unsigned c;
        if (coder == 0) {
            c = chars[i++];
        } else {
            c = (unsigned)chars[i] | (unsigned)chars[i + 1] << 8;
            i += 2;
            unsigned lo = i + 1 < n ? ((unsigned)chars[i] | (unsigned)chars[i + 1] << 8) : 0;
            if (c >= 0xD800 && c < 0xDC00 && lo >= 0xDC00 && lo < 0xE000) {
                c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
                i += 2;
            }
        }
        if (put_utf8(c, out, len, &at) != 0) break;
    }
    out[at] = 0;
    return (int)at;
}

int js_vm_name_extends(const char *comm, const char *name)
{
    return strlen(comm) == 15 && strncmp(comm, name, 15) == 0 && name[15] != 0;
}

/* ---------------------------------------------------------------- layout */

/* Process-wide like the JVM; filled and judged on the refreshing thread (java_names.c's lock held). */
static js_vm_layout L = {0, -1, -1, -1, -1, -1, -1, 0, 0, -1, -1, -1, -1, -1};
static int looked_up;
static int verdict; /* 0 not yet, 1 the reads reproduce JVMTI's names, -1 given up */
static int rounds;

/* Where CompressedOops keeps its base and shift (static fields), found with the layout. */
typedef struct {
    uintptr_t base_addr, shift_addr;
} oops_at;

/* js_vmstructs_each's callback: the fields HotSpot publishes in gHotSpotVMStructs (JDK 17 and 25 spell some
 * differently). */
static void layout_field(void *ctx, const js_vmstruct *e)
{
    oops_at *o = ctx;
    const char *type = e->type, *field = e->field;
    long long off = (long long)e->offset;
    if (!strcmp(type, "ThreadsSMRSupport") && !strcmp(field, "_java_thread_list")) L.java_thread_list = e->address;
    if (!strcmp(type, "ThreadsList") && !strcmp(field, "_length")) L.list_length = off;
    if (!strcmp(type, "ThreadsList") && !strcmp(field, "_threads")) L.list_threads = off;
    /* JavaThread's in JDK 17, its first base Thread's in JDK 25: the same offset in a JavaThread */
    if ((!strcmp(type, "JavaThread") || !strcmp(type, "Thread")) && !strcmp(field, "_osthread")) L.osthread = off;
    if (!strcmp(type, "OSThread") && !strcmp(field, "_thread_id")) L.os_thread_id = off;
    if (!strcmp(type, "JavaThread") && !strcmp(field, "_threadObj")) L.thread_obj = off;
    if (!strcmp(type, "OopHandle") && !strcmp(field, "_obj")) L.handle_obj = off;
    if (!strcmp(type, "CompressedOops") && (!strcmp(field, "_narrow_oop._base") || !strcmp(field, "_base")))
        o->base_addr = e->address;
    if (!strcmp(type, "CompressedOops") && (!strcmp(field, "_narrow_oop._shift") || !strcmp(field, "_shift")))
        o->shift_addr = e->address;
}

/* The layout from gHotSpotVMStructs, and the compressed oops' base and shift it leads to. */
static void vmstructs(void)
{
    oops_at o = {0, 0};
    if (js_vmstructs_each(layout_field, &o) != 0) return;
    uintptr_t base_addr = o.base_addr, shift_addr = o.shift_addr;
    int32_t shift = -1;
    if (L.narrow_oops && (!base_addr || !shift_addr || js_safe_word(base_addr, &L.oop_base) != 0 ||
                          js_safe_read(shift_addr, &shift, sizeof shift) != 0))
        shift = -1;
    L.oop_shift = L.narrow_oops ? shift : 0;
}

/* Clear a pending exception; 1 if there was one. */
static int cleared(JNIEnv *jni)
{
    if (!(*jni)->ExceptionCheck(jni)) return 0;
    (*jni)->ExceptionClear(jni);
    return 1;
}

/* A constant of Unsafe (static final int, or long as array base offsets are in JDK 25), or -1. */
static long long unsafe_int(JNIEnv *jni, jclass u, const char *name)
{
    jfieldID f = (*jni)->GetStaticFieldID(jni, u, name, "I");
    if (!cleared(jni) && f) {
        long long v = (*jni)->GetStaticIntField(jni, u, f);
        return cleared(jni) ? -1 : v;
    }
    f = (*jni)->GetStaticFieldID(jni, u, name, "J");
    if (cleared(jni) || !f) return -1;
    long long v = (*jni)->GetStaticLongField(jni, u, f);
    return cleared(jni) ? -1 : v;
}

/* The offset of field name in class cls by the JDK's Unsafe, or -1. */
static long long field_offset(JNIEnv *jni, jobject unsafe, jmethodID ofs, const char *cls, const char *name)
{
    jclass c = (*jni)->FindClass(jni, cls);
    if (cleared(jni) || !c) return -1;
    jstring s = (*jni)->NewStringUTF(jni, name);
    long long v = s && !cleared(jni) ? (long long)(*jni)->CallLongMethod(jni, unsafe, ofs, c, s) : -1;
    if (cleared(jni)) v = -1;
    if (s) (*jni)->DeleteLocalRef(jni, s);
    (*jni)->DeleteLocalRef(jni, c);
    return v;
}

/* Object field offsets and array layout from jdk.internal.misc.Unsafe (JNI does not apply module access). */
static void unsafe_layout(JNIEnv *jni)
{
    jclass u = (*jni)->FindClass(jni, "jdk/internal/misc/Unsafe");
    if (cleared(jni) || !u) return;
    jmethodID get = (*jni)->GetStaticMethodID(jni, u, "getUnsafe", "()Ljdk/internal/misc/Unsafe;");
    jmethodID ofs = get && !cleared(jni)
                        ? (*jni)->GetMethodID(jni, u, "objectFieldOffset", "(Ljava/lang/Class;Ljava/lang/String;)J")
                        : NULL;
    jobject unsafe = ofs && !cleared(jni) ? (*jni)->CallStaticObjectMethod(jni, u, get) : NULL;
    if (!cleared(jni) && unsafe) {
        L.name_field = field_offset(jni, unsafe, ofs, "java/lang/Thread", "name");
        L.value_field = field_offset(jni, unsafe, ofs, "java/lang/String", "value");
        L.coder_field = field_offset(jni, unsafe, ofs, "java/lang/String", "coder");
        L.byte_base = unsafe_int(jni, u, "ARRAY_BYTE_BASE_OFFSET");
        long long scale = unsafe_int(jni, u, "ARRAY_OBJECT_INDEX_SCALE");
        L.narrow_oops = scale == 4;
        if (scale != 4 && scale != 8) L.byte_base = -1;
    }
    cleared(jni);
    if (unsafe) (*jni)->DeleteLocalRef(jni, unsafe);
    (*jni)->DeleteLocalRef(jni, u);
}

/* Are the reads right on this JVM? Compare them with JVMTI's names of the threads it lists (ASCII names only:
 * JVMTI's modified UTF-8 and ours differ elsewhere). Decided once a round has matches and no mismatch. */
static void judge(const uintptr_t *tops, const char (*names)[JS_THREAD_NAME_MAX], size_t n)
{
    size_t same = 0, differ = 0;
    for (size_t i = 0; i < n && same + differ < MAX_JUDGED; i++) {
        int ascii = 1;
        for (const char *c = names[i]; *c; c++) ascii &= (unsigned char)*c < 0x80;
        int tid = ascii && tops[i] ? js_vm_thread_tid(&L, tops[i]) : -1;
        char got[JS_THREAD_NAME_MAX];
        if (tid < 0 || js_vm_thread_name(&L, tops[i], tid, got, sizeof got) != 0) continue;
        if (strcmp(got, names[i]) == 0) same++;
        else differ++;
    }
    if (same && !differ) verdict = 1;
    else if (++rounds >= CHECK_ROUNDS) verdict = -1;
}

static int by_tid(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

int js_vm_names_refresh(JNIEnv *jni, const uintptr_t *tops, const char (*names)[JS_THREAD_NAME_MAX], size_t n)
{
    if (!looked_up) {
        looked_up = 1;
        unsafe_layout(jni);
        vmstructs();
        if (!js_vm_layout_complete(&L)) verdict = -1;
    }
    if (verdict == 0) judge(tops, names, n);
    if (verdict != 1) return 0;
    int *tids = malloc(sizeof *tids * MAX_CANDIDATES);
    size_t nc = tids ? js_threads_cut_names(tids, MAX_CANDIDATES) : 0;
    int renamed = 0;
    uintptr_t *list = nc ? malloc(sizeof *list * MAX_LIST) : NULL;
    int nl = list ? js_vm_java_threads(&L, list, MAX_LIST) : -1;
    if (nc) qsort(tids, nc, sizeof *tids, by_tid);
    for (int i = 0; i < nl; i++) {
        int tid = js_vm_thread_tid(&L, list[i]);
        char name[JS_THREAD_NAME_MAX];
        if (tid > 0 && bsearch(&tid, tids, nc, sizeof *tids, by_tid) &&
            js_vm_thread_name(&L, list[i], tid, name, sizeof name) == 0)
            renamed += js_threads_adopt_vm(tid, name);
    }
    free(list);
    free(tids);
    return renamed;
}

/* test_walker.c - the recovering walker's parts on a fake VM built in memory: the layout parser, the code-cache
 * lookup, the x86-64 unwinder on synthetic stacks, the Method* -> jmethodID chain and the guarded read. Corrupted
 * blobs, frames and pointers into unmapped memory must end as counted failures, never as a crash (also under ASan). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sample/codecache.h"
#include "sample/safe_read.h"
#include "sample/unwind.h"
#include "sample/unwind_cfi.h"
#include "sample/vmlayout.h"
#include "sample/vmmethod.h"
#include "sample/walker.h"

#define UNUSED __attribute__((unused))
#define SEG_SHIFT 6
#define SEG (1u << SEG_SHIFT)
#define HEAP_BYTES (1u << 20)
#define NSEG (HEAP_BYTES >> SEG_SHIFT)

/* ---- the fake VM -------------------------------------------------------------------------------------------- */

/* VirtualSpace {low_boundary, high_boundary, low, high}; CodeHeap {memory, segmap, log2}; GrowableArray {len, max,
 * data}. The blob layouts follow JDK 25 (offsets from its tables) or JDK 17 (pointer code bounds). */
typedef struct { uintptr_t lb, hb, low, high; } vspace;
typedef struct { vspace memory, segmap; int log2; } fheap;
typedef struct { int len, max; fheap **data; } farray;

static uint8_t *heap_mem, *segmap;
static fheap heap;
static fheap *heap_list[1];
static farray heaps = {1, 1, heap_list};
static uintptr_t s_heaps, s_low, s_high; /* the CodeCache statics */
static const char names[] = "nmethod\0vtable chunks\0Interpreter\0RuntimeStub";
#define N_NMETHOD (names)
#define N_VTABLE (names + 8)
#define N_INTERP (names + 22)

enum { JDK17, JDK25 };
static int flavour;

/* Blob field offsets per flavour. */
#define B_NAME (flavour == JDK25 ? 8 : 96)
#define B_SIZE (flavour == JDK25 ? 24 : 12)
#define B_FCOMPLETE (flavour == JDK25 ? 54 : 20)
#define B_FSIZE (flavour == JDK25 ? 44 : 28)
#define B_METHOD (flavour == JDK25 ? 80 : 112)
#define B_VENTRY (flavour == JDK25 ? 154 : 224)
#define B_HEADER 256 /* code starts this far into a blob */

/* The layout entries of a flavour; drop names one entry to leave out (or NULL). */
static int layout(int f, const char *drop)
{
    flavour = f;
    js_vmlayout_entry e[] = {
        {"CodeCache", "_heaps", NULL, (uintptr_t)&s_heaps},
        {"CodeCache", "_low_bound", NULL, (uintptr_t)&s_low},
        {"CodeCache", "_high_bound", NULL, (uintptr_t)&s_high},
        {"GrowableArrayBase", "_len", "int", 0},
        {"GrowableArray<int>", "_data", "int*", 8},
        {"CodeHeap", "_memory", "VirtualSpace", 0},
        {"CodeHeap", "_segmap", "VirtualSpace", 32},
        {"CodeHeap", "_log2_segment_size", "int", 64},
        {"VirtualSpace", "_low", "char*", 16},
        {"VirtualSpace", "_high", "char*", 24},
        {"HeapBlock::Header", "_used", "bool", 4},
        {"HeapBlock", NULL, NULL, 8},
        {"CodeBlob", "_name", "const char*", (uint64_t)B_NAME},
        {"CodeBlob", "_size", "int", (uint64_t)B_SIZE},
        {"CodeBlob", "_frame_size", "int", (uint64_t)B_FSIZE},
        {"CodeBlob", "_frame_complete_offset", f == JDK25 ? "int16_t" : "int", (uint64_t)B_FCOMPLETE},
        {"CodeBlob", f == JDK25 ? "_code_offset" : "_code_begin", f == JDK25 ? "int" : "address", f == JDK25 ? 36 : 32},
        {"CodeBlob", f == JDK25 ? "_data_offset" : "_code_end", f == JDK25 ? "int" : "address", f == JDK25 ? 40 : 40},
        {f == JDK25 ? "nmethod" : "CompiledMethod", "_method", "Method*", (uint64_t)B_METHOD},
        {"nmethod", f == JDK25 ? "_verified_entry_offset" : "_verified_entry_point", NULL, (uint64_t)B_VENTRY},
        {"Method", "_constMethod", NULL, 8},
        {"ConstMethod", "_constants", NULL, 8},
        {"ConstMethod", "_method_idnum", "u2", 40},
        {"ConstantPool", "_pool_holder", NULL, 24},
        {"InstanceKlass", "_methods_jmethod_ids", NULL, 336},
        {"JavaThread", "_stack_base", NULL, 1048},
        {"JavaThread", "_stack_size", NULL, 1056},
        {"JavaThread", "_anchor", NULL, 1152},
        {"JavaFrameAnchor", "_last_Java_sp", NULL, 0},
        {"JavaFrameAnchor", "_last_Java_pc", "address", 16},
        {"JavaFrameAnchor", "_last_Java_fp", "intptr_t*", 8},
        {"JavaThread", "_thread_state", "JavaThreadState", 1200},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof e / sizeof e[0]; i++)
        if (!drop || !e[i].field || strcmp(e[i].field, drop) != 0) e[n++] = e[i];
    char err[256];
    return js_vmlayout_from(e, n, err, sizeof err);
}

/* A fresh heap: every segment unused. */
static int setup(void **state UNUSED)
{
    heap_mem = mmap(NULL, HEAP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    segmap = mmap(NULL, NSEG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(heap_mem != MAP_FAILED && segmap != MAP_FAILED);
    memset(segmap, 0xFF, NSEG);
    heap.memory.low = (uintptr_t)heap_mem;
    heap.memory.high = (uintptr_t)heap_mem + HEAP_BYTES;
    heap.segmap.low = (uintptr_t)segmap;
    heap.segmap.high = (uintptr_t)segmap + NSEG;
    heap.log2 = SEG_SHIFT;
    heap_list[0] = &heap;
    s_heaps = (uintptr_t)&heaps;
    s_low = heap.memory.low;
    s_high = heap.memory.high;
    js_codecache_set_names_range((uintptr_t)names, (uintptr_t)names + sizeof names + 64);
    assert_int_equal(layout(JDK25, NULL), 0);
    return 0;
}

static int teardown(void **state UNUSED)
{
    munmap(heap_mem, HEAP_BYTES);
    munmap(segmap, NSEG);
    return 0;
}

static void put32(uintptr_t a, int32_t v) { memcpy((void *)a, &v, 4); }
static void put16(uintptr_t a, int16_t v) { memcpy((void *)a, &v, 2); }
static void putw(uintptr_t a, uintptr_t v) { memcpy((void *)a, &v, sizeof v); }

/* A live blob of nseg segments at segment first: header, segment map (0, then steps back of at most 0xFE), fields.
 * Returns the blob; its code starts at blob + B_HEADER and runs to the end of the block. */
static uintptr_t place(unsigned first, unsigned nseg, const char *name, int frame_size, int frame_complete,
                       uintptr_t method)
{
    uintptr_t block = (uintptr_t)heap_mem + ((uintptr_t)first << SEG_SHIFT);
    put32(block, (int32_t)nseg);
    ((uint8_t *)block)[4] = 1; /* _used */
    for (unsigned i = 0; i < nseg; i++) segmap[first + i] = (uint8_t)(i % 0xFF == 0 ? (i ? 0xFE : 0) : i % 0xFF);
    for (unsigned i = 1; i < nseg; i++) segmap[first + i] = (uint8_t)(i < 0xFF ? i : 0xFE);
    uintptr_t b = block + 8, size = ((uintptr_t)nseg << SEG_SHIFT) - 8;
    putw(b + B_NAME, (uintptr_t)name);
    put32(b + B_SIZE, (int32_t)size);
    put32(b + B_FSIZE, frame_size);
    if (flavour == JDK25) {
        put16(b + B_FCOMPLETE, (int16_t)frame_complete);
        put32(b + 36, B_HEADER);
        put32(b + 40, (int32_t)size);
    } else {
        put32(b + B_FCOMPLETE, frame_complete);
        putw(b + 32, b + B_HEADER);
        putw(b + 40, b + size);
    }
    putw(b + B_METHOD, method);
    return b;
}

/* Set the verified entry (offset from code begin) of an nmethod blob. */
static void set_entry(uintptr_t b, unsigned off)
{
    if (flavour == JDK25) put16(b + B_VENTRY, (int16_t)off);
    else putw(b + B_VENTRY, b + B_HEADER + off);
}

/* A page that is mapped then unmapped: reading it faults. */
static uintptr_t unmapped(void)
{
    void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    munmap(p, 4096);
    return (uintptr_t)p;
}

/* ---- layout ------------------------------------------------------------------------------------------------- */

static void test_layout(void **state UNUSED)
{
    assert_int_equal(layout(JDK17, NULL), 0);
    assert_int_equal(js_vm.cb_code_offset, -1);
    assert_int_equal(js_vm.cb_frame_complete_bytes, 4);
    assert_int_equal(layout(JDK25, NULL), 0);
    assert_int_equal(js_vm.cb_code_begin, -1);
    assert_int_equal(js_vm.cb_frame_complete_bytes, 2);
    const char *required[] = {"_heaps", "_segmap", "_used", "_frame_size", "_method_idnum", "_stack_base", "_anchor"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        js_vm.ok = 0;
        assert_int_equal(layout(JDK25, required[i]), -1);
        assert_int_equal(js_vm.ok, 0);
    }
    js_vmlayout_entry only[] = {{"CodeBlob", "_name", NULL, 8}};
    char err[256];
    assert_int_equal(js_vmlayout_from(only, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "missing"));
    assert_int_equal(layout(JDK25, "_code_offset"), -1); /* no code bounds at all */
    assert_int_equal(layout(JDK25, "_method"), -1);
    assert_int_equal(layout(JDK25, "_last_Java_pc"), 0); /* optional: without it no anchor is completed */
    assert_int_equal(js_vm.anchor_pc, -1);
    assert_int_equal(layout(JDK25, "_last_Java_fp"), 0);
    assert_int_equal(js_vm.anchor_fp, -1);
    assert_int_equal(layout(JDK25, NULL), 0);
    assert_int_equal(js_vm.anchor_pc, 16);
    assert_int_equal(js_vm.anchor_fp, 8);
}

/* ---- code cache --------------------------------------------------------------------------------------------- */

static void test_find(void **state UNUSED)
{
    for (int f = JDK17; f <= JDK25; f++) {
        assert_int_equal(layout(f, NULL), 0);
        memset(segmap, 0xFF, NSEG);
        uintptr_t nm = place(10, 8, N_NMETHOD, 6, 20, 0x1234000);
        uintptr_t vt = place(40, 8, N_VTABLE, 0, -1, 0);
        uintptr_t big = place(100, 1000, N_INTERP, 0, -1, 0); /* several hops back */
        js_blob b;
        assert_int_equal(js_codecache_find(nm + B_HEADER + 5, &b), JS_CC_FOUND);
        assert_int_equal(b.kind, JS_BLOB_NMETHOD);
        assert_int_equal(b.start, nm);
        assert_int_equal(b.code_begin, nm + B_HEADER);
        assert_int_equal(b.method, 0x1234000);
        assert_int_equal(b.frame_size, 6);
        assert_int_equal(b.frame_complete, 20);
        assert_int_equal(js_codecache_find(vt + B_HEADER + 4, &b), JS_CC_FOUND);
        assert_int_equal(b.kind, JS_BLOB_STUB);
        assert_string_equal(b.name, "vtable chunks");
        assert_int_equal(js_codecache_find(big + 900 * SEG, &b), JS_CC_FOUND);
        assert_int_equal(b.kind, JS_BLOB_INTERPRETER);
        assert_int_equal(b.start, big);
        assert_int_equal(js_codecache_find((uintptr_t)heap_mem + 30 * SEG, &b), JS_CC_OUTSIDE); /* unused segment */
        assert_int_equal(js_codecache_find((uintptr_t)&b, &b), JS_CC_OUTSIDE);                 /* not code at all */
        ((uint8_t *)vt - 8)[4] = 0;                                                           /* a freed block */
        assert_int_equal(js_codecache_find(vt + B_HEADER + 4, &b), JS_CC_OUTSIDE);
    }
}

static void test_find_corrupt(void **state UNUSED)
{
    js_blob b;
    uintptr_t nm = place(10, 8, N_NMETHOD, 6, 20, 0);
    put32(nm + B_SIZE, -5);
    assert_int_equal(js_codecache_find(nm + B_HEADER, &b), JS_CC_BAD);
    put32(nm + B_SIZE, 1 << 30); /* past the heap */
    assert_int_equal(js_codecache_find(nm + B_HEADER, &b), JS_CC_BAD);
    put32(nm + B_SIZE, 8 * SEG - 8);
    put32(nm + 36, 100000); /* code begins past the blob */
    assert_int_equal(js_codecache_find(nm + B_HEADER, &b), JS_CC_BAD);
    put32(nm + 36, B_HEADER);
    putw(nm + B_NAME, unmapped()); /* a name that cannot be read is not read: a stub */
    assert_int_equal(js_codecache_find(nm + B_HEADER, &b), JS_CC_FOUND);
    assert_int_equal(b.kind, JS_BLOB_STUB);
    assert_null(b.name);
    memset(segmap + 200, 0x05, 10); /* steps that run past the map's start or loop */
    segmap[200] = 0xFE;
    assert_int_equal(js_codecache_find((uintptr_t)heap_mem + 200 * SEG, &b), JS_CC_OUTSIDE);
    segmap[2] = 3; /* points before index 0 */
    assert_int_equal(js_codecache_find((uintptr_t)heap_mem + 2 * SEG, &b), JS_CC_OUTSIDE);
    heap.log2 = 40; /* a nonsense shift */
    assert_int_equal(js_codecache_find(nm + B_HEADER, &b), JS_CC_OUTSIDE);
    heap.log2 = SEG_SHIFT;
    heaps.len = 1000; /* a nonsense heap count */
    assert_int_equal(js_codecache_find(nm + B_HEADER, &b), JS_CC_BAD);
    heaps.len = 1;
}

/* ---- unwinder ----------------------------------------------------------------------------------------------- */

static uintptr_t stack[64];
static js_safe_range st;
static uintptr_t caller_pc; /* a return address in the code cache */

static int nm_frame_words = 8; /* the frame size nmethod_with gives its nmethod */

/* An nmethod whose code is `code` (len bytes from its verified entry at offset ve), frame complete at fc. */
static js_blob nmethod_with(const uint8_t *code, size_t len, unsigned ve, int fc)
{
    memset(segmap, 0xFF, NSEG);
    uintptr_t b = place(10, 16, N_NMETHOD, nm_frame_words, fc, 0);
    set_entry(b, ve);
    memset((void *)(b + B_HEADER), 0x90, ve);
    memcpy((void *)(b + B_HEADER + ve), code, len);
    uintptr_t callee = place(50, 4, N_NMETHOD, 4, 8, 0); /* the caller's code */
    caller_pc = callee + B_HEADER + 30;
    js_blob out;
    assert_int_equal(js_codecache_find(b + B_HEADER, &out), JS_CC_FOUND);
    st.lo = (uintptr_t)&stack[0];
    st.hi = (uintptr_t)&stack[64];
    memset(stack, 0, sizeof stack);
    return out;
}

static uintptr_t ventry(const js_blob *b, unsigned ve) { return b->code_begin + ve; }

/* Runs js_unwind_top at code offset off (from the verified entry) with sp = &stack[0] and fp = 0x777. */
static int step(const js_blob *b, unsigned ve, unsigned off, js_regs *r)
{
    r->pc = ventry(b, ve) + off;
    r->sp = (uintptr_t)&stack[0];
    r->fp = 0x777;
    return js_unwind_top(b, ventry(b, ve), &st, r);
}

static void test_prologue(void **state UNUSED)
{
    /* bang; push rbp; sub rsp, 0x30; then the body */
    static const uint8_t code[] = {0x89, 0x84, 0x24, 0x00, 0xc0, 0xfe, 0xff, 0x55, 0x48, 0x83, 0xec, 0x30, 0x90};
    js_blob b = nmethod_with(code, sizeof code, 16, 13 + 16); /* complete one byte after the sub */
    js_regs r;
    stack[0] = caller_pc; /* nothing pushed yet */
    assert_int_equal(step(&b, 16, 0, &r), JS_UW_PROLOGUE);
    assert_int_equal(r.pc, caller_pc);
    assert_int_equal(r.sp, (uintptr_t)&stack[1]);
    assert_int_equal(r.fp, 0x777);
    assert_int_equal(step(&b, 16, 7, &r), JS_UW_PROLOGUE); /* at push rbp */
    assert_int_equal(r.sp, (uintptr_t)&stack[1]);
    stack[0] = 0x4444, stack[1] = caller_pc; /* after push rbp: saved rbp, return */
    assert_int_equal(step(&b, 16, 8, &r), JS_UW_PROLOGUE);
    assert_int_equal(r.pc, caller_pc);
    assert_int_equal(r.sp, (uintptr_t)&stack[2]);
    assert_int_equal(r.fp, 0x4444);
    memset(stack, 0, sizeof stack); /* after sub rsp, 0x30: 6 words, saved rbp, return */
    stack[6] = 0x5555, stack[7] = caller_pc;
    assert_int_equal(step(&b, 16, 12, &r), JS_UW_PROLOGUE);
    assert_int_equal(r.sp, (uintptr_t)&stack[8]);
    assert_int_equal(r.fp, 0x5555);
    stack[0] = caller_pc; /* before the verified entry: the inline-cache check, nothing pushed */
    r.pc = b.code_begin + 3, r.sp = (uintptr_t)&stack[0], r.fp = 0x777;
    assert_int_equal(js_unwind_top(&b, ventry(&b, 16), &st, &r), JS_UW_PROLOGUE);
    assert_int_equal(r.pc, caller_pc);
    assert_int_equal(step(&b, 16, 3, &r), JS_UW_UNKNOWN_CODE); /* inside the bang instruction */
}

static void test_prologue_variants(void **state UNUSED)
{
    static const uint8_t wide[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x81, 0xec, 0x00, 0x01, 0x00, 0x00, 0x90};
    js_blob b = nmethod_with(wide, sizeof wide, 0, 12);
    js_regs r;
    stack[32] = 0x6666, stack[33] = caller_pc; /* 8 + 256 bytes below the return */
    assert_int_equal(step(&b, 0, 11, &r), JS_UW_PROLOGUE);
    assert_int_equal(r.sp, (uintptr_t)&stack[34]);
    assert_int_equal(r.fp, 0x6666);
    static const uint8_t huge[] = {0x55, 0x48, 0x81, 0xec, 0x00, 0x00, 0x00, 0x7f, 0x90};
    b = nmethod_with(huge, sizeof huge, 0, 9);
    assert_int_equal(step(&b, 0, 8, &r), JS_UW_UNKNOWN_CODE);
    static const uint8_t odd[] = {0x55, 0x31, 0xc0, 0x48, 0x83, 0xec, 0x10}; /* xor eax, eax: not a prologue's */
    b = nmethod_with(odd, sizeof odd, 0, 8);
    assert_int_equal(step(&b, 0, 7, &r), JS_UW_UNKNOWN_CODE);
    b = nmethod_with(odd, sizeof odd, 0, 7);
    set_entry(b.start, 4000); /* the verified entry outside the code */
    assert_int_equal(js_unwind_top(&b, b.code_begin + 4000, &st, &(js_regs){b.code_begin, (uintptr_t)stack, 0}),
                     JS_UW_BAD_ENTRY);
}

/* A native wrapper's prologue with `enter`'s other encoding of mov rbp, rsp (48 8b ec); a method handle intrinsic
 * (invokeBasic, linkTo*: a native nmethod of no frame that jumps to its target) left by the return address on top,
 * but only where a call from Java code ends there. */
static void test_wrapper_and_frameless(void **state UNUSED)
{
    static const uint8_t wrapper[] = {0x89, 0x84, 0x24, 0x00, 0xc0, 0xfe, 0xff, 0x55, 0x48, 0x8b,
                                      0xec, 0x48, 0x83, 0xec, 0x40, 0x90, 0x41, 0x81, 0x7f, 0x20};
    js_blob b = nmethod_with(wrapper, sizeof wrapper, 16, 16 + 20);
    js_regs r;
    stack[8] = 0x5151, stack[9] = caller_pc; /* sub rsp, 0x40: 8 words, then the saved rbp and the return */
    assert_int_equal(step(&b, 16, 15, &r), JS_UW_PROLOGUE);
    assert_int_equal(r.pc, caller_pc);
    assert_int_equal(r.fp, 0x5151);
    assert_int_equal(r.sp, (uintptr_t)&stack[10]);

    static const uint8_t mh[] = {0x8b, 0x5e, 0x14, 0x48, 0xc1, 0xe3, 0x03, 0x48, 0x8b, 0x5b,
                                 0x10, 0x48, 0x85, 0xdb, 0xff, 0x63, 0x40};
    nm_frame_words = 0;
    b = nmethod_with(mh, sizeof mh, 0, 17);
    nm_frame_words = 8;
    place(50, 16, N_NMETHOD, 4, 8, 0); /* the caller's code, long enough to hold its return address */
    uint8_t *site = (uint8_t *)caller_pc;
    memset(site - 16, 0x90, 16);
    site[-2] = 0xff, site[-1] = 0xd3; /* call rbx ends at the return address */
    stack[0] = caller_pc;
    assert_int_equal(step(&b, 0, 11, &r), JS_UW_PROLOGUE);
    assert_int_equal(r.pc, caller_pc);
    assert_int_equal(r.sp, (uintptr_t)&stack[1]);
    assert_int_equal(r.fp, 0x777);
    site[-2] = 0x90, site[-1] = 0x90; /* no call there: a guess not taken */
    assert_int_equal(step(&b, 0, 11, &r), JS_UW_UNKNOWN_CODE);
    b = nmethod_with(mh, sizeof mh, 0, 17); /* with a frame of its own the guess is not taken either */
    place(50, 16, N_NMETHOD, 4, 8, 0);
    site[-2] = 0xff, site[-1] = 0xd3;
    assert_int_equal(step(&b, 0, 11, &r), JS_UW_UNKNOWN_CODE);
}

static void test_epilogue(void **state UNUSED)
{
    /* add rsp, 0x30; pop rbp; cmp rsp, [r15+0x20]; ja slow; ret */
    static const uint8_t code[] = {0x90, 0x90, 0x48, 0x83, 0xc4, 0x30, 0x5d, 0x49, 0x3b, 0x67, 0x20,
                                   0x0f, 0x87, 0x00, 0x00, 0x00, 0x00, 0xc3};
    js_blob b = nmethod_with(code, sizeof code, 0, 0);
    js_regs r;
    stack[6] = 0x5555, stack[7] = caller_pc;
    assert_int_equal(step(&b, 0, 2, &r), JS_UW_EPILOGUE); /* at add rsp */
    assert_int_equal(r.pc, caller_pc);
    assert_int_equal(r.sp, (uintptr_t)&stack[8]);
    assert_int_equal(r.fp, 0x5555);
    stack[0] = 0x4444, stack[1] = caller_pc;
    assert_int_equal(step(&b, 0, 6, &r), JS_UW_EPILOGUE); /* at pop rbp */
    assert_int_equal(r.sp, (uintptr_t)&stack[2]);
    assert_int_equal(r.fp, 0x4444);
    stack[0] = caller_pc;
    for (unsigned off = 7; off <= 17; off += (off == 7 ? 4 : off == 11 ? 6 : 1)) { /* at the poll, the ja, the ret */
        assert_int_equal(step(&b, 0, off, &r), JS_UW_EPILOGUE);
        assert_int_equal(r.sp, (uintptr_t)&stack[1]);
        assert_int_equal(r.fp, 0x777);
    }
    /* In the body (a nop, not an epilogue): the frame's fixed size (8 words) gives the return address. */
    memset(stack, 0, sizeof stack);
    stack[6] = 0x5555, stack[7] = caller_pc;
    assert_int_equal(step(&b, 0, 0, &r), JS_UW_BODY);
    assert_int_equal(r.sp, (uintptr_t)&stack[8]);
    assert_int_equal(r.fp, 0x5555);
    stack[7] = 0x1000; /* ... which must be code */
    assert_int_equal(step(&b, 0, 0, &r), JS_UW_BAD_STACK);
}

static void test_unwind_failures(void **state UNUSED)
{
    static const uint8_t code[] = {0x55, 0x48, 0x83, 0xec, 0x30, 0xc3};
    js_blob b = nmethod_with(code, sizeof code, 0, 5);
    js_regs r;
    stack[0] = 0x1000; /* a return address outside the code cache */
    assert_int_equal(step(&b, 0, 0, &r), JS_UW_BAD_STACK);
    st.hi = (uintptr_t)&stack[4]; /* the return slot (stack[7]) outside the live stack */
    stack[7] = caller_pc;
    assert_int_equal(step(&b, 0, 5, &r), JS_UW_BAD_STACK);
    st.hi = (uintptr_t)&stack[64];
    js_blob interp = b;
    interp.kind = JS_BLOB_INTERPRETER;
    assert_int_equal(js_unwind_top(&interp, 0, &st, &r), JS_UW_INTERPRETER);
    js_blob stub = b; /* a stub without a frame pops its return address */
    stub.kind = JS_BLOB_STUB;
    stub.frame_size = 0;
    stack[0] = caller_pc;
    r.pc = b.code_begin, r.sp = (uintptr_t)&stack[0], r.fp = 0x777;
    assert_int_equal(js_unwind_top(&stub, 0, &st, &r), JS_UW_STUB);
    assert_int_equal(r.sp, (uintptr_t)&stack[1]);
    stack[0] = 0x9999, stack[1] = caller_pc; /* a stub that pushed rbp and set rbp = rsp */
    r.pc = b.code_begin, r.sp = (uintptr_t)&stack[0], r.fp = (uintptr_t)&stack[0];
    assert_int_equal(js_unwind_top(&stub, 0, &st, &r), JS_UW_STUB);
    assert_int_equal(r.pc, caller_pc);
    assert_int_equal(r.sp, (uintptr_t)&stack[2]);
    assert_int_equal(r.fp, 0x9999);
    r.pc = b.code_begin, r.sp = (uintptr_t)&stack[0], r.fp = (uintptr_t)&stack[0] - 8; /* rbp below sp: not a frame */
    assert_int_equal(js_unwind_top(&stub, 0, &st, &r), JS_UW_BAD_STACK);
}

static void test_native(void **state UNUSED)
{
    js_blob b = nmethod_with((const uint8_t[]){0x90}, 1, 0, 0);
    (void)b;
    js_regs r = {0x1000, (uintptr_t)&stack[0], (uintptr_t)&stack[4]};
    stack[4] = (uintptr_t)&stack[8], stack[5] = 0x2000;        /* a VM frame called by a VM frame */
    stack[8] = 0x8888, stack[9] = caller_pc;                   /* ... called from compiled code */
    assert_int_equal(js_unwind_native(&st, &r), JS_UW_NATIVE);
    assert_int_equal(r.pc, caller_pc);
    assert_int_equal(r.sp, (uintptr_t)&stack[10]);
    assert_int_equal(r.fp, 0x8888);
    memset(stack, 0, sizeof stack); /* a chain going down the stack ends; [sp] is not code either */
    r = (js_regs){0x1000, (uintptr_t)&stack[2], (uintptr_t)&stack[6]};
    stack[6] = (uintptr_t)&stack[3];
    assert_int_equal(js_unwind_native(&st, &r), JS_UW_BAD_STACK);
    r = (js_regs){0x1000, (uintptr_t)&stack[2], unmapped()}; /* fp into unmapped memory: never read */
    stack[2] = caller_pc;
    assert_int_equal(js_unwind_native(&st, &r), JS_UW_NATIVE);
    assert_int_equal(r.sp, (uintptr_t)&stack[3]);
}

/* The caller's code: bytes at the start of the blob at segment 50 (kind by name); the return address after them. */
static uintptr_t caller_code(const char *name, const uint8_t *code, size_t n)
{
    uintptr_t c = place(50, 16, name, 4, 8, 0);
    memset((void *)(c + B_HEADER), 0x90, 64);
    memcpy((void *)(c + B_HEADER), code, n);
    return c + B_HEADER + n;
}

/* Runs js_unwind_top in the body of an nmethod (a nop at 0: not an epilogue) of 8 words, sp = &stack[0]. */
static int body_step(const js_blob *b, js_regs *r)
{
    r->pc = b->code_begin;
    r->sp = (uintptr_t)&stack[0];
    r->fp = 0x777;
    return js_unwind_top(b, b->code_begin, &st, r);
}

/* Words an inline intrinsic pushed under a compiled frame: the frame's sp is found by its return slot, which must
 * hold a return address right after a call (or an interpreter return entry); [sp] as a saved sp wins. */
static void test_pushed_words(void **state UNUSED)
{
    js_blob b = nmethod_with((const uint8_t[]){0x90}, 1, 0, 0);
    js_regs r;
    uint8_t call[5] = {0xe8}; /* call rel32 to the nmethod's code */
    uintptr_t ret = caller_code(N_NMETHOD, call, 5), target = b.code_begin;
    int32_t rel = (int32_t)(target - ret);
    memcpy((void *)(ret - 4), &rel, 4);
    stack[0] = 0x28, stack[8] = ret; /* one word pushed (a length): the return slot is stack[1 + 7] */
    assert_int_equal(body_step(&b, &r), JS_UW_SHIFTED);
    assert_int_equal(r.sp, (uintptr_t)&stack[1]);
    assert_int_equal(r.pc, b.code_begin);
    assert_int_equal(js_unwind_frame(&b, &st, &r), JS_UW_BODY); /* then its fixed frame, as the walker does */
    assert_int_equal(r.pc, ret);
    assert_int_equal(r.sp, (uintptr_t)&stack[9]);
    memset(stack, 0, sizeof stack); /* two readings: the smallest k, unless [sp] saved the frame's sp */
    stack[9] = ret, stack[11] = ret;
    assert_int_equal(body_step(&b, &r), JS_UW_SHIFTED);
    assert_int_equal(r.sp, (uintptr_t)&stack[2]);
    stack[0] = (uintptr_t)&stack[4];
    assert_int_equal(body_step(&b, &r), JS_UW_SHIFTED);
    assert_int_equal(r.sp, (uintptr_t)&stack[4]);
    stack[0] = (uintptr_t)&stack[3]; /* a saved sp whose return slot is not one: not taken */
    assert_int_equal(body_step(&b, &r), JS_UW_SHIFTED);
    assert_int_equal(r.sp, (uintptr_t)&stack[2]);
    memset(stack, 0, sizeof stack); /* a return slot beyond eight pushed words is not looked for */
    stack[16] = ret;
    assert_int_equal(body_step(&b, &r), JS_UW_BAD_STACK);
    st.hi = (uintptr_t)&stack[8]; /* nor outside the live stack */
    stack[8] = ret;
    assert_int_equal(body_step(&b, &r), JS_UW_BAD_STACK);
    st.hi = (uintptr_t)&stack[64];
    assert_int_equal(body_step(&b, &r), JS_UW_SHIFTED);
    rel = 0x7fff0000; /* a call out of the code cache: a leaf call, not a compiled caller */
    memcpy((void *)(ret - 4), &rel, 4);
    assert_int_equal(body_step(&b, &r), JS_UW_BAD_STACK);
    memset((void *)(ret - 5), 0x90, 5); /* no call before it */
    assert_int_equal(body_step(&b, &r), JS_UW_BAD_STACK);
}

/* The call shapes a compiled caller's return address may follow, and the interpreter's return entries. */
static void test_return_shapes(void **state UNUSED)
{
    js_blob b = nmethod_with((const uint8_t[]){0x90}, 1, 0, 0);
    js_regs r;
    uintptr_t in_cc = b.code_begin, out = 0x10000;
    uint8_t far[13] = {0x49, 0xba, 0, 0, 0, 0, 0, 0, 0, 0, 0x41, 0xff, 0xd2}; /* movabs r10, imm64; call r10 */
    memcpy(far + 2, &in_cc, 8);
    stack[8] = caller_code(N_NMETHOD, far, sizeof far);
    assert_int_equal(body_step(&b, &r), JS_UW_SHIFTED);
    memcpy(far + 2, &out, 8);
    stack[8] = caller_code(N_NMETHOD, far, sizeof far);
    assert_int_equal(body_step(&b, &r), JS_UW_BAD_STACK);
    stack[8] = caller_code(N_NMETHOD, (const uint8_t[]){0x41, 0xff, 0xd3}, 3); /* call r11 */
    assert_int_equal(body_step(&b, &r), JS_UW_SHIFTED);
    stack[8] = caller_code(N_NMETHOD, (const uint8_t[]){0xff, 0xd6}, 2); /* call rsi (the call stub's) */
    assert_int_equal(body_step(&b, &r), JS_UW_SHIFTED);
    static const uint8_t jdk17[] = {0x48, 0x8b, 0x65, 0xf0, 0x48, 0xc7, 0x45, 0xf0, 0, 0, 0, 0};
    static const uint8_t jdk25[] = {0x48, 0x8b, 0x4d, 0xf0, 0x48, 0x8d, 0x64, 0xcd, 0x00, 0x48, 0xc7, 0x45, 0xf0};
    uintptr_t entry = caller_code(N_INTERP, (const uint8_t[]){0x41, 0xff, 0x24, 0xda}, 4); /* a dispatch jump */
    memcpy((void *)entry, jdk17, sizeof jdk17);
    stack[8] = entry;
    assert_int_equal(body_step(&b, &r), JS_UW_SHIFTED);
    memcpy((void *)entry, jdk25, sizeof jdk25);
    assert_int_equal(body_step(&b, &r), JS_UW_SHIFTED);
    ((uint8_t *)entry)[2] = 0x45; /* any other interpreter code is not a return entry */
    assert_int_equal(body_step(&b, &r), JS_UW_BAD_STACK);
}

/* A frameless stub of the given code, entered by a call from compiled code (returned in *ret); the stack holds a
 * saved rbp (0x4444) under that return address, as after the stub's push rbp. */
static js_blob entered_stub(const uint8_t *code, size_t len, uintptr_t *ret)
{
    js_blob b = nmethod_with(code, len, 0, 0);
    b.kind = JS_BLOB_STUB, b.frame_size = 0, b.frame_complete = -1;
    uint8_t call[5] = {0xe8};
    *ret = caller_code(N_NMETHOD, call, 5);
    int32_t rel = (int32_t)(b.code_begin - *ret);
    memcpy((void *)(*ret - 4), &rel, 4);
    stack[0] = 0x4444, stack[1] = *ret;
    return b;
}

/* Unwind from pc in stub b with sp at stack[0]: the result, and on success the caller's registers checked. */
static int step_out_of_stub(const js_blob *b, uintptr_t pc, uintptr_t ret)
{
    js_regs r = {pc, (uintptr_t)&stack[0], 0x777};
    int how = js_unwind_top(b, 0, &st, &r);
    if (how > 0) {
        assert_int_equal(r.pc, ret);
        assert_int_equal(r.sp, (uintptr_t)&stack[2]);
        assert_int_equal(r.fp, 0x4444);
    }
    return how;
}

/* A stub entered by a call whose first instruction `push rbp` has run: the return address is above the saved rbp,
 * taken only when the call went to that push. */
static void test_stub_after_push(void **state UNUSED)
{
    uintptr_t ret;
    js_blob b = entered_stub((const uint8_t[]){0x55, 0x48, 0x8b, 0xec}, 4, &ret);
    assert_int_equal(step_out_of_stub(&b, b.code_begin + 1, ret), JS_UW_STUB);
    int32_t rel = (int32_t)(b.code_begin - ret) + 1; /* the call went elsewhere: not this shape (and [sp], the saved
                                                         rbp, is no return address) */
    memcpy((void *)(ret - 4), &rel, 4);
    assert_int_equal(step_out_of_stub(&b, b.code_begin + 1, ret), JS_UW_BAD_STACK);
}

/* The same with register moves before the push (JDK 25's fill stub: mov r11, rdx; push rbp; mov rbp, rsp): taken
 * when the call went to the first move; not when a move before the push touches rsp (this is not a frame). */
static void test_stub_moves_then_push(void **state UNUSED)
{
    static const uint8_t fill[] = {0x4c, 0x8b, 0xda, 0x55, 0x48, 0x8b, 0xec};
    uintptr_t ret;
    js_blob b = entered_stub(fill, sizeof fill, &ret);
    assert_int_equal(step_out_of_stub(&b, b.code_begin + 4, ret), JS_UW_STUB);
    ((uint8_t *)b.code_begin)[2] = 0xdc; /* mov r11, rsp: the move reads rsp */
    assert_int_equal(step_out_of_stub(&b, b.code_begin + 4, ret), JS_UW_BAD_STACK);
    ((uint8_t *)b.code_begin)[2] = 0xda;
    ((uint8_t *)b.code_begin)[1] = 0x03; /* add r11, rdx: not a move */
    assert_int_equal(step_out_of_stub(&b, b.code_begin + 4, ret), JS_UW_BAD_STACK);
}

/* VM code called from compiled code, stepped out of by its call-frame information: a function before its frame
 * pointer is set (rbp holds a compiled method's value), as os::javaTimeNanos after its push rbp. */
__asm__(".text\n.globl wk_leaf\n.type wk_leaf,@function\nwk_leaf:\n.cfi_startproc\n"
        "push %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset %rbp,-16\nmov $1,%edi\n"
        "mov %rsp,%rbp\n.cfi_def_cfa_register %rbp\nleave\n.cfi_def_cfa %rsp,8\nret\n"
        ".cfi_endproc\n.size wk_leaf,.-wk_leaf\n");
extern const char wk_leaf[];

static int add_self(struct dl_phdr_info *info, size_t size UNUSED, void *ctx)
{
    *(int *)ctx = js_cfi_add(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum);
    return 1;
}

static void test_native_cfi(void **state UNUSED)
{
    js_blob b = nmethod_with((const uint8_t[]){0x90}, 1, 0, 0);
    (void)b;
    stack[0] = 0x4444, stack[1] = caller_pc;
    js_cfi_reset(); /* without tables: rbp (a compiled method's value) is no frame, [sp] no return address */
    js_regs r = {(uintptr_t)wk_leaf + 6, (uintptr_t)&stack[0], 0x12345};
    assert_int_equal(js_unwind_native(&st, &r), JS_UW_BAD_STACK);
    int rc = -1;
    dl_iterate_phdr(add_self, &rc);
    assert_int_equal(rc, 0);
    r = (js_regs){(uintptr_t)wk_leaf + 6, (uintptr_t)&stack[0], 0x12345};
    assert_int_equal(js_unwind_native(&st, &r), JS_UW_NATIVE);
    assert_int_equal(r.pc, caller_pc);
    assert_int_equal(r.sp, (uintptr_t)&stack[2]);
    assert_int_equal(r.fp, 0x4444);
    stack[1] = 0x5000; /* the table's return address is not code: refused, not looked for elsewhere */
    stack[2] = caller_pc;
    r = (js_regs){(uintptr_t)wk_leaf + 6, (uintptr_t)&stack[0], (uintptr_t)&stack[1]};
    assert_int_equal(js_unwind_native(&st, &r), JS_UW_BAD_STACK);
    stack[1] = caller_pc;
    st.hi = (uintptr_t)&stack[1]; /* the return slot outside the live stack */
    r = (js_regs){(uintptr_t)wk_leaf + 6, (uintptr_t)&stack[0], 0x12345};
    assert_int_equal(js_unwind_native(&st, &r), JS_UW_BAD_STACK);
    js_cfi_reset();
}

/* ---- Method* -> jmethodID ----------------------------------------------------------------------------------- */

typedef struct {
    uintptr_t method[2];     /* [1] = ConstMethod* */
    uintptr_t cmethod[6];    /* [1] = ConstantPool*, idnum at byte 40 */
    uintptr_t cpool[4];      /* [3] = holder */
    uint8_t klass[344];      /* jmethod ids at 336 */
    uintptr_t ids[4];        /* [0] = count, [idnum + 1] = jmethodID */
    uintptr_t slot;          /* the jmethodID's slot: holds the Method* */
} fake_method;

static void chain(fake_method *m, uint16_t idnum)
{
    memset(m, 0, sizeof *m);
    m->method[1] = (uintptr_t)m->cmethod;
    m->cmethod[1] = (uintptr_t)m->cpool;
    memcpy((uint8_t *)m->cmethod + 40, &idnum, 2);
    m->cpool[3] = (uintptr_t)m->klass;
    uintptr_t ids = (uintptr_t)m->ids;
    memcpy(m->klass + 336, &ids, sizeof ids);
    m->ids[0] = 3;
    m->ids[idnum + 1] = (uintptr_t)&m->slot;
    m->slot = (uintptr_t)m->method;
}

static void test_method_id(void **state UNUSED)
{
    static fake_method ms[12]; /* a fresh Method for each case: answers are cached per Method* */
    fake_method *m = &ms[0];
    chain(m, 1);
    assert_ptr_equal(js_vm_method_id((uintptr_t)m->method), &m->slot);
    assert_ptr_equal(js_vm_method_id((uintptr_t)m->method), &m->slot); /* from the cache, checked again */
    m->slot = 0x1230;                                                    /* the id no longer points back */
    assert_null(js_vm_method_id((uintptr_t)m->method));
    uint64_t faults = js_safe_read_faults();
    for (int i = 0; i < 3; i++) { /* each link of the chain into unmapped memory, then NULL */
        for (int k = 0; k < 2; k++) {
            m = &ms[1 + 2 * i + k];
            chain(m, 2);
            uintptr_t *link = i == 0 ? &m->method[1] : i == 1 ? &m->cmethod[1] : &m->cpool[3];
            *link = k == 0 ? unmapped() : 0;
            assert_null(js_vm_method_id((uintptr_t)m->method));
        }
    }
    assert_true(js_safe_read_faults() >= faults + 6);
    m = &ms[8];
    chain(m, 2);
    uintptr_t bad = unmapped(); /* the holder's jmethodID array unmapped */
    memcpy(m->klass + 336, &bad, sizeof bad);
    assert_null(js_vm_method_id((uintptr_t)m->method));
    m = &ms[9];
    chain(m, 2);
    m->ids[0] = 2; /* idnum 2 is past the array's count */
    assert_null(js_vm_method_id((uintptr_t)m->method));
    assert_null(js_vm_method_id((uintptr_t)ms[10].method + 3)); /* misaligned */
    assert_null(js_vm_method_id(unmapped()));
    assert_null(js_vm_method_id(0));
}

/* The thread's frame anchor may be changed for a moment only in the states in which no other thread walks it: in
 * Java or in the VM (and their transitions); never blocked or in native (a GC worker or a handshake may be walking
 * it from the anchor: the crash "missing saved register"), nor when the tables lack the state. */
static void test_anchor_private(void **state UNUSED)
{
    static uint64_t jt[1300 / 8];
    int *state_word = (int *)((char *)jt + 1200);
    const int yes[] = {6, 7, 8, 9}, no[] = {0, 2, 3, 4, 5, 10, 11, 12, -1};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        *state_word = yes[i];
        assert_int_equal(js_vm_anchor_private((uintptr_t)jt), 1);
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        *state_word = no[i];
        assert_int_equal(js_vm_anchor_private((uintptr_t)jt), 0);
    }
    *state_word = 6;
    assert_int_equal(js_vm_anchor_private(0), 0);
    assert_int_equal(layout(JDK25, "_thread_state"), 0);
    assert_int_equal(js_vm.jt_state, -1);
    assert_int_equal(js_vm_anchor_private((uintptr_t)jt), 0);
    assert_int_equal(layout(JDK25, NULL), 0);
    assert_int_equal(js_vm_anchor_private((uintptr_t)jt), 1);
}

/* ---- guarded read ------------------------------------------------------------------------------------------- */

/* While an anchor is changed, the asynchronous signals wait, the synchronous ones do not (HotSpot's safe reads fault
 * on purpose; blocked, a fault kills the process); the mask is put back. */
static void test_block_async(void **state UNUSED)
{
    sigset_t before, old, during, after;
    assert_int_equal(pthread_sigmask(SIG_SETMASK, NULL, &before), 0);
    assert_int_equal(js_walker_block_async(&old), 0);
    assert_int_equal(pthread_sigmask(SIG_SETMASK, NULL, &during), 0);
    const int held[] = {SIGPROF, SIGALRM, SIGVTALRM, SIGRTMIN + 6, SIGUSR1};
    const int open[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP};
    for (size_t i = 0; i < 5; i++) {
        assert_true(sigismember(&during, held[i]));
        assert_false(sigismember(&during, open[i]));
    }
    assert_int_equal(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
    assert_int_equal(pthread_sigmask(SIG_SETMASK, NULL, &after), 0);
    for (int s = 1; s < SIGRTMAX; s++) assert_int_equal(sigismember(&after, s), sigismember(&before, s));
}

static void test_safe_read(void **state UNUSED)
{
    uint64_t v = 0x1122334455667788ULL, out = 0;
    assert_int_equal(js_safe_read((uintptr_t)&v, &out, sizeof out), 0);
    assert_int_equal(out, v);
    uint64_t faults = js_safe_read_faults();
    assert_int_equal(js_safe_read(unmapped(), &out, sizeof out), -1);
    assert_int_equal(js_safe_read(0, &out, sizeof out), -1);
    assert_int_equal(js_safe_read(UINTPTR_MAX - 3, &out, sizeof out), -1);
    assert_int_equal(js_safe_read_faults(), faults + 3);
    js_safe_range r = {(uintptr_t)&stack[0], (uintptr_t)&stack[8]};
    assert_true(js_safe_in(&r, (uintptr_t)&stack[7], 8, 8));
    assert_false(js_safe_in(&r, (uintptr_t)&stack[8], 8, 8));
    assert_false(js_safe_in(&r, (uintptr_t)&stack[2] + 1, 8, 8));
    assert_false(js_safe_in(&r, (uintptr_t)&stack[0] - 8, 8, 8));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find_corrupt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prologue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prologue_variants, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrapper_and_frameless, setup, teardown),
        cmocka_unit_test_setup_teardown(test_epilogue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwind_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_native, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pushed_words, setup, teardown),
        cmocka_unit_test_setup_teardown(test_return_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stub_after_push, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stub_moves_then_push, setup, teardown),
        cmocka_unit_test_setup_teardown(test_native_cfi, setup, teardown),
        cmocka_unit_test_setup_teardown(test_method_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_anchor_private, setup, teardown),
        cmocka_unit_test(test_block_async),
        cmocka_unit_test_setup_teardown(test_safe_read, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

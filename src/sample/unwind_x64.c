/* unwind_x64.c - see unwind.h. Instruction forms are those HotSpot's x86-64 macro assembler
 * emits for compiled-method entry and exit (MacroAssembler::verified_entry, the C1/C2 epilogues
 * with their return poll); each one below is matched byte for byte.
 */
#include "sample/unwind.h"

#include <string.h>

#include "sample/unwind_cfi.h"

#define MAX_INSNS 12 /* instructions decoded from the verified entry or towards the ret */
#define MAX_NATIVE_FRAMES 16
/* Words C2's inline intrinsics push below a compiled frame: string_indexof copies a short string and a short
 * substring to the stack (16 bytes each) and pushes four words (the last the frame's sp, restored by `pop rsp`);
 * string_compare pushes one, char_array_compress one. */
#define MAX_PUSHED 8

/* Read the stack word at a, only inside the live stack. */
static int stack_word(const js_safe_range *st, uintptr_t a, uintptr_t *out)
{
    if (!js_safe_in(st, a, sizeof *out, sizeof *out)) return -1;
    *out = *(const volatile uintptr_t *)a;
    return 0;
}

/* 1 if p..p+n lies in the blob's instructions (read directly: the code heap is committed). */
static int code_has(const js_blob *b, uintptr_t p, size_t n)
{
    return p >= b->code_begin && p <= b->code_end && n <= b->code_end - p;
}

static uint8_t byte_at(uintptr_t p)
{
    return *(const volatile uint8_t *)p;
}

static int32_t imm32_at(uintptr_t p)
{
    int32_t v;
    memcpy(&v, (const void *)p, sizeof v);
    return v;
}

/* 1 if the caller's pc looks like a return address into Java code. */
static int plausible_return(uintptr_t pc)
{
    return js_codecache_contains(pc);
}

/* 1 if a call instruction ends at ret inside blob c's code. *target gets its destination when the instruction
 * names it (`call rel32`; `movabs r10, imm64` + `call r10`, HotSpot's call to an address out of reach), else 0
 * (`call reg`). The forms are those HotSpot's x86-64 assembler emits for calls from compiled code and stubs. */
static int call_ends_at(const js_blob *c, uintptr_t ret, uintptr_t *target)
{
    *target = 0;
    if (ret < 5 || ret > c->code_end) return 0;
    if (code_has(c, ret - 5, 5) && byte_at(ret - 5) == 0xe8) {
        *target = ret + (uintptr_t)(intptr_t)imm32_at(ret - 4);
        return 1;
    }
    if (ret >= 13 && code_has(c, ret - 13, 13) && byte_at(ret - 13) == 0x49 && byte_at(ret - 12) == 0xba &&
        byte_at(ret - 3) == 0x41 && byte_at(ret - 2) == 0xff && byte_at(ret - 1) == 0xd2) {
        memcpy(target, (const void *)(ret - 11), sizeof *target);
        return 1;
    }
    if (code_has(c, ret - 3, 3) && byte_at(ret - 3) == 0x41 && byte_at(ret - 2) == 0xff &&
        (byte_at(ret - 1) & 0xf8) == 0xd0)
        return 1; /* call r8..r15 */
    return code_has(c, ret - 2, 2) && byte_at(ret - 2) == 0xff && (byte_at(ret - 1) & 0xf8) == 0xd0; /* call rax..rdi */
}

/* 1 if the interpreter code at p is one of its return entries: they begin by restoring rsp from the frame's
 * last_sp slot ([rbp - 16]) and clearing it. JDK 17: `mov rsp, [rbp-16]; mov qword [rbp-16], 0`; JDK 25 keeps
 * the slot relative to rbp: `mov rcx, [rbp-16]; lea rsp, [rbp+rcx*8]; mov qword [rbp-16], 0`. */
static int interpreter_return_entry(const js_blob *c, uintptr_t p)
{
    static const uint8_t jdk17[] = {0x48, 0x8b, 0x65, 0xf0, 0x48, 0xc7, 0x45, 0xf0};
    static const uint8_t jdk25[] = {0x48, 0x8b, 0x4d, 0xf0, 0x48, 0x8d, 0x64, 0xcd, 0x00, 0x48, 0xc7, 0x45, 0xf0};
    return (code_has(c, p, sizeof jdk17) && !memcmp((const void *)p, jdk17, sizeof jdk17)) ||
           (code_has(c, p, sizeof jdk25) && !memcmp((const void *)p, jdk25, sizeof jdk25));
}

/* 1 if ret can be the return address of a compiled frame: in compiled code or a stub right after a call to code
 * in the code cache (or through a register), or one of the interpreter's return entries (the interpreter pushes
 * it and jumps: the caller of a method it invoked, or of an on-stack-replaced loop). */
static int java_return(uintptr_t ret)
{
    js_blob c;
    uintptr_t target;
    if (js_codecache_find(ret, &c) != JS_CC_FOUND || ret <= c.code_begin || ret >= c.code_end) return 0;
    if (c.kind == JS_BLOB_INTERPRETER) return interpreter_return_entry(&c, ret);
    if (!call_ends_at(&c, ret, &target)) return 0;
    return !target || js_codecache_contains(target);
}

/* Finish a step: the return address sits at ret_slot; fp is the caller's rbp. */
static int pop_to(const js_safe_range *st, js_regs *r, uintptr_t ret_slot, uintptr_t fp, int kind)
{
    uintptr_t ret;
    if (ret_slot < r->sp || stack_word(st, ret_slot, &ret) != 0 || !plausible_return(ret)) return JS_UW_BAD_STACK;
    r->pc = ret;
    r->sp = ret_slot + sizeof(uintptr_t);
    r->fp = fp;
    return kind;
}

/* Bytes pushed or allocated by the prologue instructions before pc (decoded from the verified
 * entry); *saved_fp_at gets the depth of the saved rbp, or 0 if rbp was not yet pushed. -1 if an
 * instruction is not one of the prologue's. */
static long prologue_depth(const js_blob *b, uintptr_t ve, uintptr_t pc, long *saved_fp_at)
{
    long depth = 0;
    *saved_fp_at = 0;
    uintptr_t p = ve;
    for (int i = 0; i < MAX_INSNS && p < pc; i++) {
        if (code_has(b, p, 7) && byte_at(p) == 0x89 && byte_at(p + 1) == 0x84 && byte_at(p + 2) == 0x24) {
            p += 7; /* mov [rsp - bang], eax: the stack bang */
        } else if (code_has(b, p, 1) && byte_at(p) == 0x55) {
            p += 1; /* push rbp */
            depth += 8;
            *saved_fp_at = depth;
        } else if (code_has(b, p, 3) && byte_at(p) == 0x48 &&
                   ((byte_at(p + 1) == 0x89 && byte_at(p + 2) == 0xe5) || (byte_at(p + 1) == 0x8b && byte_at(p + 2) == 0xec))) {
            p += 3; /* mov rbp, rsp (PreserveFramePointer; a native wrapper's `enter`), in either encoding */
        } else if (code_has(b, p, 4) && byte_at(p) == 0x48 && byte_at(p + 1) == 0x83 && byte_at(p + 2) == 0xec) {
            depth += byte_at(p + 3); /* sub rsp, imm8: the frame is allocated, the rest needs no decoding */
            return p + 4 <= pc ? depth : -1;
        } else if (code_has(b, p, 7) && byte_at(p) == 0x48 && byte_at(p + 1) == 0x81 && byte_at(p + 2) == 0xec) {
            int32_t n = imm32_at(p + 3);
            if (n < 0 || n > (1 << 20)) return -1;
            depth += n;
            return p + 7 <= pc ? depth : -1;
        } else {
            return -1;
        }
    }
    return p == pc ? depth : -1;
}

/* Compiled method, frame not yet complete. */
static int unwind_prologue(const js_blob *b, uintptr_t ve, const js_safe_range *st, js_regs *r)
{
    if (ve < b->code_begin || ve >= b->code_end) return JS_UW_BAD_ENTRY;
    if (r->pc < ve) return pop_to(st, r, r->sp, r->fp, JS_UW_PROLOGUE); /* inline-cache check: nothing pushed */
    long saved_fp_at;
    long depth = prologue_depth(b, ve, r->pc, &saved_fp_at);
    if (depth < 0) return JS_UW_UNKNOWN_CODE;
    uintptr_t fp = r->fp;
    if (saved_fp_at && stack_word(st, r->sp + (uintptr_t)(depth - saved_fp_at), &fp) != 0) return JS_UW_BAD_STACK;
    return pop_to(st, r, r->sp + (uintptr_t)depth, fp, JS_UW_PROLOGUE);
}

/* Compiled method at or after `add rsp, N`: simulate forward to the `ret`. */
static int unwind_epilogue(const js_blob *b, const js_safe_range *st, js_regs *r)
{
    long off = 0, fp_at = -1;
    uintptr_t p = r->pc;
    for (int i = 0; i < MAX_INSNS; i++) {
        if (code_has(b, p, 1) && byte_at(p) == 0xc3) { /* ret */
            uintptr_t fp = r->fp;
            if (fp_at >= 0 && stack_word(st, r->sp + (uintptr_t)fp_at, &fp) != 0) return JS_UW_BAD_STACK;
            return pop_to(st, r, r->sp + (uintptr_t)off, fp, JS_UW_EPILOGUE);
        }
        if (code_has(b, p, 4) && byte_at(p) == 0x48 && byte_at(p + 1) == 0x83 && byte_at(p + 2) == 0xc4) {
            off += byte_at(p + 3); /* add rsp, imm8 */
            p += 4;
        } else if (code_has(b, p, 7) && byte_at(p) == 0x48 && byte_at(p + 1) == 0x81 && byte_at(p + 2) == 0xc4) {
            int32_t n = imm32_at(p + 3);
            if (n < 0 || n > (1 << 20)) return JS_UW_UNKNOWN_CODE;
            off += n;
            p += 7;
        } else if (code_has(b, p, 1) && byte_at(p) == 0x5d) { /* pop rbp */
            fp_at = off;
            off += 8;
            p += 1;
        } else if (code_has(b, p, 3) && byte_at(p) == 0xc5 && byte_at(p + 1) == 0xf8 && byte_at(p + 2) == 0x77) {
            p += 3; /* vzeroupper */
        } else if (code_has(b, p, 4) && byte_at(p) == 0x49 && byte_at(p + 1) == 0x3b && byte_at(p + 2) == 0x67) {
            p += 4; /* cmp rsp, [r15 + disp8]: the return poll */
        } else if (code_has(b, p, 7) && byte_at(p) == 0x49 && byte_at(p + 1) == 0x3b && byte_at(p + 2) == 0xa7) {
            p += 7; /* cmp rsp, [r15 + disp32] */
        } else if (code_has(b, p, 6) && byte_at(p) == 0x0f && byte_at(p + 1) == 0x87) {
            p += 6; /* ja slow path (out of line): falls through to the ret */
        } else {
            return JS_UW_UNKNOWN_CODE;
        }
    }
    return JS_UW_UNKNOWN_CODE;
}

/* Out of native code by its call-frame information, frame by frame until a return address into the code cache:
 * 1 with r the Java caller's registers, 0 if the interrupted code has no table, -1 if a table could not be
 * followed or led to code that is neither Java nor described. */
static int native_by_cfi(const js_safe_range *st, js_regs *r)
{
    for (int i = 0; i < MAX_NATIVE_FRAMES; i++) {
        js_regs next = *r;
        int rc = js_cfi_step(st, &next, i == 0);
        if (rc == JS_CFI_NONE) return i == 0 ? 0 : -1;
        if (rc != JS_CFI_OK) return -1;
        *r = next;
        if (plausible_return(r->pc)) return 1;
    }
    return -1;
}

int js_unwind_native(const js_safe_range *st, js_regs *r)
{
    js_regs at = *r;
    int cfi = native_by_cfi(st, &at);
    if (cfi > 0) {
        *r = at;
        return JS_UW_NATIVE;
    }
    if (cfi < 0) return JS_UW_BAD_STACK;
    /* code without a table (hand-written assembly, an object not read in place): its frame pointers */
    uintptr_t fp = r->fp, next, ret;
    for (int i = 0; i < MAX_NATIVE_FRAMES; i++) {
        if (fp <= r->sp || stack_word(st, fp, &next) != 0 || stack_word(st, fp + 8, &ret) != 0) break;
        if (plausible_return(ret)) {
            r->pc = ret;
            r->sp = fp + 2 * sizeof(uintptr_t);
            r->fp = next;
            return JS_UW_NATIVE;
        }
        if (next <= fp) break; /* frames only go up the stack */
        fp = next;
    }
    return pop_to(st, r, r->sp, r->fp, JS_UW_NATIVE); /* a leaf that has not pushed rbp */
}

#define MAX_ENTRY_MOVES 2

/* 1 if [p, end) holds at most MAX_ENTRY_MOVES 64-bit register-to-register moves (REX.W 89/8B, mod 11) of which
 * none reads or writes rsp: what a stub may do with its arguments before its `push rbp` (JDK 25's fill stubs start
 * `mov r11, rdx; push rbp`). */
static int only_reg_moves(const js_blob *b, uintptr_t p, uintptr_t end)
{
    for (int i = 0; i < MAX_ENTRY_MOVES && p < end; i++, p += 3) {
        if (!code_has(b, p, 3)) return 0;
        uint8_t rex = byte_at(p), op = byte_at(p + 1), modrm = byte_at(p + 2);
        if ((rex & 0xFA) != 0x48 || (op != 0x89 && op != 0x8B) || (modrm >> 6) != 3) return 0;
        int reg = ((rex >> 2) & 1) << 3 | ((modrm >> 3) & 7), rm = (rex & 1) << 3 | (modrm & 7);
        if (reg == 4 || rm == 4) return 0;
    }
    return p == end;
}

/* A stub whose entry `push rbp` (of `push rbp; mov rbp, rsp`) has just run: the return address is above the saved
 * rbp, and the call that put it there went to the push (pc - 1), or to register moves just before it. JS_UW_STUB,
 * or <0 (r untouched). */
static int after_entry_push(const js_blob *b, const js_safe_range *st, js_regs *r)
{
    uintptr_t ret, fp, target;
    js_blob c;
    if (!code_has(b, r->pc - 1, 1) || byte_at(r->pc - 1) != 0x55) return JS_UW_UNKNOWN_CODE;
    if (stack_word(st, r->sp, &fp) != 0 || stack_word(st, r->sp + sizeof(uintptr_t), &ret) != 0)
        return JS_UW_BAD_STACK;
    if (js_codecache_find(ret, &c) != JS_CC_FOUND || !call_ends_at(&c, ret, &target) || target > r->pc - 1 ||
        !only_reg_moves(b, target, r->pc - 1))
        return JS_UW_BAD_STACK;
    return pop_to(st, r, r->sp + sizeof(uintptr_t), fp, JS_UW_STUB);
}

/* A frame built with `push rbp; mov rbp, rsp` (many StubRoutines): the return address above the saved rbp. */
static int through_fp(const js_safe_range *st, js_regs *r, int kind)
{
    uintptr_t saved, ret;
    if (r->fp < r->sp || stack_word(st, r->fp, &saved) != 0 || stack_word(st, r->fp + 8, &ret) != 0 ||
        !plausible_return(ret))
        return JS_UW_BAD_STACK;
    r->pc = ret;
    r->sp = r->fp + 2 * sizeof(uintptr_t);
    r->fp = saved;
    return kind;
}

int js_unwind_frame(const js_blob *b, const js_safe_range *st, js_regs *r)
{
    if (b->frame_size < 2 || b->frame_size > (1 << 17)) return JS_UW_UNKNOWN_CODE;
    uintptr_t sender_sp = r->sp + (uintptr_t)b->frame_size * sizeof(uintptr_t), fp;
    if (stack_word(st, sender_sp - 2 * sizeof(uintptr_t), &fp) != 0) return JS_UW_BAD_STACK;
    return pop_to(st, r, sender_sp - sizeof(uintptr_t), fp, JS_UW_BODY);
}

/* A compiled method in its body with words pushed below its frame (an inline intrinsic's): the frame's own sp is
 * sp + 8k for the k in 1..MAX_PUSHED whose return slot holds a return address (java_return). string_indexof keeps
 * the frame's sp at [sp] while it searches: when that k qualifies it is taken. Otherwise the smallest k: the slots
 * above the frame are its callers' and hold their own return addresses, while below the return slot lie the saved
 * rbp and the frame's own slots. r->sp becomes the frame's sp (pc and fp unchanged). */
static int pushed_frame(const js_blob *b, const js_safe_range *st, js_regs *r)
{
    if (b->frame_size < 2 || b->frame_size > (1 << 17)) return JS_UW_UNKNOWN_CODE;
    uintptr_t frame = (uintptr_t)b->frame_size * sizeof(uintptr_t), saved, ret;
    unsigned first = 0, saved_k = 0;
    if (stack_word(st, r->sp, &saved) == 0 && saved > r->sp && saved - r->sp <= MAX_PUSHED * sizeof(uintptr_t) &&
        !(saved & (sizeof(uintptr_t) - 1)))
        saved_k = (unsigned)((saved - r->sp) / sizeof(uintptr_t));
    for (unsigned k = 1; k <= MAX_PUSHED; k++) {
        if (stack_word(st, r->sp + k * sizeof(uintptr_t) + frame - sizeof(uintptr_t), &ret) != 0) break;
        if (!java_return(ret)) continue;
        if (!first) first = k;
        if (k == saved_k) {
            first = k;
            break;
        }
    }
    if (!first) return JS_UW_BAD_STACK;
    r->sp += first * sizeof(uintptr_t);
    return JS_UW_SHIFTED;
}

int js_unwind_top(const js_blob *b, uintptr_t verified_entry, const js_safe_range *st, js_regs *r)
{
    switch (b->kind) {
    case JS_BLOB_NMETHOD: {
        if (r->pc < b->code_begin || r->pc >= b->code_end) return JS_UW_UNKNOWN_CODE;
        if (!js_blob_frame_built(b, r->pc)) {
            int how = unwind_prologue(b, verified_entry, st, r);
            if (how != JS_UW_UNKNOWN_CODE || b->frame_size > 0) return how;
            /* A method handle intrinsic (invokeBasic, linkTo*: a native nmethod of no frame that jumps to its target)
             * has only its return address on the stack, right after a call from Java code. */
            uintptr_t ret;
            if (stack_word(st, r->sp, &ret) != 0 || !java_return(ret)) return JS_UW_UNKNOWN_CODE;
            return pop_to(st, r, r->sp, r->fp, JS_UW_PROLOGUE);
        }
        js_regs saved = *r;
        int how = unwind_epilogue(b, st, r);
        if (how != JS_UW_UNKNOWN_CODE) return how;
        *r = saved;
        how = js_unwind_frame(b, st, r);
        if (how > 0) return how;
        *r = saved;
        return pushed_frame(b, st, r) == JS_UW_SHIFTED ? JS_UW_SHIFTED : how;
    }
    case JS_BLOB_STUB:
        if (b->frame_size <= 0 || !js_blob_frame_built(b, r->pc)) {
            if (after_entry_push(b, st, r) > 0) return JS_UW_STUB;
            js_regs saved = *r; /* no frame of its own: the return address on top, or above a pushed rbp */
            int how = pop_to(st, r, r->sp, r->fp, JS_UW_STUB);
            if (how > 0) return how;
            *r = saved;
            return through_fp(st, r, JS_UW_STUB);
        }
        {
            uintptr_t sender_sp = r->sp + (uintptr_t)b->frame_size * sizeof(uintptr_t), fp;
            if (stack_word(st, sender_sp - 2 * sizeof(uintptr_t), &fp) != 0) return JS_UW_BAD_STACK;
            return pop_to(st, r, sender_sp - sizeof(uintptr_t), fp, JS_UW_FRAME);
        }
    case JS_BLOB_INTERPRETER:
    default:
        return JS_UW_INTERPRETER;
    }
}

/* test_unwind_cfi.c - the call-frame-information unwinder: on tables the toolchain wrote for functions of this
 * test (their prologue, body, epilogue after `leave`, two exits with remember/restore state), and on tables built
 * here byte by byte, then corrupted one way at a time: each must end as a refused step, never a read outside the
 * table's segment or the live stack (also under ASan). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <link.h>
#include <stdint.h>
#include <string.h>

#include "sample/unwind_cfi.h"

#define UNUSED __attribute__((unused))

/* ---- functions with real tables (assembled, never run) --------------------------------------------------- */

__asm__(".text\n"
        ".globl cfi_t_leaf\n.type cfi_t_leaf,@function\n"
        "cfi_t_leaf:\n.cfi_startproc\n"
        "push %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset %rbp,-16\n"
        "mov $1,%edi\n"             /* an instruction before the frame pointer is set, as os::javaTimeNanos has */
        "mov %rsp,%rbp\n.cfi_def_cfa_register %rbp\n"
        "sub $16,%rsp\n"
        ".globl cfi_t_leaf_body\ncfi_t_leaf_body: nop\n"
        "leave\n.cfi_def_cfa %rsp,8\n"
        ".globl cfi_t_leaf_ret\ncfi_t_leaf_ret: ret\n"
        ".cfi_endproc\n.size cfi_t_leaf,.-cfi_t_leaf\n"
        ".globl cfi_t_outer\n.type cfi_t_outer,@function\n"
        "cfi_t_outer:\n.cfi_startproc\n"
        "push %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset %rbp,-16\n"
        "mov %rsp,%rbp\n.cfi_def_cfa_register %rbp\n"
        "test %edi,%edi\njz 1f\n"
        ".cfi_remember_state\n"
        "pop %rbp\n.cfi_def_cfa %rsp,8\n"
        "ret\n"
        "1:\n.cfi_restore_state\n"
        "call cfi_t_leaf\n"
        ".globl cfi_t_outer_after\ncfi_t_outer_after: pop %rbp\n.cfi_def_cfa %rsp,8\n"
        "ret\n"
        ".cfi_endproc\n.size cfi_t_outer,.-cfi_t_outer\n");

extern const char cfi_t_leaf[], cfi_t_leaf_body[], cfi_t_leaf_ret[], cfi_t_outer[], cfi_t_outer_after[];

static uintptr_t stk[32];
static js_safe_range st;

static void fresh_stack(void)
{
    memset(stk, 0, sizeof stk);
    st.lo = (uintptr_t)&stk[0];
    st.hi = (uintptr_t)&stk[32];
}

/* dl_iterate_phdr: register the first object reported, this program. */
static int add_self(struct dl_phdr_info *info, size_t size UNUSED, void *ctx)
{
    *(int *)ctx = js_cfi_add(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum);
    return 1;
}

static int setup_self(void **state UNUSED)
{
    js_cfi_reset();
    int rc = -1;
    dl_iterate_phdr(add_self, &rc);
    assert_int_equal(rc, 0);
    fresh_stack();
    return 0;
}

static js_regs at(const char *pc, uintptr_t sp, uintptr_t fp)
{
    return (js_regs){(uintptr_t)pc, sp, fp};
}

static void test_toolchain_tables(void **state UNUSED)
{
    js_regs r = at(cfi_t_leaf, (uintptr_t)&stk[0], 0x7777); /* at the entry: the return address on top */
    stk[0] = 0xaaaa;
    assert_int_equal(js_cfi_step(&st, &r, 1), JS_CFI_OK);
    assert_int_equal(r.pc, 0xaaaa);
    assert_int_equal(r.sp, (uintptr_t)&stk[1]);
    assert_int_equal(r.fp, 0x7777);
    for (int off = 1; off <= 6; off += 5) { /* after push rbp, and after the mov before mov rbp, rsp */
        fresh_stack();
        stk[0] = 0x5555, stk[1] = 0xaaaa;
        r = at(cfi_t_leaf + off, (uintptr_t)&stk[0], 0x7777);
        assert_int_equal(js_cfi_step(&st, &r, 1), JS_CFI_OK);
        assert_int_equal(r.pc, 0xaaaa);
        assert_int_equal(r.sp, (uintptr_t)&stk[2]);
        assert_int_equal(r.fp, 0x5555);
    }
    fresh_stack(); /* in the body: the frame by rbp (sp is 16 bytes lower) */
    stk[2] = 0x5555, stk[3] = 0xaaaa;
    r = at(cfi_t_leaf_body, (uintptr_t)&stk[0], (uintptr_t)&stk[2]);
    assert_int_equal(js_cfi_step(&st, &r, 1), JS_CFI_OK);
    assert_int_equal(r.pc, 0xaaaa);
    assert_int_equal(r.sp, (uintptr_t)&stk[4]);
    assert_int_equal(r.fp, 0x5555);
    fresh_stack(); /* at the ret after leave: rbp is the caller's again, its old slot below sp is not read */
    stk[2] = 0x1111, stk[3] = 0xaaaa;
    r = at(cfi_t_leaf_ret, (uintptr_t)&stk[3], 0x7777);
    assert_int_equal(js_cfi_step(&st, &r, 1), JS_CFI_OK);
    assert_int_equal(r.pc, 0xaaaa);
    assert_int_equal(r.sp, (uintptr_t)&stk[4]);
    assert_int_equal(r.fp, 0x7777);
}

static void test_toolchain_two_frames(void **state UNUSED)
{
    /* leaf just after push rbp, called by outer (its frame by rbp = &stk[2]), called by 0xaaaa */
    stk[0] = (uintptr_t)&stk[2], stk[1] = (uintptr_t)cfi_t_outer_after, stk[2] = 0x9999, stk[3] = 0xaaaa;
    js_regs r = at(cfi_t_leaf + 1, (uintptr_t)&stk[0], 0x1234);
    assert_int_equal(js_cfi_step(&st, &r, 1), JS_CFI_OK);
    assert_int_equal(r.pc, (uintptr_t)cfi_t_outer_after);
    assert_int_equal(r.fp, (uintptr_t)&stk[2]);
    assert_int_equal(js_cfi_step(&st, &r, 0), JS_CFI_OK); /* a return address: looked up inside the call */
    assert_int_equal(r.pc, 0xaaaa);
    assert_int_equal(r.sp, (uintptr_t)&stk[4]);
    assert_int_equal(r.fp, 0x9999);
    /* the early exit after pop rbp, then the other path where restore_state brought the rbp-based CFA back */
    const char *pop = cfi_t_outer + 1 + 3 + 2 + 2; /* push, mov, test, jz */
    fresh_stack();
    stk[0] = 0xaaaa;
    r = at(pop + 1, (uintptr_t)&stk[0], 0x9999);
    assert_int_equal(js_cfi_step(&st, &r, 1), JS_CFI_OK);
    assert_int_equal(r.pc, 0xaaaa);
    assert_int_equal(r.sp, (uintptr_t)&stk[1]);
    fresh_stack();
    stk[0] = 0x9999, stk[1] = 0xaaaa;
    r = at(pop + 2, (uintptr_t)&stk[0], (uintptr_t)&stk[0]); /* at the call */
    assert_int_equal(js_cfi_step(&st, &r, 1), JS_CFI_OK);
    assert_int_equal(r.pc, 0xaaaa);
    assert_int_equal(r.sp, (uintptr_t)&stk[2]);
    assert_int_equal(r.fp, 0x9999);
}

static void test_toolchain_refusals(void **state UNUSED)
{
    stk[0] = 0x5555, stk[1] = 0xaaaa;
    js_regs r = at(cfi_t_leaf + 1, (uintptr_t)&stk[0], 0);
    st.hi = (uintptr_t)&stk[1]; /* the return slot outside the live stack */
    assert_int_equal(js_cfi_step(&st, &r, 1), JS_CFI_BAD);
    assert_int_equal(r.pc, (uintptr_t)cfi_t_leaf + 1); /* untouched */
    fresh_stack();
    r = at((const char *)&stk[0], (uintptr_t)&stk[0], 0); /* not code of a registered object */
    assert_int_equal(js_cfi_step(&st, &r, 1), JS_CFI_NONE);
    js_cfi_reset();
    r = at(cfi_t_leaf, (uintptr_t)&stk[0], 0);
    assert_int_equal(js_cfi_step(&st, &r, 1), JS_CFI_NONE);
}

/* The pinned objects of a running process: libc (and libm) at least. */
static void test_init(void **state UNUSED)
{
    js_cfi_reset();
    assert_true(js_cfi_init() >= 1);
    assert_int_equal(js_cfi_init(), js_cfi_init()); /* once */
    js_cfi_reset();
}

/* ---- tables built here ---------------------------------------------------------------------------------- */

/* One object: text (never read) and a read-only image of .eh_frame_hdr, its table, one CIE and one FDE. */
static uint8_t text[256] __attribute__((aligned(16)));
static uint8_t img[512] __attribute__((aligned(8)));
enum { HDR = 0, CIE = 64, FDE = 128 };
static size_t fde_end;

static void put32(size_t off, uint32_t v) { memcpy(img + off, &v, 4); }

/* Build the image: an FDE covering text[0..64) with the given instructions; the CIE as GCC writes it. */
static void build(const uint8_t *insns, size_t n)
{
    memset(img, 0, sizeof img);
    img[0] = 1, img[1] = 0x1b, img[2] = 0x03, img[3] = 0x3b; /* version; pcrel|sdata4, udata4, datarel|sdata4 */
    put32(4, (uint32_t)(CIE - 4));                              /* .eh_frame, relative to this field */
    put32(8, 1);                                                /* one entry */
    put32(12, (uint32_t)((uintptr_t)text - (uintptr_t)img));    /* its location, relative to the header */
    put32(16, FDE);
    static const uint8_t cie[] = {0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0};
    memcpy(img + CIE + 4, cie, sizeof cie);
    put32(CIE, sizeof cie);
    size_t p = FDE + 4;
    put32(p, (uint32_t)(p - CIE)), p += 4;                                     /* back to the CIE */
    put32(p, (uint32_t)((uintptr_t)text - (uintptr_t)(img + p))), p += 4;      /* pcrel start */
    put32(p, 64), p += 4;                                                      /* range */
    img[p++] = 0;                                                              /* augmentation length */
    memcpy(img + p, insns, n), p += n;
    while ((p - FDE) % 4) img[p++] = 0; /* DW_CFA_nop */
    put32(FDE, (uint32_t)(p - FDE - 4));
    fde_end = p;
}

/* Register the image (as an object at base 0); js_cfi_add's result. */
static int add_img(size_t img_len)
{
    ElfW(Phdr) ph[3];
    memset(ph, 0, sizeof ph);
    ph[0].p_type = PT_LOAD, ph[0].p_flags = PF_R | PF_X, ph[0].p_vaddr = (uintptr_t)text, ph[0].p_memsz = sizeof text;
    ph[1].p_type = PT_LOAD, ph[1].p_flags = PF_R, ph[1].p_vaddr = (uintptr_t)img, ph[1].p_memsz = img_len;
    ph[2].p_type = PT_GNU_EH_FRAME, ph[2].p_vaddr = (uintptr_t)img, ph[2].p_memsz = 20;
    js_cfi_reset();
    return js_cfi_add(0, ph, 3);
}

/* push rbp at 0, mov rbp, rsp at 1 (as the leaf above). */
static const uint8_t PROLOGUE[] = {0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6};

/* A step at text + off with a frame whose return address is stk[ret] (saved rbp below it). */
static int step_at(unsigned off, int ret, js_regs *r)
{
    fresh_stack();
    stk[ret - 1] = 0x5555, stk[ret] = 0xaaaa;
    *r = (js_regs){(uintptr_t)text + off, (uintptr_t)&stk[0], (uintptr_t)&stk[ret - 1]};
    return js_cfi_step(&st, r, 1);
}

static void test_built_table(void **state UNUSED)
{
    build(PROLOGUE, sizeof PROLOGUE);
    assert_int_equal(add_img(fde_end), 0);
    js_regs r;
    assert_int_equal(step_at(0, 1, &r), JS_CFI_OK); /* CIE row: CFA = rsp + 8 */
    assert_int_equal(r.sp, (uintptr_t)&stk[1]);
    stk[0] = 0xaaaa;
    r = (js_regs){(uintptr_t)text, (uintptr_t)&stk[0], 0};
    assert_int_equal(js_cfi_step(&st, &r, 1), JS_CFI_OK);
    assert_int_equal(r.pc, 0xaaaa);
    assert_int_equal(step_at(1, 1, &r), JS_CFI_OK); /* rsp + 16, rbp at CFA - 16 */
    assert_int_equal(r.pc, 0xaaaa);
    assert_int_equal(r.fp, 0x5555);
    assert_int_equal(step_at(30, 5, &r), JS_CFI_OK); /* rbp + 16 */
    assert_int_equal(r.pc, 0xaaaa);
    assert_int_equal(r.sp, (uintptr_t)&stk[6]);
    assert_int_equal(step_at(64, 5, &r), JS_CFI_NONE); /* past the FDE's range */
}

/* Each of these instruction streams is refused (the step says BAD). */
static void test_built_refused_rules(void **state UNUSED)
{
    static const struct {
        uint8_t insns[12];
        size_t n;
    } bad[] = {
        {{0x0f, 2, 0x77, 8}, 4},             /* def_cfa_expression */
        {{0x0c, 3, 8}, 3},                   /* CFA on rbx: not known */
        {{0x09, 16, 3}, 3},                  /* return address in a register */
        {{0x10, 6, 1, 0x70}, 4},             /* rbp by an expression */
        {{0x07, 16}, 2},                     /* return address undefined */
        {{0x0b}, 1},                         /* restore_state with nothing remembered */
        {{0x3f}, 1},                         /* an unknown opcode */
        {{0x0e, 0x80, 0x80}, 3},             /* a LEB128 running to the FDE's end (3 bytes: no padding) */
        {{0x0e, 0}, 2},                      /* CFA = rsp: not above the frame */
        {{0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a}, 9}, /* remember_state nested too deep */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        build(bad[i].insns, bad[i].n);
        assert_int_equal(add_img(fde_end), 0);
        js_regs r;
        assert_int_equal(step_at(1, 1, &r), JS_CFI_BAD);
        assert_int_equal(r.pc, (uintptr_t)text + 1); /* untouched */
    }
    uint8_t ok[] = {0x41, 0x0a, 0x0e, 16, 0x86, 2, 0x0b}; /* remember, change, restore: back to the CIE's row */
    build(ok, sizeof ok);
    assert_int_equal(add_img(fde_end), 0);
    js_regs r;
    assert_int_equal(step_at(1, 1, &r), JS_CFI_OK);
    assert_int_equal(r.sp, (uintptr_t)&stk[1]);
}

/* The GNU linker's lazy-binding PLT: its one CFA expression (rsp + 8, + 8 once the entry pushed its index). */
static void test_built_plt(void **state UNUSED)
{
    static const uint8_t plt[] = {0x0f, 11, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22};
    build(plt, sizeof plt);
    assert_int_equal(add_img(fde_end), 0);
    js_regs r;
    assert_int_equal(step_at(16, 1, &r), JS_CFI_OK); /* at the entry's jmp *GOT: the return address on top */
    assert_int_equal(r.pc, 0x5555);
    assert_int_equal(r.sp, (uintptr_t)&stk[1]);
    assert_int_equal(step_at(16 + 11, 1, &r), JS_CFI_OK); /* after its push: one word more */
    assert_int_equal(r.pc, 0xaaaa);
    assert_int_equal(r.sp, (uintptr_t)&stk[2]);
    uint8_t other[sizeof plt];
    memcpy(other, plt, sizeof plt);
    other[3] = 0x10; /* any other expression is refused */
    build(other, sizeof other);
    assert_int_equal(add_img(fde_end), 0);
    assert_int_equal(step_at(16, 1, &r), JS_CFI_BAD);
}

/* Corrupt headers, tables, CIEs and FDEs: refused at registration or at the step, never read out of the image. */
static void test_built_corrupt(void **state UNUSED)
{
    js_regs r;
    build(PROLOGUE, sizeof PROLOGUE);
    img[3] = 0x1b; /* a table not datarel|sdata4 */
    assert_int_equal(add_img(fde_end), -1);
    build(PROLOGUE, sizeof PROLOGUE);
    put32(8, 1000); /* more entries than the segment holds */
    assert_int_equal(add_img(fde_end), -1);
    build(PROLOGUE, sizeof PROLOGUE);
    img[0] = 2; /* header version */
    assert_int_equal(add_img(fde_end), -1);

    build(PROLOGUE, sizeof PROLOGUE);
    put32(16, 4000); /* the entry's FDE outside the segment */
    assert_int_equal(add_img(fde_end), 0);
    assert_int_equal(step_at(1, 1, &r), JS_CFI_BAD);
    build(PROLOGUE, sizeof PROLOGUE);
    put32(FDE, 0xffffffffu); /* a 64-bit length */
    assert_int_equal(add_img(fde_end), 0);
    assert_int_equal(step_at(1, 1, &r), JS_CFI_BAD);
    build(PROLOGUE, sizeof PROLOGUE);
    put32(FDE, 400); /* a length past the segment */
    assert_int_equal(add_img(fde_end), 0);
    assert_int_equal(step_at(1, 1, &r), JS_CFI_BAD);
    build(PROLOGUE, sizeof PROLOGUE);
    put32(FDE + 4, 100000); /* the CIE pointer before the segment */
    assert_int_equal(add_img(fde_end), 0);
    assert_int_equal(step_at(1, 1, &r), JS_CFI_BAD);
    build(PROLOGUE, sizeof PROLOGUE);
    put32(FDE + 4, 0); /* a CIE id where the pointer should be */
    assert_int_equal(add_img(fde_end), 0);
    assert_int_equal(step_at(1, 1, &r), JS_CFI_BAD);

    static const struct {
        size_t at;
        uint8_t v;
    } cie_bad[] = {
        {CIE + 8, 2},     /* version 2 */
        {CIE + 9, 'e'},   /* "eR": not a z augmentation */
        {CIE + 10, 'P'},  /* "zP": a personality pointer longer than the augmentation data */
        {CIE + 12, 2},    /* code alignment 2 */
        {CIE + 14, 15},   /* return address column 15 */
        {CIE + 16, 0x9b}, /* FDE pointers indirect */
        {CIE + 10, 'X'},  /* an unknown augmentation */
    };
    for (size_t i = 0; i < sizeof cie_bad / sizeof cie_bad[0]; i++) {
        build(PROLOGUE, sizeof PROLOGUE);
        img[cie_bad[i].at] = cie_bad[i].v;
        assert_int_equal(add_img(fde_end), 0);
        assert_int_equal(step_at(1, 1, &r), JS_CFI_BAD);
    }
    build(PROLOGUE, sizeof PROLOGUE); /* the image cut short inside the FDE */
    assert_int_equal(add_img(fde_end - 4), 0);
    assert_int_equal(step_at(1, 1, &r), JS_CFI_BAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_toolchain_tables, setup_self),
        cmocka_unit_test_setup(test_toolchain_two_frames, setup_self),
        cmocka_unit_test_setup(test_toolchain_refusals, setup_self),
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_built_table),
        cmocka_unit_test(test_built_refused_rules),
        cmocka_unit_test(test_built_plt),
        cmocka_unit_test(test_built_corrupt),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    js_cfi_reset();
    return rc;
}

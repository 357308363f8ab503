/* unwind_cfi.c - see unwind_cfi.h.
 *
 * The formats are those of the x86-64 psABI's .eh_frame (DWARF 4 section 6.4 call-frame instructions, the LSB's
 * .eh_frame_hdr and pointer encodings). Every object registered here was checked to use them: a header of
 * version 1 whose search table is datarel|sdata4 pairs (initial location, FDE) sorted by location, CIEs of
 * version 1 or 3 with a "z" augmentation ("zR", "zPLR", "zRS", ...), code alignment 1, the return address in
 * column 16. The reader keeps three rules only: the CFA (rsp or rbp plus an offset), and where rbp and the
 * return address were saved (an offset from the CFA). Anything else about those three ends the step.
 */
#include "sample/unwind_cfi.h"

#include <stdatomic.h>
#include <string.h>

#define MAX_OBJECTS 8
#define MAX_OPS 4096    /* call-frame instructions interpreted for one step */
#define MAX_STATES 8    /* DW_CFA_remember_state nesting */
#define MAX_ENTRY (1u << 20) /* no CIE or FDE is larger */

/* Registered objects: written by js_cfi_add on a normal thread before handlers read them (nobj is published last). */
typedef struct {
    uintptr_t text_lo, text_hi; /* executable segments [lo, hi) */
    uintptr_t data_lo, data_hi; /* the read-only segment holding the header, the table, the CIEs and FDEs */
    uintptr_t hdr;              /* .eh_frame_hdr (the datarel base) */
    uintptr_t table;            /* (initial location, FDE) pairs, 8 bytes each */
    uint32_t count;
} cfi_object;

static cfi_object objs[MAX_OBJECTS];
static _Atomic int nobj;

/* ---- bounded reads ---------------------------------------------------------------------------------------- */

/* A cursor over [p, end) inside one object's data segment; any read past end sets bad and returns 0. */
typedef struct {
    uintptr_t p, end;
    int bad;
} cursor;

static uint8_t rd_u8(cursor *c)
{
    if (c->bad || c->p >= c->end) return c->bad = 1, 0;
    return *(const volatile uint8_t *)c->p++;
}

static uint64_t rd_fixed(cursor *c, unsigned n)
{
    uint64_t v = 0;
    if (c->bad || c->p > c->end || n > c->end - c->p) return c->bad = 1, 0;
    memcpy(&v, (const void *)c->p, n); /* little-endian */
    c->p += n;
    return v;
}

static uint64_t rd_uleb(cursor *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        uint8_t b = rd_u8(c);
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    return c->bad = 1, 0;
}

static int64_t rd_sleb(cursor *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        uint8_t b = rd_u8(c);
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (shift + 7 < 64 && (b & 0x40)) v |= ~(uint64_t)0 << (shift + 7);
            return (int64_t)v;
        }
    }
    return c->bad = 1, 0;
}

static void skip(cursor *c, uint64_t n)
{
    if (c->bad || c->p > c->end || n > c->end - c->p) c->bad = 1;
    else c->p += (uintptr_t)n;
}

/* DW_EH_PE_* pointer encodings: the value format (low nibble) and how it applies (high bits). */
enum { PE_ABSPTR = 0x00, PE_UDATA4 = 0x03, PE_UDATA8 = 0x04, PE_SDATA4 = 0x0b, PE_SDATA8 = 0x0c };
enum { PE_PCREL = 0x10, PE_DATAREL = 0x30 };

/* Size in bytes of an encoding's value, or 0 if unsupported. */
static unsigned enc_size(uint8_t enc)
{
    switch (enc & 0x0f) {
    case PE_UDATA4:
    case PE_SDATA4: return 4;
    case PE_ABSPTR:
    case PE_UDATA8:
    case PE_SDATA8: return 8;
    default: return 0;
    }
}

/* Read one encoded value; `apply` 0 for a plain number (an FDE's range). Unsupported encodings set bad. */
static uintptr_t rd_enc(cursor *c, uint8_t enc, uintptr_t datarel, int apply)
{
    uintptr_t at = c->p;
    unsigned n = enc_size(enc);
    if (!n || (enc & 0x80)) return c->bad = 1, 0; /* indirect or variable-length: not used by these objects */
    uint64_t v = rd_fixed(c, n);
    if ((enc & 0x0f) == PE_SDATA4) v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
    if (!apply) return (uintptr_t)v;
    switch (enc & 0x70) {
    case 0: return (uintptr_t)v;
    case PE_PCREL: return at + (uintptr_t)v;
    case PE_DATAREL: return datarel + (uintptr_t)v;
    default: return c->bad = 1, 0;
    }
}

/* ---- CIE and FDE ------------------------------------------------------------------------------------------ */

typedef struct {
    uint8_t fde_enc;        /* how the FDE's addresses are encoded ('R'; absptr without it) */
    int has_z;              /* FDEs carry an augmentation length */
    int64_t data_align;
    uintptr_t insns, end;   /* the initial instructions */
} cie_info;

/* Parse the CIE at a (bounded by the object's data segment); 0 or -1. */
static int parse_cie(const cfi_object *o, uintptr_t a, cie_info *ci)
{
    cursor c = {a, o->data_hi, 0};
    uint32_t len = (uint32_t)rd_fixed(&c, 4);
    if (c.bad || len == 0 || len == 0xffffffffu || len > MAX_ENTRY || len > o->data_hi - c.p) return -1;
    c.end = c.p + len;
    if (rd_fixed(&c, 4) != 0) return -1; /* CIE id */
    uint8_t version = rd_u8(&c);
    if (version != 1 && version != 3) return -1;
    char aug[8];
    int naug = 0;
    for (;;) {
        uint8_t ch = rd_u8(&c);
        if (c.bad || naug == (int)sizeof aug) return -1;
        aug[naug++] = (char)ch;
        if (!ch) break;
    }
    if (aug[0] && aug[0] != 'z') return -1; /* an old "eh" augmentation or something unknown */
    uint64_t code_align = rd_uleb(&c);
    ci->data_align = rd_sleb(&c);
    uint64_t ra = version == 1 ? rd_u8(&c) : rd_uleb(&c);
    if (c.bad || code_align != 1 || ci->data_align == 0 || ci->data_align < -16 || ci->data_align > 16 || ra != 16)
        return -1;
    ci->has_z = aug[0] == 'z';
    ci->fde_enc = PE_ABSPTR;
    if (ci->has_z) {
        uint64_t alen = rd_uleb(&c);
        uintptr_t after = c.p;
        skip(&c, alen);
        if (c.bad) return -1;
        cursor d = {after, c.p, 0};
        for (int i = 1; aug[i]; i++) {
            if (aug[i] == 'R') {
                ci->fde_enc = rd_u8(&d);
            } else if (aug[i] == 'L') {
                rd_u8(&d); /* LSDA encoding: the FDE's augmentation length skips the LSDA itself */
            } else if (aug[i] == 'P') {
                uint8_t penc = rd_u8(&d);
                rd_enc(&d, penc, 0, 0); /* the personality routine: not needed */
            } else if (aug[i] != 'S') {
                return -1; /* an augmentation of unknown size: what follows could not be trusted */
            }
        }
        if (d.bad) return -1;
    }
    ci->insns = c.p;
    ci->end = c.end;
    return 0;
}

/* ---- the rules ---------------------------------------------------------------------------------------------- */

enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };
enum { RULE_SAME = 0, RULE_UNDEF, RULE_OFFSET, RULE_OTHER };

typedef struct {
    uint8_t kind;
    int64_t off;
} rule;

/* The one CFA expression read: the GNU linker's for its lazy-binding PLT entries (`jmp *GOT; push index; jmp
 * PLT0`), CFA = rsp + 8, plus 8 once the entry's push has run (the pc's low four bits at 11 or more):
 * breg7 8; breg16 0; lit15; and; lit11; ge; lit3; shl; plus. */
static const uint8_t PLT_EXPR[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22};
enum { CFA_PLT = 100 };

typedef struct {
    int cfa_reg; /* REG_RSP, REG_RBP, CFA_PLT; -1 when it is another expression or another register */
    int64_t cfa_off;
    rule rbp, ra;
} row;

/* The rule a register op changes, or NULL for a register the step does not need. */
static rule *rule_of(row *r, uint64_t reg)
{
    return reg == REG_RBP ? &r->rbp : reg == REG_RA ? &r->ra : NULL;
}

/* DW_CFA_restore: the register's rule goes back to the CIE's. */
static void restore_rule(row *r, const row *init, uint64_t reg)
{
    if (reg == REG_RBP) r->rbp = init->rbp;
    else if (reg == REG_RA) r->ra = init->ra;
}

static void set_rule(row *r, uint64_t reg, uint8_t kind, int64_t off)
{
    rule *x = rule_of(r, reg);
    if (x) x->kind = kind, x->off = off;
}

/* Run call-frame instructions [c->p, c->end) from location *loc until the row for pc is reached (the next
 * advance would pass it). `init` is the CIE's row (for restore); NULL while running the CIE itself, where an
 * advance is an error. 0, or -1 on an unknown or corrupt instruction. */
static int run(cursor *c, const cie_info *ci, const cfi_object *o, row *r, const row *init, uintptr_t *loc,
               uintptr_t pc)
{
    row saved[MAX_STATES];
    int nsaved = 0;
    for (int ops = 0; c->p < c->end; ops++) {
        if (ops >= MAX_OPS) return -1;
        uint8_t op = rd_u8(c);
        uint64_t reg, delta = 0;
        int advance = 0;
        switch (op >> 6) {
        case 1: delta = op & 0x3f, advance = 1; break; /* DW_CFA_advance_loc */
        case 2: set_rule(r, op & 0x3f, RULE_OFFSET, (int64_t)rd_uleb(c) * ci->data_align); break; /* offset */
        case 3: /* DW_CFA_restore */
            if (!init) return -1;
            restore_rule(r, init, op & 0x3f);
            break;
        default:
            switch (op) {
            case 0x00: break; /* nop */
            case 0x01: {      /* set_loc */
                uintptr_t to = rd_enc(c, ci->fde_enc, o->hdr, 1);
                if (to < *loc) return -1;
                delta = to - *loc, advance = 1;
                break;
            }
            case 0x02: delta = rd_u8(c), advance = 1; break;          /* advance_loc1 */
            case 0x03: delta = rd_fixed(c, 2), advance = 1; break;    /* advance_loc2 */
            case 0x04: delta = rd_fixed(c, 4), advance = 1; break;    /* advance_loc4 */
            case 0x05:                                                /* offset_extended */
                reg = rd_uleb(c);
                set_rule(r, reg, RULE_OFFSET, (int64_t)rd_uleb(c) * ci->data_align);
                break;
            case 0x06: /* restore_extended */
                reg = rd_uleb(c);
                if (!init) return -1;
                restore_rule(r, init, reg);
                break;
            case 0x07: set_rule(r, rd_uleb(c), RULE_UNDEF, 0); break; /* undefined */
            case 0x08: set_rule(r, rd_uleb(c), RULE_SAME, 0); break;  /* same_value */
            case 0x09:                                                /* register */
                reg = rd_uleb(c);
                rd_uleb(c);
                set_rule(r, reg, RULE_OTHER, 0);
                break;
            case 0x0a: /* remember_state */
                if (nsaved == MAX_STATES) return -1;
                saved[nsaved++] = *r;
                break;
            case 0x0b: /* restore_state: the whole row, CFA included (what GCC's epilogue notes rely on) */
                if (nsaved == 0) return -1;
                *r = saved[--nsaved];
                break;
            case 0x0c: /* def_cfa */
                reg = rd_uleb(c);
                r->cfa_reg = reg == REG_RSP || reg == REG_RBP ? (int)reg : -1;
                r->cfa_off = (int64_t)rd_uleb(c);
                break;
            case 0x0d: /* def_cfa_register */
                reg = rd_uleb(c);
                r->cfa_reg = reg == REG_RSP || reg == REG_RBP ? (int)reg : -1;
                break;
            case 0x0e: r->cfa_off = (int64_t)rd_uleb(c); break; /* def_cfa_offset */
            case 0x0f: { /* def_cfa_expression */
                uint64_t n = rd_uleb(c);
                uintptr_t e = c->p;
                skip(c, n);
                r->cfa_reg = !c->bad && n == sizeof PLT_EXPR && !memcmp((const void *)e, PLT_EXPR, sizeof PLT_EXPR)
                                 ? CFA_PLT
                                 : -1;
                break;
            }
            case 0x10: /* expression */
            case 0x16: /* val_expression */
                reg = rd_uleb(c);
                skip(c, rd_uleb(c));
                set_rule(r, reg, RULE_OTHER, 0);
                break;
            case 0x11: /* offset_extended_sf */
                reg = rd_uleb(c);
                set_rule(r, reg, RULE_OFFSET, rd_sleb(c) * ci->data_align);
                break;
            case 0x12: /* def_cfa_sf */
                reg = rd_uleb(c);
                r->cfa_reg = reg == REG_RSP || reg == REG_RBP ? (int)reg : -1;
                r->cfa_off = rd_sleb(c) * ci->data_align;
                break;
            case 0x13: r->cfa_off = rd_sleb(c) * ci->data_align; break; /* def_cfa_offset_sf */
            case 0x14:                                                  /* val_offset */
            case 0x15:                                                  /* val_offset_sf */
                reg = rd_uleb(c);
                if (op == 0x14) rd_uleb(c);
                else rd_sleb(c);
                set_rule(r, reg, RULE_OTHER, 0);
                break;
            case 0x2e: rd_uleb(c); break; /* GNU_args_size */
            case 0x2f:                    /* GNU_negative_offset_extended */
                reg = rd_uleb(c);
                set_rule(r, reg, RULE_OFFSET, -(int64_t)rd_uleb(c) * ci->data_align);
                break;
            default: return -1;
            }
        }
        if (c->bad) return -1;
        if (advance) {
            if (!init) return -1; /* the CIE's instructions describe the entry: no advance there */
            if (delta > pc - *loc) return 0; /* the next row starts after pc: this one holds */
            *loc += (uintptr_t)delta;
        }
    }
    return 0;
}

/* ---- the step --------------------------------------------------------------------------------------------- */

/* The registered object whose code holds pc, or NULL. */
static const cfi_object *object_of(uintptr_t pc)
{
    int n = atomic_load_explicit(&nobj, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (pc >= objs[i].text_lo && pc < objs[i].text_hi) return &objs[i];
    return NULL;
}

/* The FDE whose range may hold pc (the last with an initial location <= pc), or 0. */
static uintptr_t fde_for(const cfi_object *o, uintptr_t pc)
{
    uint32_t lo = 0, hi = o->count;
    while (lo < hi) { /* first entry with a location > pc */
        uint32_t mid = lo + (hi - lo) / 2;
        int32_t loc;
        memcpy(&loc, (const void *)(o->table + (uintptr_t)mid * 8), 4);
        if (o->hdr + (uintptr_t)(intptr_t)loc <= pc) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return 0;
    int32_t fde;
    memcpy(&fde, (const void *)(o->table + (uintptr_t)(lo - 1) * 8 + 4), 4);
    return o->hdr + (uintptr_t)(intptr_t)fde;
}

/* Read the stack word at a, only inside the live stack. */
static int stack_word(const js_safe_range *st, uintptr_t a, uintptr_t *out)
{
    if (!js_safe_in(st, a, sizeof *out, sizeof *out)) return -1;
    *out = *(const volatile uintptr_t *)a;
    return 0;
}

/* The row in effect at pc inside the function the FDE at fde describes; JS_CFI_OK, NONE or BAD. */
static int row_at(const cfi_object *o, uintptr_t fde, uintptr_t pc, row *out)
{
    if (fde < o->data_lo || fde >= o->data_hi) return JS_CFI_BAD;
    cursor c = {fde, o->data_hi, 0};
    uint32_t len = (uint32_t)rd_fixed(&c, 4);
    if (c.bad || len < 8 || len == 0xffffffffu || len > MAX_ENTRY || len > o->data_hi - c.p) return JS_CFI_BAD;
    c.end = c.p + len;
    uintptr_t at = c.p;
    uint32_t back = (uint32_t)rd_fixed(&c, 4);
    if (back == 0 || back > at - o->data_lo) return JS_CFI_BAD; /* 0 would make this entry a CIE */
    cie_info ci;
    if (parse_cie(o, at - back, &ci) != 0) return JS_CFI_BAD;
    uintptr_t begin = rd_enc(&c, ci.fde_enc, o->hdr, 1);
    uintptr_t range = rd_enc(&c, ci.fde_enc, o->hdr, 0);
    if (c.bad) return JS_CFI_BAD;
    if (pc < begin || pc - begin >= range) return JS_CFI_NONE; /* between functions: no description */
    if (ci.has_z) skip(&c, rd_uleb(&c));
    if (c.bad) return JS_CFI_BAD;
    row init = {-1, 0, {RULE_SAME, 0}, {RULE_UNDEF, 0}};
    uintptr_t loc = begin;
    cursor ic = {ci.insns, ci.end, 0};
    if (run(&ic, &ci, o, &init, NULL, &loc, pc) != 0) return JS_CFI_BAD;
    *out = init;
    if (run(&c, &ci, o, out, &init, &loc, pc) != 0) return JS_CFI_BAD;
    return JS_CFI_OK;
}

int js_cfi_step(const js_safe_range *st, js_regs *r, int interrupted)
{
    uintptr_t pc = interrupted ? r->pc : r->pc - 1;
    const cfi_object *o = object_of(pc);
    if (!o) return JS_CFI_NONE;
    uintptr_t fde = fde_for(o, pc);
    if (!fde) return JS_CFI_NONE;
    row w;
    int rc = row_at(o, fde, pc, &w);
    if (rc != JS_CFI_OK) return rc;
    if (w.cfa_reg < 0 || w.ra.kind != RULE_OFFSET || w.rbp.kind == RULE_OTHER) return JS_CFI_BAD;
    uintptr_t base = w.cfa_reg == REG_RBP ? r->fp : r->sp;
    uintptr_t cfa = base + (uintptr_t)w.cfa_off, ret, fp = r->fp;
    if (w.cfa_reg == CFA_PLT) cfa = r->sp + 8 + ((r->pc & 15) >= 11 ? 8 : 0);
    if (cfa <= r->sp || cfa > st->hi) return JS_CFI_BAD; /* the caller's frame is above this one, on this stack */
    if (stack_word(st, cfa + (uintptr_t)w.ra.off, &ret) != 0) return JS_CFI_BAD;
    uintptr_t fp_slot = cfa + (uintptr_t)w.rbp.off;
    /* A save slot already below sp belongs to a frame torn down (`leave` ran; GCC keeps the rule to the `ret`):
     * rbp holds the caller's value again. */
    if (w.rbp.kind == RULE_OFFSET && fp_slot >= r->sp && stack_word(st, fp_slot, &fp) != 0) return JS_CFI_BAD;
    if (w.rbp.kind == RULE_UNDEF) fp = 0;
    r->pc = ret;
    r->sp = cfa;
    r->fp = fp;
    return JS_CFI_OK;
}

/* ---- registration ------------------------------------------------------------------------------------------ */

int js_cfi_add(uintptr_t base, const ElfW(Phdr) *ph, int phnum)
{
    int n = atomic_load_explicit(&nobj, memory_order_relaxed);
    if (n >= MAX_OBJECTS) return -1;
    cfi_object o;
    memset(&o, 0, sizeof o);
    o.text_lo = UINTPTR_MAX;
    for (int i = 0; i < phnum; i++)
        if (ph[i].p_type == PT_GNU_EH_FRAME) o.hdr = base + ph[i].p_vaddr;
    for (int i = 0; i < phnum; i++) {
        if (ph[i].p_type != PT_LOAD) continue;
        uintptr_t lo = base + ph[i].p_vaddr, hi = lo + ph[i].p_memsz;
        if (ph[i].p_flags & PF_X) {
            if (lo < o.text_lo) o.text_lo = lo;
            if (hi > o.text_hi) o.text_hi = hi;
        }
        if (o.hdr >= lo && o.hdr < hi && !(ph[i].p_flags & PF_W)) o.data_lo = lo, o.data_hi = hi;
    }
    if (!o.hdr || !o.data_hi || o.text_hi <= o.text_lo) return -1;
    cursor c = {o.hdr, o.data_hi, 0};
    uint8_t version = rd_u8(&c), ptr_enc = rd_u8(&c), count_enc = rd_u8(&c), table_enc = rd_u8(&c);
    if (c.bad || version != 1 || count_enc != PE_UDATA4 || table_enc != (PE_DATAREL | PE_SDATA4)) return -1;
    rd_enc(&c, ptr_enc, o.hdr, 1); /* where .eh_frame starts: the table is all this needs */
    uint64_t count = rd_fixed(&c, 4);
    if (c.bad || count == 0 || count > (o.data_hi - c.p) / 8) return -1;
    o.table = c.p;
    o.count = (uint32_t)count;
    objs[n] = o;
    atomic_store_explicit(&nobj, n + 1, memory_order_release);
    return 0;
}

void js_cfi_reset(void)
{
    atomic_store_explicit(&nobj, 0, memory_order_release);
}

/* The objects read in place: never unloaded while the VM runs. */
static const char *const PINNED[] = {"libjvm.so", "libc.so.6", "libm.so.6", "linux-vdso.so.1"};

/* dl_iterate_phdr callback: register the pinned objects. */
static int add_pinned(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    int *added = ctx;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    for (size_t i = 0; i < sizeof PINNED / sizeof PINNED[0]; i++)
        if (!strcmp(base, PINNED[i]) && js_cfi_add(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum) == 0)
            (*added)++;
    return 0;
}

int js_cfi_init(void)
{
    int n = atomic_load_explicit(&nobj, memory_order_relaxed);
    if (n) return n;
    int added = 0;
    dl_iterate_phdr(add_pinned, &added);
    return added;
}

/* native_dwarf.c - cstack=dwarf: native frames by the objects' DWARF unwind tables, through libunwind.
 *
 * libunwind's local unwinder finds unwind info through dl_iterate_phdr, which takes the loader's lock: a handler
 * that interrupted dlopen would wait forever. So this walker drives libunwind's "remote" unwinder on its own
 * process: the address space's accessors read the interrupted registers from the signal's ucontext, the thread's
 * live stack directly, unwind data from the copies native_objects.c made outside the handler, and anything else
 * through js_safe_read (a bad pointer costs a failed step, never a fault); find_proc_info searches those copied
 * .eh_frame_hdr tables. Caching is off (libunwind's caches take locks). What is left of libunwind's
 * own locking on this path is its pool of parsed CIEs: that lock is held with every signal blocked (libunwind's
 * default build, as Debian's), so a handler can only wait a few instructions for another running thread, never for
 * the thread it interrupted. Between a library's unload and the next table (a housekeeper round, 5-20 ms), a
 * library mapped at the same address would be unwound by the old one's copied tables: wrong frames, never a fault.
 */
#include "sample/native_walk.h"

#include <libunwind.h>
#include <stdatomic.h>
#include <string.h>
#include <ucontext.h>

#include "sample/codecache.h"
#include "sample/native_objects.h"
#include "sample/safe_read.h"
#include "sample/walker.h"

/* Exported by libunwind (the search its remote unwinders use) but not declared in its public headers. */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
                                              unw_proc_info_t *pi, int need_unwind_info, void *arg);

/* What the accessors of one walk read. */
typedef struct {
    const ucontext_t *uc;
    js_safe_range stack;       /* the interrupted thread's live stack, when known */
    const js_nobj_table *objs; /* pinned objects and their unwind tables */
    uintptr_t shadow[3];       /* the copied range read last and its offset (reads come in runs from one FDE) */
} walk_ctx;

/* libunwind's address space for this process, handed over once (js_native_dwarf_use) and kept for the process's
 * life: a handler may be using it at any time. */
static _Atomic(unw_addr_space_t) space;

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
    const walk_ctx *w = arg;
    const js_nobj *o = js_nobj_find(w->objs, (uintptr_t)ip);
    if (!o || !o->eh_table) return -UNW_ENOINFO;
    unw_dyn_info_t di;
    memset(&di, 0, sizeof di);
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = o->text_lo;
    di.end_ip = o->text_hi;
    di.u.rti.segbase = o->eh_hdr;
    di.u.rti.table_data = o->eh_table;
    di.u.rti.table_len = o->fde_count; /* in words: one 8-byte pair each */
    return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
    (void)as, (void)pi, (void)arg; /* libunwind frees what it parsed itself */
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
    (void)as, (void)addr, (void)arg;
    return -UNW_ENOINFO; /* no dynamically registered unwind info */
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
    (void)as;
    walk_ctx *w = arg;
    if (write) return -UNW_EREADONLYREG;
    uintptr_t a = (uintptr_t)addr;
    const void *src = NULL;
    if (a >= w->shadow[0] && a < w->shadow[1] && sizeof *val <= w->shadow[1] - a)
        src = (const void *)(a + w->shadow[2]); /* unwind data: from the copy */
    else if (w->stack.hi && js_safe_in(&w->stack, a, sizeof *val, 1))
        src = (const void *)a; /* the live stack */
    else
        src = js_nobj_copy_of(w->objs, a, sizeof *val, w->shadow);
    if (src) {
        memcpy(val, src, sizeof *val);
        return 0;
    }
    return js_safe_read(a, val, sizeof *val) == 0 ? 0 : -UNW_EINVAL;
}

/* ucontext register index of libunwind's x86-64 register number r, or -1. */
static int greg_of(unw_regnum_t r)
{
    static const int map[] = {
        [UNW_X86_64_RAX] = REG_RAX, [UNW_X86_64_RDX] = REG_RDX, [UNW_X86_64_RCX] = REG_RCX,
        [UNW_X86_64_RBX] = REG_RBX, [UNW_X86_64_RSI] = REG_RSI, [UNW_X86_64_RDI] = REG_RDI,
        [UNW_X86_64_RBP] = REG_RBP, [UNW_X86_64_RSP] = REG_RSP, [UNW_X86_64_R8] = REG_R8,
        [UNW_X86_64_R9] = REG_R9,   [UNW_X86_64_R10] = REG_R10, [UNW_X86_64_R11] = REG_R11,
        [UNW_X86_64_R12] = REG_R12, [UNW_X86_64_R13] = REG_R13, [UNW_X86_64_R14] = REG_R14,
        [UNW_X86_64_R15] = REG_R15, [UNW_X86_64_RIP] = REG_RIP,
    };
    return r >= 0 && r <= UNW_X86_64_RIP ? map[r] : -1;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t r, unw_word_t *val, int write, void *arg)
{
    (void)as;
    const walk_ctx *w = arg;
    int g = greg_of(r);
    if (write || g < 0) return -UNW_EBADREG;
    *val = (unw_word_t)w->uc->uc_mcontext.gregs[g];
    return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t r, unw_fpreg_t *val, int write, void *arg)
{
    (void)as, (void)r, (void)val, (void)write, (void)arg;
    return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
    (void)as, (void)c, (void)arg;
    return -UNW_EINVAL; /* a walk only reads */
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len, unw_word_t *off, void *arg)
{
    (void)as, (void)addr, (void)buf, (void)len, (void)off, (void)arg;
    return -UNW_ENOINFO; /* names are found at dump time (symbols.c) */
}

/* Fixed for the process's life: the address space made with them keeps a copy. */
static unw_accessors_t accessors = {find_proc_info, put_unwind_info, get_dyn_info_list_addr, access_mem,
                                    access_reg,     access_fpreg,    resume,                 get_proc_name};

static int dwarf_walk(const void *ucv, js_raw_frame *out, int max, int *in_java)
{
    const ucontext_t *uc = ucv;
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    *in_java = 0;
    if (js_codecache_contains(pc)) {
        *in_java = 1;
        return 0;
    }
    if (max <= 0) return 0;
    int n = 0;
    out[n++] = (js_raw_frame){.bci = 0, .kind = JS_RF_NATIVE_PC, .method = (const void *)pc};
    walk_ctx w = {uc, {0, 0}, js_nobj_enter(), {0, 0, 0}};
    unw_addr_space_t as = atomic_load(&space);
    unw_cursor_t c;
    if (!as || !w.objs) goto done;
    js_walker_stack_range((uintptr_t)uc->uc_mcontext.gregs[REG_RSP], &w.stack);
    if (unw_init_remote(&c, as, &w) < 0) goto done;
    for (uintptr_t ip = pc; n < max && js_nobj_find(w.objs, ip);) {
        unw_word_t next;
        if (unw_step(&c) <= 0 || unw_get_reg(&c, UNW_REG_IP, &next) < 0 || next < 4096) break;
        ip = (uintptr_t)next;
        if (js_codecache_contains(ip)) {
            *in_java = 1;
            break;
        }
        out[n++] = (js_raw_frame){.bci = 1, .kind = JS_RF_NATIVE_PC, .method = (const void *)ip};
    }
done:
    js_nobj_leave(w.objs);
    return n;
}

void *js_native_dwarf_accessors(void)
{
    return &accessors;
}

void js_native_dwarf_use(void *as)
{
    atomic_store(&space, (unw_addr_space_t)as);
}

const js_native_walker js_native_dwarf = {"dwarf", dwarf_walk};

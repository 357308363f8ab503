/* trap.c - see trap.h. */
#include "sample/trap.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "sample/safe_fmt.h"
#include "util/monotime.h"

#define INT3 0xcc
#define PAST_MAX 16 /* addresses trapped in earlier sessions: a late trap there is still run again, not passed on */
#define EFLAGS_RF 0x10000 /* resume flag: the next instruction's breakpoint does not fault */
#define DISARM_WAIT_NS 1000000000ull /* how long disarm waits for a trap handler that may write the code */
#define HW_MAX 256 /* functions a function event ever set a hardware breakpoint on in this process (kept for good) */

/* Process-wide: one SIGTRAP handler and one pair of breakpoints at a time (sessions are one at a time). */
static struct {
    _Atomic uintptr_t begin, end;
    uint8_t begin_byte, end_byte;        /* what int3 replaced */
    _Atomic int begin_set, end_set;      /* the int3 is in place there */
    _Atomic int armed, nostop, open;
    _Atomic int inside;                  /* trap handlers that may write begin/end's code (disarm waits for them) */
    _Atomic uint64_t start_ns;
    js_trap_window ring[JS_TRAP_WINDOWS]; /* written by the trap handler that closes a window */
    _Atomic uint64_t head, tail;          /* head: next to write; tail: next to take */
    _Atomic uint64_t lost;
    _Atomic uintptr_t past[PAST_MAX];
    int installed;
    struct sigaction old;
    /* hooks: functions whose calls are taken over (see js_trap_hook) */
    _Atomic uintptr_t hook_at[JS_TRAP_HOOKS];
    uint8_t hook_byte[JS_TRAP_HOOKS];
    _Atomic int hooks_on, nhooks;
    js_trap_hook_fn _Atomic hook_fn;
    /* function events: the hardware breakpoints set in this process, for good (see js_trap_guard_hw) */
    _Atomic uintptr_t hw_at[HW_MAX];
    _Atomic uint64_t hw_strays;
} T;

/* Write one code byte (the page is writable while armed). */
static void put_byte(uintptr_t at, uint8_t b)
{
    __atomic_store_n((uint8_t *)at, b, __ATOMIC_SEQ_CST);
}

/* 1 if pc is where a breakpoint of ours is or was. */
static int ours(uintptr_t pc)
{
    if (pc == atomic_load(&T.begin) || pc == atomic_load(&T.end)) return 1;
    for (int i = 0; i < PAST_MAX; i++)
        if (atomic_load(&T.past[i]) == pc) return 1;
    return 0;
}

/* A window closed by thread tid: into the ring, or counted as lost. */
static void record(uint64_t start, uint64_t end, int tid)
{
    uint64_t h = atomic_load(&T.head);
    if (h - atomic_load(&T.tail) >= JS_TRAP_WINDOWS) {
        atomic_fetch_add(&T.lost, 1);
        return;
    }
    T.ring[h % JS_TRAP_WINDOWS] = (js_trap_window){start, end, tid};
    atomic_store(&T.head, h + 1); /* one writer at a time: only the thread that took end_set */
}

/* Pass a trap that is not ours to the handler before ours (the default one ends the process, as it would have). */
static void pass_on(int signo, siginfo_t *si, void *uc)
{
    if (T.old.sa_flags & SA_SIGINFO) {
        if (T.old.sa_sigaction) T.old.sa_sigaction(signo, si, uc);
    } else if (T.old.sa_handler == SIG_IGN) {
        return;
    } else if (T.old.sa_handler != SIG_DFL) {
        T.old.sa_handler(signo);
    } else {
        signal(signo, SIG_DFL);
        raise(signo);
    }
}

/* A trap on a hooked function's first byte: the hook runs and the call returns at once (the pc and stack as after a
 * `ret`); once the hooks are off, the function's own first instruction (put back by then, or soon) runs. 1 if pc is
 * or was a hook's. */
static int on_hook(ucontext_t *uc, uintptr_t pc)
{
    for (int i = 0; i < atomic_load(&T.nhooks); i++) {
        if (pc != atomic_load(&T.hook_at[i])) continue;
        js_trap_hook_fn fn = atomic_load(&T.hook_fn);
        greg_t *g = uc->uc_mcontext.gregs;
        if (!atomic_load(&T.hooks_on) || !fn) {
            g[REG_RIP] = (greg_t)pc;
            return 1;
        }
        uintptr_t ret = *(const uintptr_t *)g[REG_RSP]; /* at a function's entry, the top of the stack */
        g[REG_RSP] += (greg_t)sizeof(uintptr_t);
        g[REG_RIP] = (greg_t)ret;
        fn(uc, i); /* in the caller, as if the call had returned: its stack walks from there */
        return 1;
    }
    return 0;
}

/* A debug trap that stopped at a guarded hardware breakpoint (a fault: the pc is still on the function's first
 * instruction, unlike int3's): the flags' RF bit lets that instruction run once without a second trap. 1 if so.
 * Only the codes the kernel gives a debug exception it does not own (a breakpoint hit, or no cause, taken for
 * icebp): int3's SI_KERNEL is handled below, and a kill, a single step or another tool's perf signal passes on. */
static int on_hw_stray(ucontext_t *uc, const siginfo_t *si)
{
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    if (si->si_code != TRAP_HWBKPT && si->si_code != TRAP_BRKPT) return 0;
    for (int i = 0; i < HW_MAX && atomic_load(&T.hw_at[i]); i++) {
        if (atomic_load(&T.hw_at[i]) != pc) continue;
        uc->uc_mcontext.gregs[REG_EFL] |= EFLAGS_RF;
        atomic_fetch_add(&T.hw_strays, 1);
        return 1;
    }
    return 0;
}

static void on_trap(int signo, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    int saved = errno;
    if (on_hw_stray(uc, si)) {
        errno = saved;
        return;
    }
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] - 1; /* int3 leaves the pc after itself */
    if (on_hook(uc, pc)) {
        errno = saved;
        return;
    }
    if (!ours(pc)) {
        pass_on(signo, si, ucv);
        errno = saved;
        return;
    }
    atomic_fetch_add(&T.inside, 1); /* before armed is read: a disarm that cleared it waits for this handler */
    if (!atomic_load(&T.armed)) {
        /* disarmed (or being disarmed): the code is, or is about to be, put back by disarm; write nothing */
    } else if (pc == atomic_load(&T.begin) && atomic_exchange(&T.begin_set, 0)) { /* the window opens */
        atomic_store(&T.start_ns, js_mono_ns());
        atomic_store(&T.open, 1);
        put_byte(pc, T.begin_byte);
        uintptr_t end = atomic_load(&T.end);
        if (end) {
            put_byte(end, INT3);
            atomic_store(&T.end_set, 1);
        }
    } else if (pc == atomic_load(&T.end) && atomic_exchange(&T.end_set, 0)) { /* it closes */
        atomic_store(&T.open, 0);
        record(atomic_load(&T.start_ns), js_mono_ns(), (int)syscall(SYS_gettid));
        put_byte(pc, T.end_byte);
        put_byte(atomic_load(&T.begin), INT3);
        atomic_store(&T.begin_set, 1);
    }
    atomic_fetch_sub(&T.inside, 1);
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)pc; /* run the instruction that was there (put back by now, or soon) */
    errno = saved;
}

/* Make the page(s) of [at, at + 1) writable (w) or not. */
static int code_writable(uintptr_t at, int w)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t p = at & ~(uintptr_t)(page - 1);
    return mprotect((void *)p, (size_t)page, PROT_READ | PROT_EXEC | (w ? PROT_WRITE : 0));
}

/* The SIGTRAP handler, installed once for the process's life; 0 or -1 with err. */
static int install(char *err, size_t errlen)
{
    if (T.installed) return 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTRAP, &sa, &T.old) != 0) {
        js_safe_fmt(err, errlen, "sigaction(SIGTRAP): %s", js_safe_errstr(errno));
        return -1;
    }
    T.installed = 1;
    return 0;
}

/* 1 if code address at shares its page with a breakpoint other than the hooks (begin/end armed). */
static int page_of_window(uintptr_t at)
{
    uintptr_t page = at & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1), b = atomic_load(&T.begin), e = atomic_load(&T.end);
    long size = sysconf(_SC_PAGESIZE);
    return atomic_load(&T.armed) && ((b && (b & ~(uintptr_t)(size - 1)) == page) || (e && (e & ~(uintptr_t)(size - 1)) == page));
}

/* 1 if code address at shares its page with an armed hook. */
static int page_of_hook(uintptr_t at)
{
    long size = sysconf(_SC_PAGESIZE);
    uintptr_t page = at & ~(uintptr_t)(size - 1);
    for (int i = 0; atomic_load(&T.hooks_on) && i < JS_TRAP_HOOKS; i++) {
        uintptr_t h = atomic_load(&T.hook_at[i]);
        if (h && (h & ~(uintptr_t)(size - 1)) == page) return 1;
    }
    return 0;
}

/* Remember code address at for good among the breakpoints of earlier sessions (a trap there may come late). */
static void remember(uintptr_t at)
{
    for (int i = 0; i < PAST_MAX; i++) {
        uintptr_t zero = 0;
        if (atomic_load(&T.past[i]) == at) return;
        if (atomic_compare_exchange_strong(&T.past[i], &zero, at)) return;
    }
}

int js_trap_guard_hw(uintptr_t at, char *err, size_t errlen)
{
    if (!at) {
        js_safe_fmt(err, errlen, "guard: no address");
        return -1;
    }
    if (install(err, errlen) != 0) return -1;
    for (int i = 0; i < HW_MAX; i++) {
        uintptr_t zero = 0;
        if (atomic_load(&T.hw_at[i]) == at || atomic_compare_exchange_strong(&T.hw_at[i], &zero, at)) return 0;
    }
    js_safe_fmt(err, errlen, "guard: %d functions already had a hardware breakpoint in this process", HW_MAX);
    return -1;
}

uint64_t js_trap_hw_strays(void)
{
    return atomic_load(&T.hw_strays);
}

int js_trap_hook(const uintptr_t *at, int n, js_trap_hook_fn fn, char *err, size_t errlen)
{
    if (n <= 0 || n > JS_TRAP_HOOKS || !fn || atomic_load(&T.hooks_on)) {
        js_safe_fmt(err, errlen, "hooks: bad request or already set");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (!at[i] || at[i] == atomic_load(&T.begin) || at[i] == atomic_load(&T.end)) {
            js_safe_fmt(err, errlen, "hooks: a function is already a profiling window's begin or end");
            return -1;
        }
        if (*(volatile uint8_t *)at[i] == INT3) { /* another agent's breakpoint: its byte is not the code's */
            js_safe_fmt(err, errlen, "a hooked function already starts with a breakpoint (another agent's?)");
            return -1;
        }
    }
    if (install(err, errlen) != 0) return -1;
    for (int i = 0; i < n; i++)
        if (code_writable(at[i], 1) != 0) {
            js_safe_fmt(err, errlen, "cannot make the code of a hooked function writable: %s", js_safe_errstr(errno));
            for (int k = 0; k <= i; k++)
                if (!page_of_window(at[k])) code_writable(at[k], 0);
            return -1;
        }
    atomic_store(&T.hook_fn, fn);
    for (int i = 0; i < n; i++) {
        T.hook_byte[i] = *(volatile uint8_t *)at[i];
        atomic_store(&T.hook_at[i], at[i]);
        remember(at[i]); /* after unhook a late trap there runs the function itself (ours() below) */
    }
    atomic_store(&T.nhooks, n);
    atomic_store(&T.hooks_on, 1);
    for (int i = 0; i < n; i++) put_byte(at[i], INT3);
    return 0;
}

void js_trap_unhook(void)
{
    if (!atomic_exchange(&T.hooks_on, 0)) return;
    int n = atomic_load(&T.nhooks);
    for (int i = 0; i < n; i++) put_byte(atomic_load(&T.hook_at[i]), T.hook_byte[i]); /* all back before any page
                                                                                        * is closed: they may share one */
    for (int i = 0; i < n; i++)
        if (!page_of_window(atomic_load(&T.hook_at[i]))) code_writable(atomic_load(&T.hook_at[i]), 0);
}

int js_trap_arm(uintptr_t begin, uintptr_t end, int nostop, char *err, size_t errlen)
{
    if (!begin || begin == end) {
        js_safe_fmt(err, errlen, "begin and end symbols should not resolve to the same address");
        return -1;
    }
    for (int i = 0; atomic_load(&T.hooks_on) && i < atomic_load(&T.nhooks); i++)
        if (begin == atomic_load(&T.hook_at[i]) || end == atomic_load(&T.hook_at[i])) {
            js_safe_fmt(err, errlen, "begin/end: the function is hooked by tlab in this session");
            return -1;
        }
    if (*(volatile uint8_t *)begin == INT3 || (end && *(volatile uint8_t *)end == INT3)) {
        js_safe_fmt(err, errlen, "begin/end: the function starts with a breakpoint already (a debugger's?)");
        return -1;
    }
    if (install(err, errlen) != 0) return -1;
    if (code_writable(begin, 1) != 0 || (end && code_writable(end, 1) != 0)) {
        js_safe_fmt(err, errlen, "cannot make the code of begin/end writable: %s", js_safe_errstr(errno));
        if (!page_of_hook(begin)) code_writable(begin, 0);
        return -1;
    }
    remember(begin); /* for good (a trap may be delivered late) */
    if (end) remember(end);
    T.begin_byte = *(volatile uint8_t *)begin;
    T.end_byte = end ? *(volatile uint8_t *)end : 0;
    atomic_store(&T.begin, begin);
    atomic_store(&T.end, end);
    atomic_store(&T.open, 0);
    atomic_store(&T.nostop, nostop);
    atomic_store(&T.lost, 0);
    atomic_store(&T.tail, atomic_load(&T.head));
    atomic_store(&T.armed, 1);
    put_byte(begin, INT3);
    atomic_store(&T.begin_set, 1);
    return 0;
}

int js_trap_disarm(void)
{
    if (!atomic_exchange(&T.armed, 0)) return 0;
    uintptr_t begin = atomic_load(&T.begin), end = atomic_load(&T.end);
    /* A handler past its look at armed may still move the breakpoints: wait for it (it runs a few instructions, but
     * may be preempted), then put both bytes back whatever the flags say. */
    uint64_t until = js_mono_ns() + DISARM_WAIT_NS;
    int quiet;
    while (!(quiet = atomic_load(&T.inside) == 0) && js_mono_ns() < until) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    atomic_store(&T.begin_set, 0);
    atomic_store(&T.end_set, 0);
    put_byte(begin, T.begin_byte);
    if (end) put_byte(end, T.end_byte);
    atomic_store(&T.open, 0);
    if (!quiet) return -1; /* the pages stay writable: a handler still inside must not fault on its write */
    if (!page_of_hook(begin)) code_writable(begin, 0);
    if (end && !page_of_hook(end)) code_writable(end, 0);
    return 0;
}

int js_trap_keep(void)
{
    return !atomic_load_explicit(&T.armed, memory_order_relaxed) || atomic_load_explicit(&T.nostop, memory_order_relaxed) ||
           atomic_load_explicit(&T.open, memory_order_relaxed);
}

int js_trap_take(js_trap_window *out, int max)
{
    int n = 0;
    for (uint64_t t = atomic_load(&T.tail); n < max && t < atomic_load(&T.head); t++) out[n++] = T.ring[t % JS_TRAP_WINDOWS];
    atomic_fetch_add(&T.tail, (uint64_t)n);
    return n;
}

uint64_t js_trap_lost(void)
{
    return atomic_load(&T.lost);
}

/* sampler.c - see sampler.h. */
#include "sample/sampler.h"
#include "sample/budget.h"
#include "sample/trap.h"
#include "sample/walk_features.h"
#include "sample/walk_vmx.h"
#include "walker_int.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <ucontext.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sample/safe_fmt.h"
#include "sample/native_walk.h"
#include "sample/schedcount.h"
#include "sample/safe_read.h"
#include "sample/stats.h"
#include "sample/vmentry.h"
#include "util/monotime.h"

/* Frame buffers claimed by handlers with a non-blocking try-lock; a handler that finds every
 * buffer busy drops its sample (counted). */
#define STRIPES 16
#define KSTACK_FRAMES 32 /* kernel frames taken per sample */

/* One mapping per arm: the claim flags, then STRIPES * depth frames. A handler takes the block once
 * and claims and releases in it, so a handler that disarm gave up on releases its claim in the block it
 * claimed in, which is then abandoned with it (never reused nor unmapped), not in the next arm's. */
typedef struct {
    _Atomic int busy[STRIPES];
    int depth;                       /* frames per stripe */
} frame_block;
#define BLOCK_HEADER ((sizeof(frame_block) + 63) & ~(size_t)63)

static js_raw_frame *block_frames(frame_block *b, int k)
{
    return (js_raw_frame *)((char *)b + BLOCK_HEADER) + (size_t)k * (size_t)b->depth;
}
#define WAIT_STEP_NS 1000000L /* 1 ms */
#define WAIT_NS 1000000000ULL /* bounded waits: 1 s on the clock (not a count of naps: a loaded machine stretches them) */

#define SC memory_order_seq_cst
#define RLX memory_order_relaxed

/* Process-wide handler state (a signal handler has no context pointer). */
static struct {
    _Atomic int armed;
    _Atomic int inside;              /* handlers between entry and exit */
    js_signal_source src[JS_SAMPLER_MAX_SOURCES];
    int nsrc;
    const js_walker *walker;
    const js_native_walker *_Atomic cstack; /* native frames (cstack=fp|dwarf), or NULL */
    _Atomic int record_cpu;                /* record-cpu: a cpu sample's root frame is its CPU; 0 off, 1 the
                                            * handler's CPU, 2 + N always CPU N (target-cpu=N) */
    js_store *stores[2];             /* the current store and the one before a swap */
    _Atomic int cur;                 /* index into stores of the store handlers write to */
    _Atomic int users[2];            /* handlers inside stores[i] */
    js_evring *ring;                 /* streamed events (JFR), or NULL */
    int depth;
    long long interval_ns;
    int signo;
    struct sigaction old;            /* disposition before ours: foreign signals go there */
    int shared;                      /* 1 if old is another program's handler for our signal */
    frame_block *_Atomic block;      /* the frame buffers and their claims */
    size_t block_bytes;              /* its size; 0 once abandoned to a handler (never unmapped) */
    pthread_key_t tid_key;           /* each thread's tid once its first handler asked (see my_thread) */
    _Atomic int tid_key_ok;          /* 1 if tid_key was made and lives in the thread descriptor */
} S;

/* The calling thread's slot in the thread table (NULL if it has none) and, in *tid, its tid. gettid is a system
 * call (0.1-0.6 us on these VMs, a tenth of a short handler), so a thread's handler keeps the tid under a pthread
 * key: glibc holds the first 32 keys' values in the thread descriptor, and getting and setting them is a load and a
 * store, never an allocation (with a later key the tid is asked every time). A cached tid is trusted only if its
 * slot names this thread's descriptor (pthread_self): a handler that ran in a dying thread after glibc cleared its
 * values would leave its tid to the next thread given the same descriptor. Signal-safe. */
static js_thread *my_thread(int *tid)
{
    uintptr_t self = (uintptr_t)pthread_self();
    int ok = atomic_load_explicit(&S.tid_key_ok, memory_order_acquire);
    intptr_t cached = ok ? (intptr_t)pthread_getspecific(S.tid_key) : 0;
    if (cached > 0) {
        js_thread *t = js_threads_find((int)cached);
        if (t && atomic_load_explicit(&t->self, RLX) == self) {
            *tid = (int)cached;
            return t;
        }
    }
    *tid = (int)syscall(SYS_gettid);
    js_thread *t = js_threads_find(*tid);
    if (t && ok) {
        atomic_store_explicit(&t->self, self, RLX);
        if (cached != *tid) pthread_setspecific(S.tid_key, (void *)(intptr_t)*tid);
    }
    return t;
}

/* Wait (normal threads only), napping 1 ms at a time, until *count is 0 or WAIT_NS have passed; the count then. */
static int wait_zero(_Atomic int *count)
{
    uint64_t until = js_mono_ns() + WAIT_NS;
    while (atomic_load_explicit(count, SC) > 0 && js_mono_ns() < until) {
        struct timespec ts = {0, WAIT_STEP_NS};
        nanosleep(&ts, NULL);
    }
    return atomic_load_explicit(count, SC);
}

/* Claim a free frame buffer of block b, starting at a tid-dependent stripe; -1 if all are busy. */
static int claim_stripe(frame_block *b, int tid)
{
    for (int i = 0; i < STRIPES; i++) {
        int k = (tid + i) % STRIPES, expected = 0;
        if (atomic_compare_exchange_strong_explicit(&b->busy[k], &expected, 1, memory_order_acquire, RLX)) return k;
    }
    return -1;
}

/* Walk the interrupted thread into buf (depth frames at most); on failure one pseudo-frame naming
 * the error. A stack that fills depth - 1 frames is taken as cut there: a "[truncated]"
 * pseudo-frame ends it. */
static int walk(void *uc, js_raw_frame *buf, int depth, js_kstack_fn kstack, intptr_t handle)
{
    int room = depth > 1 ? depth - 1 : 1, nat = 0, in_java = 1;
    const js_native_walker *nw = atomic_load_explicit(&S.cstack, memory_order_acquire);
    if (nw && room > 1) {
        /* Kernel frames (from the engine), then native frames (leaf side), then the Java frames they were called
         * from. A thread with no Java frames at all (GC, JIT compilers, native threads) is its native stack alone. */
        if (kstack) {
            uintptr_t ips[KSTACK_FRAMES];
            int kn = kstack(handle, ips, room / 4 < KSTACK_FRAMES ? room / 4 : KSTACK_FRAMES);
            for (int i = 0; i < kn; i++)
                buf[nat++] = (js_raw_frame){.bci = i > 0, .kind = JS_RF_NATIVE_PC, .method = (const void *)ips[i]};
        }
        nat += nw->walk(uc, buf + nat, room / 2, &in_java);
    }
    int n = S.walker->walk(uc, buf + nat, room - nat); /* also when the native chain broke before Java code */
    if (n > 0 && nat + n == room && depth > 1) {
        buf[room].bci = JS_WALK_TRUNCATED;
        buf[room].kind = JS_RF_ERROR;
        buf[room].method = NULL;
        return room + 1;
    }
    if (n > 0) return js_features_apply(uc, buf, js_vmx_splice(uc, nw, buf, nat, n, room), room);
    if (nat > 0 && (n == JS_WALK_NO_ENV || n == JS_WALK_NO_JAVA_FRAME)) /* a native stack alone */
        return js_features_apply(uc, buf, nat, room);
    js_stats_walk_error(n);
    if (nat >= room) nat = room - 1;
    buf[nat] = (js_raw_frame){.bci = n, .kind = JS_RF_ERROR, .method = NULL}; /* why the Java part is missing */
    return nat + 1;
}

/* Enter the current store: count in, then confirm it is still current (see sampler.h). */
static int enter_store(void)
{
    for (;;) {
        int k = atomic_load_explicit(&S.cur, SC);
        atomic_fetch_add_explicit(&S.users[k], 1, SC);
        if (atomic_load_explicit(&S.cur, SC) == k) return k;
        atomic_fetch_sub_explicit(&S.users[k], 1, memory_order_release);
    }
}

/* Hand a signal that is not ours to the handler installed before ours, if any. */
static void chain(int signo, siginfo_t *si, void *uc)
{
    if (S.old.sa_flags & SA_SIGINFO) {
        if (S.old.sa_sigaction) S.old.sa_sigaction(signo, si, uc);
    } else if (S.old.sa_handler != SIG_DFL && S.old.sa_handler != SIG_IGN) {
        S.old.sa_handler(signo);
    }
}

/* 1 if the signal interrupted a system call that the thread goes back into when the handler returns: the kernel
 * restarts it (the pc is on the `syscall` instruction, 0f 05) or makes it return EINTR (the pc just after it, rax
 * -EINTR), which is how a signal interrupts a blocking call (futex, nanosleep, poll, read, ...) and the caller's
 * loop calls it again. A call that had already completed is not one: its thread runs on. Reads only pc's page. */
static int blocked_in_syscall(const void *uc)
{
    const greg_t *g = ((const ucontext_t *)uc)->uc_mcontext.gregs;
    uintptr_t pc = (uintptr_t)g[REG_RIP];
    unsigned char b[4];
    uintptr_t lo = pc - 2;
    if ((lo & ~(uintptr_t)4095) == ((pc + 1) & ~(uintptr_t)4095)) memcpy(b, (const void *)lo, 4); /* one page: pc's own */
    else if (js_safe_read(lo, b, 4) != 0) return 0;
    if (b[2] == 0x0f && b[3] == 0x05) return 1; /* to be restarted */
    return b[0] == 0x0f && b[1] == 0x05 && g[REG_RAX] == -EINTR;
}

/* Store frames[0..n) for thread t (tid) and stream the event; 0, or -1 if dropped (counted by the caller). */
static int store_event(const js_raw_frame *buf, int n, js_thread *t, int tid, js_ring_event *ev, uint32_t *full_gen)
{
    uint32_t serial = t ? atomic_load_explicit(&t->serial, RLX) : 0;
    uint32_t key = (uint32_t)ev->kind << JS_SAMPLER_KIND_SHIFT | (serial & JS_SAMPLER_SERIAL_MASK);
    int sk = enter_store();
    js_store *store = S.stores[sk];
    uint32_t id = js_store_add(store, buf, n, key, ev->weight);
    uint32_t g = js_store_gen(store), gen = g & JS_SAMPLER_GEN_MASK;
    if (id) {
        ev->trace = gen << JS_SAMPLER_GEN_SHIFT | id;
        ev->gen = g;
        ev->thread = serial;
        /* Streamed while still counted into the store: a rotation waits for us, so the writer takes this event
         * before the store it names is emptied. */
        if (S.ring) js_evring_put(S.ring, tid, ev);
    }
    atomic_fetch_sub_explicit(&S.users[sk], 1, memory_order_release);
    if (!id) return -1;
    if (full_gen) *full_gen = g;
    return 0;
}

/* After a wall sample of thread t: what the wall engine may credit again without a signal while the thread stays
 * where it is (key, in the store of full generation gen, of state st). Only a sample taken in a blocking system
 * call the thread returns to (blocked), with its switch-in count now; a sample of a running thread never is: it
 * may leave that stack using hardly any CPU (a loop ending, then a sleep). */
static void remember_wall(js_thread *t, int blocked, uint32_t key, uint32_t gen, uint16_t st)
{
    uint64_t sw = blocked ? js_sched_switch_ins(0) : 0;
    atomic_store_explicit(&t->wall_state, st, RLX);
    atomic_store_explicit(&t->wall_gen, gen, RLX);
    atomic_store_explicit(&t->wall_switches, sw, RLX);
    atomic_store_explicit(&t->wall_cpu_ns, 0, RLX);
    atomic_store_explicit(&t->wall_key, sw ? key : 0, memory_order_release);
}

/* Walk, store and stream one sample of weight w and kind `kind` for thread t. */
static void take_sample(void *uc, js_thread *t, int tid, uint64_t t0, uint64_t w, int kind, js_kstack_fn kstack)
{
    frame_block *b = atomic_load_explicit(&S.block, memory_order_acquire);
    int k = b ? claim_stripe(b, tid) : -1;
    if (k < 0) {
        js_stats_dropped(w);
        return;
    }
    js_raw_frame *buf = block_frames(b, k);
    int cpu_frame = kind == JS_SK_EXEC && b->depth > 1 && atomic_load_explicit(&S.record_cpu, RLX);
    int n = walk(uc, buf, b->depth - cpu_frame, kstack, t ? atomic_load_explicit(&t->handle, RLX) : -1);
    js_ring_event ev = {.ticks = t0, .weight = w, .kind = (uint8_t)kind};
    if (kind == JS_SK_WALL && n == 1 && buf[0].kind == JS_RF_ERROR &&
        (buf[0].bci == JS_WALK_NO_ENV || buf[0].bci == JS_WALK_NO_JAVA_FRAME)) {
        /* Wall profiles Java code: a thread without Java frames is left out (for good when it is not a Java
         * thread at all: the wall engine then skips it; while it stays blocked when it is one). */
        if (t && buf[0].bci == JS_WALK_NO_ENV) atomic_store_explicit(&t->unsampled, 2, RLX);
        else if (t) remember_wall(t, blocked_in_syscall(uc), JS_WALL_KEY_NOTHING, 0, 0);
        atomic_store_explicit(&b->busy[k], 0, memory_order_release);
        return;
    }
    if (kind == JS_SK_WALL) ev.state = blocked_in_syscall(uc) ? JS_WS_SYSCALL : JS_WS_RUNNING;
    uint32_t gen = 0;
    int cut = n > 1 && buf[n - 1].kind == JS_RF_ERROR && buf[n - 1].bci == JS_WALK_TRUNCATED;
    if (cpu_frame) { /* sched_getcpu reads the thread's rseq area (or the vDSO): no lock, no allocation */
        int mode = atomic_load_explicit(&S.record_cpu, RLX);
        int cpu = mode >= 2 ? mode - 2 : sched_getcpu();
        js_raw_frame c = {.bci = cpu < 0 ? -1 : cpu, .kind = JS_RF_CPU, .method = NULL};
        if (cut) buf[n] = buf[n - 1], buf[n - 1] = c, n++; /* the root of the frames kept; the marker stays last */
        else buf[n++] = c;
    }
    int rc = store_event(buf, n, t, k, &ev, &gen);
    atomic_store_explicit(&b->busy[k], 0, memory_order_release);
    if (rc != 0) {
        js_stats_dropped(w);
        return;
    }
    if (kind == JS_SK_WALL && t) remember_wall(t, ev.state == JS_WS_SYSCALL, ev.trace, gen, ev.state);
    js_stats_sample(w);
    if (cut) js_stats_truncated(w); /* by weight, as the outputs count the stack */
}

void js_sampler_trap_alloc(void *uc, const void *klass, int outside, uint64_t size, uint64_t w)
{
    int saved_errno = errno;
    atomic_fetch_add_explicit(&S.inside, 1, SC);
    int armed = atomic_load_explicit(&S.armed, SC); /* before the block: an armed session's block is current */
    frame_block *b = armed ? atomic_load_explicit(&S.block, memory_order_acquire) : NULL;
    int tid, k = -1, rc = -1;
    js_thread *t = my_thread(&tid);
    if (b && b->depth > 2 && (k = claim_stripe(b, tid)) >= 0) {
        js_raw_frame *buf = block_frames(b, k);
        buf[0] = (js_raw_frame){.bci = outside ? JS_KLASS_OUTSIDE_TLAB : JS_KLASS_NEW_TLAB, .kind = JS_RF_KLASS,
                                .method = klass};
        int n = walk(uc, buf + 1, b->depth - 1, NULL, -1);
        if (n > 0 && buf[1].kind == JS_RF_NATIVE_PC) buf[1].bci = 1; /* after the faked return: a return address */
        int kept = js_vmentry_trim(buf + 1, n); /* the allocator, the JFR sampler and this trap's function */
        if (kept >= 0) n = kept;
        js_ring_event ev = {.ticks = js_mono_ns(), .weight = w, .value = size, .kind = JS_SK_ALLOC,
                            .sub = outside ? JS_ALLOC_OUTSIDE : JS_ALLOC_NEW_TLAB};
        rc = store_event(buf, n + 1, t, tid, &ev, NULL); /* the class frame alone if nothing was left */
        atomic_store_explicit(&b->busy[k], 0, memory_order_release);
    }
    if (armed) js_stats_event(JS_SK_ALLOC, rc == 0, w);
    atomic_fetch_sub_explicit(&S.inside, 1, SC);
    errno = saved_errno;
}

/* A sample the budget does not let thread t walk: its weight is kept, on a "[throttled]" stack of its own (never
 * given to another stack), and counted. */
static void take_throttled(js_thread *t, int tid, uint64_t t0, uint64_t w)
{
    js_raw_frame f = {.bci = JS_WALK_THROTTLED, .kind = JS_RF_ERROR, .method = NULL};
    js_ring_event ev = {.ticks = t0, .weight = w, .kind = JS_SK_EXEC};
    if (store_event(&f, 1, t, tid, &ev, NULL) != 0) {
        js_stats_dropped(w);
        return;
    }
    js_stats_throttled(w);
    js_stats_sample(w);
}

int js_sampler_repeat_wall(js_thread *t, uint64_t weight, uint64_t ticks)
{
    int rc = -1;
    uint32_t key = atomic_load_explicit(&t->wall_key, memory_order_acquire);
    atomic_fetch_add_explicit(&S.inside, 1, SC);
    if (key && atomic_load_explicit(&S.armed, SC)) {
        int sk = enter_store();
        js_store *store = S.stores[sk];
        uint32_t serial = atomic_load_explicit(&t->serial, RLX);
        if (js_store_gen(store) == atomic_load_explicit(&t->wall_gen, RLX)) /* the very store, not one 64 later */
            rc = js_store_add_again(store, key & ((1u << JS_SAMPLER_GEN_SHIFT) - 1),
                                    (uint32_t)JS_SK_WALL << JS_SAMPLER_KIND_SHIFT | (serial & JS_SAMPLER_SERIAL_MASK),
                                    weight);
        if (rc == 0 && S.ring) { /* streamed before leaving the store, as store_event does */
            js_ring_event ev = {.ticks = ticks, .weight = weight, .trace = key, .thread = serial,
                                .state = atomic_load_explicit(&t->wall_state, RLX), .kind = JS_SK_WALL};
            js_evring_put(S.ring, atomic_load_explicit(&t->tid, RLX), &ev);
        }
        atomic_fetch_sub_explicit(&S.users[sk], 1, memory_order_release);
        if (rc == 0) js_stats_sample(weight);
    }
    atomic_fetch_sub_explicit(&S.inside, 1, SC);
    return rc;
}

int js_sampler_record(const js_raw_frame *frames, int n, int tid, const js_sample_info *info)
{
    int rc = -1;
    atomic_fetch_add_explicit(&S.inside, 1, SC);
    if (atomic_load_explicit(&S.armed, SC) && n > 0) {
        js_ring_event ev = {.ticks = info->ticks, .weight = info->weight, .value = info->value, .cls = info->cls,
                            .state = info->absolute, .kind = (uint8_t)info->kind, .sub = info->sub};
        rc = store_event(frames, n, js_threads_find(tid), tid, &ev, NULL);
        js_stats_event(info->kind, rc == 0, info->weight);
    }
    atomic_fetch_sub_explicit(&S.inside, 1, SC);
    return rc;
}

static void handler(int signo, siginfo_t *si, void *uc)
{
    int saved_errno = errno;
    atomic_fetch_add_explicit(&S.inside, 1, SC);
    uint64_t t0 = js_mono_ns(), w = 0;
    int tid;
    js_thread *t = my_thread(&tid);
    int chain_it = 0;
    if (!atomic_load_explicit(&S.armed, SC)) {
        chain_it = 1; /* not sampling: nothing of this signal is ours */
        js_stats_unarmed_signal();
        goto out;
    }
    int kind = 0;
    js_kstack_fn kstack = NULL;
    for (int i = 0; i < S.nsrc && !w; i++)
        if ((w = S.src[i].weight(si, t)) != 0)
            kind = S.src[i].kind, kstack = S.src[i].kstack;
    if (w == 0) {
        js_stats_foreign_signal();
        chain_it = 1;
        goto out;
    }
    if ((kind == JS_SK_WALL && (!t || (w = atomic_exchange_explicit(&t->wall_due, 0, RLX)) == 0)) ||
        !js_trap_keep()) { /* ours, but its weight went with an earlier signal (or the thread left the table), or
                            * outside the begin=/end= window */
        js_stats_unsampled_signal();
        goto out;
    }
    int budgeted = kind == JS_SK_EXEC && t; /* wall signals are paced by the wall engine, not budgeted */
    js_budget_mark mark = {0, 0};
    if (budgeted && js_budget_enter(t, S.interval_ns, &mark)) {
        take_throttled(t, tid, t0, w);
        goto out;
    }
    take_sample(uc, t, tid, t0, w, kind, kstack);
    uint64_t took = js_mono_ns() - t0;
    js_stats_handler_ns(took); /* on the clock: what the thread waited, hypervisor exits included */
    if (budgeted) js_budget_charge(t, S.interval_ns, &mark, took);
out:
    atomic_fetch_sub_explicit(&S.inside, 1, SC);
    if (chain_it) chain(signo, si, uc);
    errno = saved_errno;
}

/* 1 if sig has no handler or ours. */
static int signal_free(int signo)
{
    struct sigaction cur;
    if (sigaction(signo, NULL, &cur) != 0) return 0;
    if (!(cur.sa_flags & SA_SIGINFO) && (cur.sa_handler == SIG_DFL || cur.sa_handler == SIG_IGN)) return 1;
    return (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == handler;
}

/* Make the tid key (once per process, never deleted: handlers may read it at any time). */
static void make_tid_key(void)
{
    if (pthread_key_create(&S.tid_key, NULL) != 0) return;
    if ((unsigned long)S.tid_key < 32) atomic_store_explicit(&S.tid_key_ok, 1, memory_order_release);
    else pthread_key_delete(S.tid_key); /* its values would live in memory setspecific allocates */
}

int js_sampler_install(int want_sigprof_only, char *err, size_t errlen)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_tid_key);
    if (S.signo) {
        if (want_sigprof_only && (S.signo != SIGPROF || S.shared)) {
            js_safe_fmt(err, errlen, "SIGPROF is owned by another handler (jsampler uses signal %d)", S.signo);
            return -1;
        }
        return S.signo;
    }
    const int candidates[] = {SIGPROF, SIGVTALRM, SIGRTMIN + 6, SIGRTMIN + 7};
    int n = want_sigprof_only ? 1 : (int)(sizeof candidates / sizeof candidates[0]);
    int chosen = -1;
    for (int i = 0; i < n && chosen < 0; i++)
        if (signal_free(candidates[i])) chosen = candidates[i];
    if (chosen < 0 && want_sigprof_only) {
        js_safe_fmt(err, errlen, "SIGPROF is owned by another handler");
        return -1;
    }
    if (chosen < 0) { /* every candidate taken: share SIGPROF, passing on what is not ours */
        chosen = SIGPROF;
        S.shared = 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < (int)(sizeof candidates / sizeof candidates[0]); i++) sigaddset(&sa.sa_mask, candidates[i]);
    if (sigaction(chosen, &sa, &S.old) != 0) {
        js_safe_fmt(err, errlen, "sigaction(%d): %s", chosen, js_safe_errstr(errno));
        return -1;
    }
    S.signo = chosen;
    return chosen;
}

int js_sampler_arm(const js_signal_source *src, int nsrc, const js_walker *w, js_store *s, js_evring *ring,
                   int depth, long long interval_ns, char *err, size_t errlen)
{
    if (nsrc < 0 || nsrc > JS_SAMPLER_MAX_SOURCES) {
        js_safe_fmt(err, errlen, "%d signal sources (at most %d)", nsrc, JS_SAMPLER_MAX_SOURCES);
        return -1;
    }
    /* A handler that the last disarm gave up on may still be inside and read the settings below: never rewrite
     * them under it. Once none is, a handler entering sees armed == 0 until they are all written. */
    if (wait_zero(&S.inside) > 0) {
        js_safe_fmt(err, errlen, "a sampling signal handler of the last session has not returned after 1 s; "
                    "not starting while it runs");
        return -1;
    }
    size_t need = BLOCK_HEADER + (size_t)STRIPES * (size_t)depth * sizeof(js_raw_frame);
    frame_block *b = atomic_load_explicit(&S.block, RLX);
    if (need > S.block_bytes) {
        void *m = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            js_safe_fmt(err, errlen, "cannot reserve %zu bytes of frame buffers: %s", need, js_safe_errstr(errno));
            return -1;
        }
        if (S.block_bytes) munmap(b, S.block_bytes);
        b = m;
        S.block_bytes = need;
    }
    for (int i = 0; i < STRIPES; i++) atomic_store_explicit(&b->busy[i], 0, RLX);
    b->depth = depth;
    atomic_store_explicit(&S.block, b, memory_order_release);
    for (int i = 0; i < nsrc; i++) S.src[i] = src[i];
    S.nsrc = nsrc;
    S.walker = w;
    S.stores[0] = S.stores[1] = s;
    atomic_store_explicit(&S.cur, 0, SC);
    S.ring = ring;
    S.depth = depth;
    S.interval_ns = interval_ns;
    atomic_store_explicit(&S.armed, 1, SC);
    return 0;
}

void js_sampler_set_cstack(const js_native_walker *w)
{
    atomic_store(&S.cstack, w);
}

void js_sampler_set_record_cpu(int on, int fixed_cpu)
{
    atomic_store(&S.record_cpu, !on ? 0 : fixed_cpu >= 0 ? fixed_cpu + 2 : 1);
}

js_store *js_sampler_swap_store(js_store *next)
{
    int old = atomic_load_explicit(&S.cur, SC);
    S.stores[1 - old] = next;
    atomic_store_explicit(&S.cur, 1 - old, SC);
    return wait_zero(&S.users[old]) > 0 ? NULL : S.stores[old];
}

int js_sampler_disarm(void)
{
    atomic_store_explicit(&S.armed, 0, SC);
    int left = wait_zero(&S.inside);
    if (left > 0) {
        /* A handler may still write into the frame buffers and release its claim there: leave the block to
         * it (a late handler that takes it finds its claims intact), map a new one next time. */
        S.block_bytes = 0;
    }
    return left;
}

int js_sampler_idle(void)
{
    return atomic_load_explicit(&S.inside, SC) == 0;
}

int js_sampler_shared(void)
{
    return S.shared;
}

void js_sampler_uninstall(void)
{
    if (!S.signo) return;
    sigaction(S.signo, &S.old, NULL);
    S.signo = 0;
    S.shared = 0;
}

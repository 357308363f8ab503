/* test_native_dwarf.c - cstack=dwarf without a JVM: walks from signal handlers through code built without frame
 * pointers, bad registers, a library unloaded under the walker, and a signal storm while another thread loads and
 * unloads libraries (the walker never takes the loader's lock). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/native_prep.h"
#include "core/symbols.h"
#include "sample/native_objects.h"
#include "sample/native_walk.h"

#define UNUSED __attribute__((unused))
#define NOFP __attribute__((noinline, optimize("omit-frame-pointer")))
#define DEPTH 32
#define MAX_WALKS 4096
#define LIB "libthread_db.so.1" /* a real library no test loads otherwise (its debugger hooks bound lazily) */

/* ---- a call chain built without frame pointers ---- */

static _Atomic int spin_stop;
static volatile uint64_t sink;

NOFP static uint64_t spin_c(uint64_t x)
{
    while (!atomic_load_explicit(&spin_stop, memory_order_relaxed))
        for (int i = 0; i < 1000; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x;
}

NOFP static uint64_t spin_b(uint64_t x)
{
    uint64_t r = spin_c(x ^ 0x55);
    sink = r;
    return r + 1; /* work after the call: no tail call */
}

NOFP static uint64_t spin_a(uint64_t x)
{
    uint64_t r = spin_b(x + 3);
    sink = r;
    return r + 2;
}

NOFP static void *spinner(void *arg)
{
    (void)arg;
    sink = spin_a((uint64_t)(uintptr_t)&arg);
    return NULL;
}

/* ---- walks taken in a signal handler, kept raw (named after the storm) ---- */

typedef struct {
    int n;
    uintptr_t pc[DEPTH];
} walk_rec;

static walk_rec *walks;
static _Atomic int nwalks;
static const js_native_walker *handler_walker;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si;
    int k = atomic_fetch_add(&nwalks, 1);
    if (k >= MAX_WALKS) return;
    js_raw_frame f[DEPTH];
    int in_java, n = handler_walker->walk(uc, f, DEPTH, &in_java);
    walks[k].n = n;
    for (int i = 0; i < n; i++) walks[k].pc[i] = (uintptr_t)f[i].method - (i > 0); /* a return address: its call */
}

static void install(const js_native_walker *w)
{
    handler_walker = w;
    atomic_store(&nwalks, 0);
    memset(walks, 0, MAX_WALKS * sizeof *walks);
    tu_install(SIGURG, on_signal, NULL);
}

static void nap_us(long us)
{
    struct timespec ts = {0, us * 1000L};
    nanosleep(&ts, NULL);
}

/* Signal thread t count times, us apart, waiting for each walk. */
static void signal_thread(pthread_t t, int count, long us)
{
    for (int i = 0; i < count; i++) {
        int before = atomic_load(&nwalks);
        pthread_kill(t, SIGURG);
        for (int w = 0; w < 2000 && atomic_load(&nwalks) == before; w++) nap_us(50);
        nap_us(us);
    }
}

/* 1 if walk w names, from its leaf, spin_c, spin_b, spin_a and spinner in that order. */
static int full_chain(const walk_rec *w)
{
    static const char *const want[] = {"spin_c", "spin_b", "spin_a", "spinner"};
    int j = 0;
    for (int i = 0; i < w->n && j < 4; i++) {
        char name[256];
        js_symbols_name(w->pc[i], name, sizeof name, NULL);
        if (strcmp(name, want[j]) == 0) j++;
        else if (j > 0) return 0; /* a frame between them: the chain is broken */
    }
    return j == 4;
}

/* Walks whose leaf is in spin_c, and of them those with the whole chain. */
static void tally(int *leaf, int *chain)
{
    int n = atomic_load(&nwalks);
    *leaf = *chain = 0;
    for (int i = 0; i < n && i < MAX_WALKS; i++) {
        char name[256];
        if (walks[i].n < 1) continue;
        js_symbols_name(walks[i].pc[0], name, sizeof name, NULL);
        if (strcmp(name, "spin_c") != 0) continue;
        (*leaf)++;
        *chain += full_chain(&walks[i]);
    }
}

static int setup(void **state UNUSED)
{
    walks = calloc(MAX_WALKS, sizeof *walks);
    return walks ? 0 : -1;
}

static int teardown(void **state UNUSED)
{
    free(walks);
    return 0;
}

/* From a signal handler, dwarf finds every frame of a chain built without frame pointers, in order, down to the
 * thread's function; fp is shown beside it for comparison (not asserted: it depends on how rbp happens to be used). */
static void test_chain_without_frame_pointers(void **state UNUSED)
{
    char err[256] = "";
    assert_int_equal(js_native_prepare(&js_native_dwarf, err, sizeof err), 0);
    pthread_t t;
    atomic_store(&spin_stop, 0);
    assert_int_equal(pthread_create(&t, NULL, spinner, NULL), 0);
    nap_us(20000);
    int leaf[2], chain[2];
    const js_native_walker *w[2] = {&js_native_dwarf, &js_native_fp};
    for (int i = 0; i < 2; i++) {
        install(w[i]);
        signal_thread(t, 200, 200);
        tally(&leaf[i], &chain[i]);
    }
    atomic_store(&spin_stop, 1);
    pthread_join(t, NULL);
    print_message("dwarf: %d of %d walks in spin_c have the whole chain; fp: %d of %d\n", chain[0], leaf[0], chain[1],
                  leaf[1]);
    assert_true(leaf[0] >= 150);
    assert_int_equal(chain[0], leaf[0]);
}

/* Bad registers end the walk, never fault (the process would die here if a read faulted): a stack pointer at an
 * unmapped page, a stack of garbage, a pc outside any object (then the walk is that pc alone). */
static void test_bad_registers(void **state UNUSED)
{
    char err[256] = "";
    assert_int_equal(js_native_prepare(&js_native_dwarf, err, sizeof err), 0);
    js_raw_frame f[DEPTH];
    int in_java;
    ucontext_t uc;
    memset(&uc, 0, sizeof uc);
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)&spin_b + 8;
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)0x1000;
    uc.uc_mcontext.gregs[REG_RBP] = (greg_t)0x10;
    assert_true(js_native_dwarf.walk(&uc, f, DEPTH, &in_java) >= 1);
    assert_int_equal(in_java, 0);
    size_t len = 1 << 16;
    unsigned char *junk = malloc(len);
    assert_non_null(junk);
    for (size_t i = 0; i < len; i++) junk[i] = (unsigned char)(i * 131 + 7);
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)(uintptr_t)(junk + len / 2);
    assert_true(js_native_dwarf.walk(&uc, f, DEPTH, &in_java) >= 1);
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)(junk + 64); /* no object's code */
    assert_int_equal(js_native_dwarf.walk(&uc, f, DEPTH, &in_java), 1);
    free(junk);
}

/* A library loaded after the first build is seen by the next prepare; once unloaded, a walk starting at its old
 * entry point still finds the caller: the FDE comes from the table's copy (the library's own pages are gone, so a
 * read of them would fail and the step with it); the next prepare forgets it. */
static void test_library_loaded_and_unloaded(void **state UNUSED)
{
    char err[256] = "";
    assert_int_equal(js_native_prepare(&js_native_dwarf, err, sizeof err), 0);
    int unw0, all0, unw1, all1, unw2, all2;
    size_t bytes;
    js_nobj_counts(&unw0, &all0, &bytes);
    void *h = dlopen(LIB, RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        print_message("skipped: %s cannot be loaded here (%s)\n", LIB, dlerror());
        skip();
    }
    void *fn = dlsym(h, "td_init");
    assert_non_null(fn);
    assert_int_equal(js_native_prepare(&js_native_dwarf, err, sizeof err), 0);
    js_nobj_counts(&unw1, &all1, &bytes);
    assert_true(all1 > all0 && unw1 > unw0);
    const js_nobj_table *t = js_nobj_enter();
    const js_nobj *o = js_nobj_find(t, (uintptr_t)fn);
    assert_non_null(o);
    assert_true(o->eh_table != 0);
    js_nobj_leave(t);
    assert_int_equal(dlclose(h), 0);
    assert_null(dlopen(LIB, RTLD_LAZY | RTLD_NOLOAD)); /* really unmapped */
    ucontext_t uc;
    memset(&uc, 0, sizeof uc);
    uint64_t stack[64];
    memset(stack, 0, sizeof stack);
    uintptr_t ret = (uintptr_t)&spin_b + 16; /* a return address the step must find at [rsp] (CFA - 8 at entry) */
    stack[8] = ret;
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)fn;
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)(uintptr_t)&stack[8];
    js_raw_frame f[DEPTH];
    int in_java;
    assert_int_equal(js_native_dwarf.walk(&uc, f, 2, &in_java), 2);
    assert_ptr_equal(f[1].method, (const void *)ret);
    assert_int_equal(js_native_prepare(&js_native_dwarf, err, sizeof err), 0);
    js_nobj_counts(&unw2, &all2, &bytes);
    assert_int_equal(all2, all0);
    assert_int_equal(unw2, unw0);
    print_message("objects' code segments: %d, %d with unwind tables, %zu bytes of unwind data copied\n", all2, unw2,
                  bytes);
}

static _Atomic int churn_stop;

/* Load and unload a library, preparing after each, until told to stop. */
static void *churner(void *arg)
{
    int *rounds = arg;
    char err[256];
    while (!atomic_load(&churn_stop)) {
        void *h = dlopen(LIB, RTLD_LAZY | RTLD_LOCAL);
        js_native_prepare(&js_native_dwarf, err, sizeof err);
        if (!h) break;
        dlclose(h);
        js_native_prepare(&js_native_dwarf, err, sizeof err);
        (*rounds)++;
    }
    return NULL;
}

/* Signals to a spinning thread and to a thread inside dlopen, dlclose and the table builds, for a second and a half:
 * no deadlock (the handler never takes the loader's lock), no fault, and the spinner's chain whole every time. */
static void test_storm_with_library_churn(void **state UNUSED)
{
    char err[256] = "";
    assert_int_equal(js_native_prepare(&js_native_dwarf, err, sizeof err), 0);
    install(&js_native_dwarf);
    pthread_t s, c;
    int rounds = 0;
    atomic_store(&spin_stop, 0);
    atomic_store(&churn_stop, 0);
    assert_int_equal(pthread_create(&s, NULL, spinner, NULL), 0);
    assert_int_equal(pthread_create(&c, NULL, churner, &rounds), 0);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int sent = 0;
    do {
        pthread_kill(sent % 2 ? c : s, SIGURG);
        sent++;
        nap_us(300);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) < 1500000000L && sent < MAX_WALKS);
    atomic_store(&churn_stop, 1);
    pthread_join(c, NULL);
    atomic_store(&spin_stop, 1);
    pthread_join(s, NULL);
    int leaf, chain;
    tally(&leaf, &chain);
    print_message("%d signals, %d walks, %d library load/unload rounds; %d of %d spinner walks whole\n", sent,
                  atomic_load(&nwalks), rounds, chain, leaf);
    assert_true(rounds >= 3);
    assert_true(leaf > 100);
    assert_int_equal(chain, leaf);
}

/* The table's publication: a table a handler is inside is never displaced; once it is left, the next publication
 * hands it back to be freed. (Run last: it leaves the current table empty.) */
static void test_publish_waits_for_handlers(void **state UNUSED)
{
    js_nobj_table t[4];
    memset(t, 0, sizeof t);
    js_nobj_table *ev = (js_nobj_table *)1;
    const js_nobj_table *cur = js_nobj_enter(); /* the table the tests above built, if any */
    js_nobj_leave(cur);
    assert_int_equal(js_nobj_publish(&t[0], &ev), 0);
    js_native_free_table(ev); /* the table before the current one */
    assert_int_equal(js_nobj_publish(&t[1], &ev), 0);
    assert_ptr_equal(ev, cur ? cur : NULL); /* t[1] took the slot t[0] did not */
    js_native_free_table(ev);
    const js_nobj_table *in = js_nobj_enter();
    assert_ptr_equal(in, &t[1]);
    assert_int_equal(js_nobj_publish(&t[2], &ev), 0); /* into t[0]'s slot: nobody inside */
    assert_ptr_equal(ev, &t[0]);
    assert_int_equal(js_nobj_publish(&t[3], &ev), -1); /* t[1]'s slot: a handler is still inside */
    assert_ptr_equal(js_nobj_enter(), &t[2]);
    js_nobj_leave(&t[2]);
    js_nobj_leave(in);
    assert_int_equal(js_nobj_publish(&t[3], &ev), 0);
    assert_ptr_equal(ev, &t[1]);
    assert_ptr_equal(js_nobj_enter(), &t[3]);
    js_nobj_leave(&t[3]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_without_frame_pointers),
        cmocka_unit_test(test_bad_registers),
        cmocka_unit_test(test_library_loaded_and_unloaded),
        cmocka_unit_test(test_storm_with_library_churn),
        cmocka_unit_test(test_publish_waits_for_handlers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

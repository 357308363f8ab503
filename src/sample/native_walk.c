/* native_walk.c - cstack=fp: native frames by the rbp chain (see native_walk.h). */
#include "sample/native_walk.h"

#include <ucontext.h>

#include "sample/codecache.h"
#include "sample/safe_read.h"
#include "sample/walker.h"

#define MAX_SPAN (8u << 20) /* a frame pointer further than this above sp is not this stack's */

/* Read the two words at fp (saved rbp, return address): directly inside st, else through the kernel. */
static int frame_words(const js_safe_range *st, uintptr_t fp, uintptr_t w[2])
{
    if (st->hi && js_safe_in(st, fp, 2 * sizeof(uintptr_t), sizeof(uintptr_t))) {
        w[0] = *(const volatile uintptr_t *)fp;
        w[1] = *(const volatile uintptr_t *)(fp + sizeof(uintptr_t));
        return 0;
    }
    return js_safe_read(fp, w, 2 * sizeof(uintptr_t));
}

static int fp_walk(const void *uc, js_raw_frame *out, int max, int *in_java)
{
    const greg_t *g = ((const ucontext_t *)uc)->uc_mcontext.gregs;
    uintptr_t pc = (uintptr_t)g[REG_RIP], sp = (uintptr_t)g[REG_RSP], fp = (uintptr_t)g[REG_RBP];
    *in_java = 0;
    if (js_codecache_contains(pc)) {
        *in_java = 1;
        return 0;
    }
    js_safe_range st = {0, 0};
    js_walker_stack_range(sp, &st);
    int n = 0;
    if (max > 0) out[n++] = (js_raw_frame){.bci = 0, .kind = JS_RF_NATIVE_PC, .method = (const void *)pc};
    uintptr_t low = sp;
    while (n < max) {
        uintptr_t w[2];
        if (fp < low || fp - sp > MAX_SPAN || (fp & (sizeof(uintptr_t) - 1)) || frame_words(&st, fp, w) != 0) break;
        uintptr_t ret = w[1];
        if (ret < 4096) break;
        if (js_codecache_contains(ret)) {
            *in_java = 1;
            break;
        }
        out[n++] = (js_raw_frame){.bci = 1, .kind = JS_RF_NATIVE_PC, .method = (const void *)ret};
        if (w[0] <= fp) break; /* frames only go up the stack */
        low = fp + 2 * sizeof(uintptr_t);
        fp = w[0];
    }
    return n;
}

const js_native_walker js_native_fp = {"fp", fp_walk};

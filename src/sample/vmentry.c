/* vmentry.c - see vmentry.h. */
#include "sample/vmentry.h"

#include <stdatomic.h>
#include <string.h>

/* Process-wide like libjvm's code: written once before n is published, read-only afterwards. */
static struct {
    uintptr_t ranges[JS_VMENTRY_MAX][2];
    _Atomic int n;
} R;

void js_vmentry_set(const uintptr_t (*ranges)[2], int n)
{
    if (atomic_load(&R.n) > 0 || n <= 0) return; /* once: a handler may be reading */
    if (n > JS_VMENTRY_MAX) n = JS_VMENTRY_MAX;
    int k = 0;
    for (int i = 0; i < n; i++) { /* sorted by start; overlapping ones (aliases, nested symbols) merged */
        if (k > 0 && ranges[i][0] < R.ranges[k - 1][1]) {
            if (ranges[i][1] > R.ranges[k - 1][1]) R.ranges[k - 1][1] = ranges[i][1];
            continue;
        }
        R.ranges[k][0] = ranges[i][0];
        R.ranges[k][1] = ranges[i][1];
        k++;
    }
    atomic_store_explicit(&R.n, k, memory_order_release);
}

int js_vmentry_count(void)
{
    return atomic_load_explicit(&R.n, memory_order_acquire);
}

/* 1 if code address pc lies in an entry function. */
static int contains(uintptr_t pc, int n)
{
    int lo = 0, hi = n;
    while (lo < hi) { /* the first range starting above pc */
        int mid = (lo + hi) / 2;
        if (R.ranges[mid][0] <= pc) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 && pc < R.ranges[lo - 1][1];
}

int js_vmentry_trim(js_raw_frame *f, int n)
{
    int nr = atomic_load_explicit(&R.n, memory_order_acquire), last = -1;
    for (int i = 0; nr > 0 && i < n && f[i].kind == JS_RF_NATIVE_PC; i++) /* a return address is named at pc - 1 */
        if (contains((uintptr_t)f[i].method - (f[i].bci ? 1 : 0), nr)) last = i;
    if (last < 0) return -1;
    memmove(f, f + last + 1, (size_t)(n - last - 1) * sizeof *f);
    return n - last - 1;
}

/* walker_agct.c - stack walker over HotSpot's AsyncGetCallTrace.
 *
 * AsyncGetCallTrace walks the calling thread from the signal's ucontext and writes
 * {lineno(bci), jmethodID} pairs; js_raw_frame has the same layout for those two fields
 * (the 4 padding bytes are our `kind`), so it writes straight into the store's frame type.
 */
#include "sample/walker.h"

#include <dlfcn.h>
#include <jni.h>
#include <stddef.h>

#include "sample/safe_fmt.h"

typedef struct {
    jint lineno;
    jmethodID method_id;
} agct_frame;

typedef struct {
    JNIEnv *env_id;
    jint num_frames;
    agct_frame *frames;
} agct_trace;

_Static_assert(sizeof(agct_frame) == sizeof(js_raw_frame), "frame layouts differ");
_Static_assert(offsetof(agct_frame, method_id) == offsetof(js_raw_frame, method), "method offset differs");
_Static_assert(offsetof(agct_frame, lineno) == offsetof(js_raw_frame, bci), "bci offset differs");

typedef void (*agct_fn)(agct_trace *, jint, void *);

/* Resolved once at start, read by handlers. */
static agct_fn agct;

static int agct_init(char *err, size_t errlen)
{
    if (agct) return 0;
    agct = (agct_fn)dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    if (!agct) {
        void *h = dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD);
        if (h) agct = (agct_fn)dlsym(h, "AsyncGetCallTrace");
    }
    if (!agct) {
        js_safe_fmt(err, errlen, "AsyncGetCallTrace not found in this JVM (HotSpot is required)");
        return -1;
    }
    return 0;
}

/* Signal-safe. */
static int agct_walk(void *ucontext, void *env, js_raw_frame *frames, int max)
{
    agct_trace trace = {(JNIEnv *)env, 0, (agct_frame *)frames};
    agct(&trace, max, ucontext);
    int n = trace.num_frames;
    for (int i = 0; i < n; i++) {
        if (frames[i].bci == -3) frames[i].kind = JS_RF_NATIVE;
        else frames[i].kind = frames[i].method ? JS_RF_JAVA : JS_RF_NULL_ID;
    }
    return n;
}

const js_walker js_walker_agct = {
    .name = "AsyncGetCallTrace",
    .init = agct_init,
    .walk = agct_walk,
};

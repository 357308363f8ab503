/* status.c - see status.h. */
#include "core/status.h"

const char *js_strerror(js_status st)
{
    switch (st) {
    case JS_OK: return "ok";
    case JS_ERR_ARGS: return "bad arguments";
    case JS_ERR_STATE: return "wrong profiler state";
    case JS_ERR_ENGINE: return "no sampling engine available";
    case JS_ERR_IO: return "output error";
    case JS_ERR_UNSUPPORTED: return "not supported";
    }
    return "unknown error";
}

/* walker.c - names of stack-walk failures (shared by all walkers). */
#include "sample/walker.h"

/* Pseudo-frame name shown in outputs for a walker error code. */
const char *js_walk_error_name(int code)
{
    switch (code) {
    case JS_WALK_NO_JAVA_FRAME: return "[no_Java_frame]";
    case JS_WALK_NO_CLASS_LOAD: return "[no_class_load]";
    case JS_WALK_GC_ACTIVE: return "[GC_active]";
    case JS_WALK_UNKNOWN_NOT_JAVA: return "[unknown_not_Java]";
    case JS_WALK_NOT_WALKABLE_NOT_JAVA: return "[not_walkable_not_Java]";
    case JS_WALK_UNKNOWN_JAVA: return "[unknown_Java]";
    case JS_WALK_NOT_WALKABLE_JAVA: return "[not_walkable_Java]";
    case JS_WALK_UNKNOWN_STATE: return "[unknown_state]";
    case JS_WALK_THREAD_EXIT: return "[thread_exit]";
    case JS_WALK_DEOPT: return "[deopt]";
    case JS_WALK_SAFEPOINT: return "[safepoint]";
    case JS_WALK_NO_ENV: return "[not_Java_thread]";
    case JS_WALK_TRUNCATED: return "[truncated]";
    case JS_WALK_THROTTLED: return "[throttled]";
    default: return "[unknown_error]";
    }
}

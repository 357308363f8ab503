/* codecache.h - find the HotSpot code blob that holds a pc, from a signal handler.
 *
 * Uses the layout in vmlayout.h. Every address is checked before it is read: the code heaps'
 * committed ranges bound the segment map and the blobs, a blob's name is read only where it lies
 * in libjvm's mapped image, and any inconsistency (a freed or half-written blob) ends the lookup with a
 * negative code instead of a read.
 */
#ifndef JS_CODECACHE_H
#define JS_CODECACHE_H

#include <stdint.h>

typedef enum {
    JS_BLOB_NMETHOD = 1,     /* compiled Java method ("nmethod", "native nmethod") */
    JS_BLOB_INTERPRETER = 2, /* the template interpreter */
    JS_BLOB_STUB = 3         /* everything else: vtable/itable stubs, adapters, runtime stubs */
} js_blob_kind;

typedef struct {
    uintptr_t start, end;            /* the blob */
    uintptr_t code_begin, code_end;  /* its instructions */
    int frame_size;                  /* in words, <= 0 if none */
    int frame_complete;              /* offset from code_begin after which the frame is built, -1 never */
    js_blob_kind kind;
    uintptr_t method;                /* nmethod: its Method*, else 0 */
    const char *name;                /* HotSpot's name for the blob (a string in libjvm), or NULL */
} js_blob;

enum {
    JS_CC_FOUND = 1,
    JS_CC_OUTSIDE = 0,   /* pc is not in the code cache */
    JS_CC_BAD = -1       /* in the code cache, but the blob could not be read consistently */
};

/* Signal-safe: 1 if blob b has built its frame at pc (pc is at or past its frame-complete offset). */
static inline int js_blob_frame_built(const js_blob *b, uintptr_t pc)
{
    return b->frame_complete >= 0 && pc >= b->code_begin + (unsigned)b->frame_complete;
}

/* Signal-safe. Look pc up; JS_CC_FOUND with *b filled, or JS_CC_OUTSIDE / JS_CC_BAD. */
int js_codecache_find(uintptr_t pc, js_blob *b);

/* Signal-safe: 1 if pc lies in the code cache's reserved range (a cheap first test). */
int js_codecache_contains(uintptr_t pc);

/* Normal thread, after js_vmlayout_init: note where libjvm is mapped (blob names point there).
 * 0 or -1. Tests may instead give the range directly. */
int js_codecache_init(void);
void js_codecache_set_names_range(uintptr_t lo, uintptr_t hi);

#endif

/* codenames.h - names of the code the JVM generates outside any library: its stubs ("vtable stub", "itable stub",
 * "jbyte_disjoint_arraycopy", ...), as JVMTI's DynamicCodeGenerated events name them.
 *
 * The agent adds every region the VM reports (and, after a late attach, those JVMTI replays); the symbol namer asks
 * here for a pc outside every loaded object. Regions are only added (the VM keeps its stubs for its lifetime); at
 * most JS_CODENAMES_MAX are kept, names cut at JS_CODENAME_LEN. Thread-safe (one mutex); normal threads only.
 */
#ifndef JS_CODENAMES_H
#define JS_CODENAMES_H

#include <stddef.h>
#include <stdint.h>

#define JS_CODENAMES_MAX 65536
#define JS_CODENAME_LEN 96

/* Remember that [start, start + size) holds the generated code called name. 0, or -1 if the table is full or the
 * region empty. */
int js_codenames_add(uintptr_t start, size_t size, const char *name);
/* The name of the narrowest region holding pc into buf, and its start into *start: 0; -1 if no region holds pc. */
int js_codenames_find(uintptr_t pc, char *buf, size_t len, uintptr_t *start);
/* Forget every region (tests). */
void js_codenames_clear(void);

#endif

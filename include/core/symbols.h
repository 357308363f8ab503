/* symbols.h - names for native code addresses, from the ELF symbol tables of the loaded objects.
 *
 * Objects are found with dl_iterate_phdr (refreshed when an address falls outside every object known so far,
 * e.g. a library loaded later); an object's function symbols (.symtab when present, else .dynsym) are read from
 * its file the first time one of its addresses is named, and kept sorted. C++ names are demangled when the
 * process has a demangler (__cxa_demangle, e.g. libstdc++'s). Thread-safe (one mutex); normal threads only.
 */
#ifndef JS_SYMBOLS_H
#define JS_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uintptr_t start;     /* the symbol's address (its key: the same for every pc inside it); the object's start
                          * when it has no symbol there; pc outside every object */
    int in_jvm;          /* the code is libjvm's (C++ of the VM) */
    int kernel;          /* a kernel address */
    char lib[64];        /* the object's file name ("libz.so.1"), "" for the kernel and outside every object */
    int no_symbol;       /* no symbol there: named "[lib]", start is the object's (where its first symbol may be) */
} js_symbol_info;

/* Name of the code at pc into buf: "deflate", "G1ParScanThreadState::trim_queue()", or "[libz.so.1]" when the
 * object has no symbol there (a stripped library's internal function); outside every object, the JVM's name for the
 * code it generated there ("vtable stub", codenames.h), else "[unknown_native]". */
void js_symbols_name(uintptr_t pc, char *buf, size_t len, js_symbol_info *info);
/* A demangled C++ name without its parameter list, as async-profiler writes one unless signatures are asked for:
 * the last balanced "(...)" goes with what follows it ("JavaCalls::call_helper(JavaValue*, ...)" ->
 * "JavaCalls::call_helper", "Foo::bar(int) const" -> "Foo::bar"); a name without one is left as it is. */
void js_symbols_cut_arguments(char *name);
/* Address of the function symbol named name (exactly, as the ELF table has it) in the object holding pc, or 0. */
uintptr_t js_symbols_lookup(uintptr_t pc, const char *name);
/* Address of the first function named name in the loaded objects, in load order (the executable, then each library
 * as loaded): an ELF name exactly ("write", "_ZN...") or a demangled C++ name without its parameter list
 * ("G1CollectedHeap::humongous_obj_allocate"); 0 if none. Reads every object's symbols: for start-up, not for
 * sampling. */
uintptr_t js_symbols_find(const char *name);
/* The same, and the function's size in bytes (0 if the table does not say) in *size. */
uintptr_t js_symbols_find_sized(const char *name, size_t *size);
/* The functions of the object holding pc whose ELF names begin with one of the np prefixes, as [start, end) pairs
 * sorted by start, into out[0..max) (a symbol of unknown size counts as 1 byte); how many. Normal threads. */
int js_symbols_ranges(uintptr_t pc, const char *const *prefixes, int np, uintptr_t (*out)[2], int max);
/* Forget every object and symbol (tests, VM death). */
void js_symbols_clear(void);

#endif

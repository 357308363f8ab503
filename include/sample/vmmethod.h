/* vmmethod.h - a HotSpot Method* to its jmethodID, from a signal handler.
 *
 * Method -> ConstMethod (_constants, _method_idnum) -> ConstantPool::_pool_holder ->
 * InstanceKlass::_methods_jmethod_ids[idnum + 1]. Metadata can be freed by class unloading at
 * any moment, so every read is a js_safe_read, and the answer is accepted only if the jmethodID
 * points back at the same Method* (true up to JDK 25; a JDK whose jmethodIDs are not pointers
 * to Method* simply gets no answer). A small cache remembers recent answers; a hit is still
 * checked with that one read.
 */
#ifndef JS_VMMETHOD_H
#define JS_VMMETHOD_H

#include <stdint.h>

/* Signal-safe. The jmethodID of method, or NULL if it has none yet or cannot be read. */
const void *js_vm_method_id(uintptr_t method);

#endif

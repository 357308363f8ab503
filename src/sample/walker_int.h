/* walker_int.h - what the walkers share inside src/sample/. */
#ifndef JS_WALKER_INT_H
#define JS_WALKER_INT_H

#include <stdint.h>

/* Signal-safe: the interrupted thread's JavaThread*, from HotSpot's current-thread key; 0 if the
 * thread is not attached to the VM or the key is unknown. */
uintptr_t js_agct_vm_thread(void);

#endif

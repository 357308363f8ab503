/* native_prep.h - making a native walker (cstack=) ready, outside any signal handler.
 *
 * fp needs nothing. dwarf needs the table of loaded objects with copies of their unwind data
 * (sample/native_objects.h), built when sampling starts and again whenever the loader's count of loads and unloads
 * has moved, and libunwind's address space, made once (with a walk of the calling thread's own stack as a test).
 */
#ifndef JS_NATIVE_PREP_H
#define JS_NATIVE_PREP_H

#include <stddef.h>

#include "sample/native_objects.h"
#include "sample/native_walk.h"

/* Make w ready, or bring its view of the loaded objects up to date (cheap when nothing was loaded or unloaded):
 * 0, or -1 with one line in err. */
int js_native_prepare(const js_native_walker *w, char *err, size_t errlen);

/* Free a table of loaded objects built here and displaced from publication (for tests that publish by hand). */
void js_native_free_table(js_nobj_table *t);

#endif

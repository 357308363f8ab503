/* classes.h - ids for the classes alloc and lock events name (the allocated object's, the monitor's, the
 * park blocker's), so a stored stack can end in a class frame and a JFR event can name its class.
 *
 * An id stands for one class name for the process's life (ids are never reused; a name seen again gets
 * its old id). Names are kept in JVM internal form: "java/lang/String", arrays as their descriptor
 * "[B", "[Ljava/lang/Object;". Thread-safe (one short mutex, never held across a call out); normal
 * threads only.
 */
#ifndef JS_CLASSES_H
#define JS_CLASSES_H

#include <stddef.h>
#include <stdint.h>

#define JS_CLASSES_MAX 65536 /* distinct names kept; later ones get id 0 ("no class") */

/* Id (>= 1) of a class given by its JVM signature ("Ljava/lang/String;", "[B"); 0 if the table is full or
 * out of memory. */
uint32_t js_classes_id(const char *signature);
/* Internal name of id ("java/lang/String", "[B"), copied into buf; 0, or -1 for an unknown id. */
int js_classes_internal(uint32_t id, char *buf, size_t len);
/* Java name of id ("java.lang.String", "byte[]", "java.lang.Object[]"; a hidden class's "/0x..." suffix
 * dropped), copied into buf; 0, or -1 for an unknown id. */
int js_classes_java(uint32_t id, char *buf, size_t len);

#endif

/* vmflags.h - HotSpot's -XX flags, read (and a diagnostic one set) through the VM's own flag table
 * (JVMFlag::flags in gHotSpotVMStructs). Normal threads only; the table is the VM's static data. */
#ifndef JS_VMFLAGS_H
#define JS_VMFLAGS_H

/* The value of boolean flag name into *value. 0, or -1 if the table or the flag is not there. */
int js_vmflag_bool(const char *name, int *value);
/* Set boolean flag name to value if it still has its default value (no command line or ergonomics set it): 1 if
 * set, 0 if left (not default, or already value), -1 if not found. */
int js_vmflag_set_default(const char *name, int value);

#endif

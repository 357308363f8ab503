/* out_int.h - what the text writers share: their error line and their escaping of names. */
#ifndef JS_OUT_INT_H
#define JS_OUT_INT_H

#include <stddef.h>
#include <stdio.h>

#include "output/profile.h"

/* One line in err, "<what>: <why>" plus ": <errno text>" when with_errno; returns -1. */
int js_out_fail(const char *what, char *err, size_t errlen, const char *why, int with_errno);
/* Write s with every character of bad replaced by '_'. */
void js_out_put_replacing(FILE *f, const char *s, const char *bad);

#endif

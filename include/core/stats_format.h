/* stats_format.h - the profiler counters as text for status, logs and outputs. Normal threads only. */
#ifndef JS_STATS_FORMAT_H
#define JS_STATS_FORMAT_H

#include <stddef.h>
#include "sample/stats.h"

/* One multi-line human summary (no trailing newline); 0, or -1 if buf is too small. */
int js_stats_format(const js_stats_snapshot *s, char *buf, size_t len);

#endif

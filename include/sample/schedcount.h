/* schedcount.h - how many times the scheduler has put a thread on a CPU, from /proc's schedstat.
 *
 * The third field of /proc/<pid>/task/<tid>/schedstat counts the times the thread was switched in. A thread whose
 * count has not moved has not run since it was read: it is still blocked (or preempted) where it was, whatever
 * small CPU time it had left to spend before it blocked. The wall engine uses it to tell a thread that stayed in
 * the system call it was sampled in from one that woke and blocked again somewhere else.
 */
#ifndef JS_SCHEDCOUNT_H
#define JS_SCHEDCOUNT_H

#include <stdint.h>

/* Signal-safe (open/read/close only): the switch-in count of thread tid of this process, of the calling thread
 * when tid is 0; 0 when it cannot be read (no schedstat in this kernel, no such thread). */
uint64_t js_sched_switch_ins(int tid);

#endif

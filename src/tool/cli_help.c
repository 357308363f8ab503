/* cli_help.c - what every part of the CLI prints: the help text, the version, and the one-line error. */
#include <stdarg.h>
#include <stdio.h>

#include "util/version.h"
#include "cli_int.h"

/* The help text (cli_int.h). */
void js_cli_help(FILE *f)
{
    fputs("Usage: jsampler [ACTION] [OPTIONS] PID|jps|MAINCLASS\n"
          "       jsampler convert [OPTIONS] INPUT OUTPUT\n"
          "       jsampler list | version | help\n"
          "\n"
          "A running JVM, driven as asprof drives it (its command lines work unchanged):\n"
          "  collect          start, wait -d seconds (default 60; Ctrl-C stops early), stop: the default\n"
          "  start, resume    start profiling and return (resume keeps what the last session collected)\n"
          "  dump             write the profile so far, keep profiling\n"
          "  stop             stop and write the profile; after a session ended, write its profile again\n"
          "  status           the session: state, event, interval, elapsed, samples, drops, failed walks\n"
          "  list             the events the JVM's agent offers (without a PID: the running JVMs)\n"
          "  version          the agent's version in the JVM (without a PID: this program's)\n"
          "  attach-backend PID [OPTS]  start the SkyWalking task client in the JVM; OPTS as with -agentpath\n"
          "                   (backend=HOST:PORT,service=NAME,...); what they leave out (all of them, if none)\n"
          "                   comes from the JVM's SW_AGENT_* variables\n"
          "The target is a pid, 'jps' (the newest JVM) or a main class or jar name as jps shows it.\n"
          "Without -f the profile is written to this program's stdout; the agent's messages go to stderr.\n"
          "\n"
          "Options (asprof's; the agent option each becomes is in README.md):\n"
          "  -e EVENT       cpu (default), ctimer, itimer, wall, alloc, lock, a perf event, CATEGORY:NAME or a native function\n"
          "  -i INTERVAL    sampling interval: 10ms (default), 1ms, 500us, or ns\n"
          "  -d SECONDS     collect: how long to profile (default 60)\n"
          "  -f FILE        output file (made absolute here); its extension picks the format\n"
          "  -o FORMAT      collapsed, flat[=N], traces[=N], tree, flamegraph (html), jfr or pprof\n"
          "  -j N[/M]       Java stack depth; N/M: a stack deeper than N keeps its top M frames\n"
          "  -t             one root frame per thread      -s  simple class names\n"
          "  -g             method signatures              -a  frame kinds as _[j] _[i] _[0] _[1]\n"
          "  -l             library names on native frames --dot  dotted class names in every format\n"
          "  -n             hidden classes (lambdas) without their address\n"
          "  -I, -X PATTERN keep only / drop stacks with a frame matching PATTERN (repeatable)\n"
          "  -L LEVEL       the agent's log level          --title TITLE  flame graph title\n"
          "  --alloc SIZE, --lock DURATION, --wall INTERVAL  also (or only) record that event\n"
          "  --all          cpu, wall, alloc and lock together (JFR)\n"
          "  --live         allocation profiles of the objects still alive\n"
          "  --tlab         allocations from the VM's TLAB events (new TLAB, outside TLAB)\n"
          "  --total        weights in the event's unit (ns, bytes) instead of samples; --samples the counts\n"
          "  --inverted     the flame graph opens as an icicle\n"
          "  --cstack MODE  native frames: fp (default), dwarf, vm (= dwarf), vmx (vm and the VM's own frames), no\n"
          "  --record-cpu   a root frame [CPU-N] per cpu sample: the CPU it was taken on (perf_events)\n"
          "  --target-cpu N only time on CPU N is sampled      --all-user  only user-mode time (perf_events)\n"
          "  --fdtransfer   accepted: the agent opens its perf_events counters itself (says so)\n"
          "  --proc N       the machine's busy processes every N s, as profiler.ProcessSample (JFR only)\n"
          "  --jfrsync CONFIG  a JDK Flight Recording (default, profile, a .jfc) joined with ours in the JFR file\n"
          "  --jfropts N    accepted: async-profiler's bits for events its chunk leaves out (ours holds none)\n"
          "  --begin F, --end F  samples kept only between calls of native functions F (--nostop: all kept)\n"
          "  --ttsp         the same for time to safepoint (windows as profiler.Window in JFR)\n"
          "  --chunksize SIZE, --chunktime DURATION   JFR chunks\n"
          "  --timeout T, --loop T    stop after T / a new file every T, in the agent (start returns at once)\n"
          "  --filter PATTERN         thread names to sample\n"
          "  --libpath PATH           agent library (default: libjsampler.so beside this program)\n"
          "  --attach-timeout MS      how long to wait for the JVM's attach listener (default 6000)\n"
          "  -- OPTIONS               any agent option string, as with -agentpath, appended to the command\n"
          "asprof flags jsampler does not offer are refused with one line naming them: --reverse,\n"
          "-F/--features, --nativemem, --nativelock, --nofree, --trace, --nobatch,\n"
          "--sched, --signal, --clock tsc, --memlimit, --width, --height, --minwidth, and the\n"
          "jattach actions (load, jcmd, threaddump, dumpheap, inspectheap).\n"
          "Exit status: 0 done; 2 usage error; 4 the JVM could not be attached (no such process, not a JVM,\n"
          "permission, attach disabled, timed out, library unusable); 5 the agent refused the command (a bad or\n"
          "unsupported option, or the session is not in the right state). Each failure prints one line.\n"
          "\n"
          "convert reads INPUT and writes OUTPUT ('-' = stdout). INPUT is a JFR recording (recognised by its\n"
          "magic bytes, or a .jfr name; must be a regular file), a pprof profile (gzip magic bytes, or a .pprof\n"
          "or .pb name) or collapsed stacks ('frame;frame;frame weight' per line; '-' = stdin, JFR and pprof\n"
          "too when stdin is a file). Options (also as --option=VALUE):\n"
          "  --format F   output format: collapsed, flat, tree, html, json, jfr or pprof; default from OUTPUT's\n"
          "               extension (.collapsed/.folded, .txt = flat, .tree, .html/.htm, .json, .jfr,\n"
          "               .pb.gz/.pprof), else collapsed\n"
          "  --title T    title of the flame graph and of the flat and tree headers\n"
          "  --reverse    html: open the flame graph as an icicle (root at the top)\n"
          "  --include P  keep only stacks with a frame matching P ('*', '?' globs; '|' separates\n"
          "               patterns; repeatable)\n"
          "  --exclude P  drop stacks with a frame matching P (same syntax; repeatable)\n"
          "  --top N      flat: rows per table (default 20)\n"
          "\n"
          "JFR input only:\n"
          "  --event E    cpu (default: jdk.ExecutionSample, jdk.NativeMethodSample; 1 per sample), wall\n"
          "               (profiler.WallClockSample; its samples field), alloc (jdk.ObjectAllocationInNewTLAB,\n"
          "               ...OutsideTLAB, jdk.ObjectAllocationSample; bytes; the allocated class is the leaf\n"
          "               frame, 'java.lang.String_[i]' in a new TLAB, '_[k]' outside or sampled), lock\n"
          "               (jdk.JavaMonitorEnter, jdk.ThreadPark; ns blocked; the lock class is the leaf '_[i]')\n"
          "  --thread P   only threads whose name matches P: a glob if P has '*' or '?', else a substring\n"
          "  --from T     only events at or after T; --to T: only events before T. T is a time since the\n"
          "  --to T       recording start in seconds or with a unit (90, 1.5s, 200ms, 2m, 1h; ns, us too),\n"
          "               or @MS, an absolute time in milliseconds since the epoch\n"
          "  --lines      append ':LINE' to Java frames (pprof input too: to every frame with a line)\n"
          "  --threads    one root frame per thread, '[name tid=N]' (pprof input too: from its thread labels)\n"
          "\n"
          "pprof input only:\n"
          "  --sample-type T  the value to read ('cpu', 'samples', 'alloc_space', ...; the message lists\n"
          "               them); default the profile's default sample type, else its last\n"
          "\n"
          "pprof output is a gzip-compressed perftools.profiles.Profile (go tool pprof, Pyroscope, the\n"
          "SkyWalking OAP) with one Sample message per sample: per unit of weight for cpu, wall and collapsed\n"
          "input, per event for alloc and lock (JFR input); types samples/count and cpu or wall/nanoseconds\n"
          "when the period is known, alloc_objects/count and alloc_space/bytes, contentions/count and\n"
          "delay/nanoseconds.\n"
          "\n"
          "json output is the SkyWalking OAP's analysis tree: {\"trees\":[{\"type\":T,\"unit\":U,\"elements\":\n"
          "[{\"id\":\"0\",\"parentId\":\"-1\",\"codeSignature\":\"all\",\"total\":W,\"self\":W}, ...]}]}: ids are\n"
          "strings numbered in preorder, element 0 is the root 'all', total and self are weights. T is\n"
          "EXECUTION_SAMPLE (cpu, wall, collapsed input), LOCK (lock), or two trees for alloc:\n"
          "OBJECT_ALLOCATION_IN_NEW_TLAB and OBJECT_ALLOCATION_OUTSIDE_TLAB.\n"
          "\n"
          "jfr output (a file, not stdout) holds one jdk.ExecutionSample per unit of weight, so only sample\n"
          "profiles can be written; '[name tid=N]' roots become the events' threads and ':LINE' suffixes\n"
          "line numbers. The JDK's jfr tool, JDK Mission Control and the SkyWalking OAP read it.\n"
          "\n"
          "Exit status:\n"
          "  0  success\n"
          "  1  input or output error (unreadable or malformed input, failed write)\n"
          "  2  usage error (unknown command or option, bad argument, OUTPUT is the INPUT file itself)\n"
          "  3  --event, --thread, --from or --to selected no event of a JFR recording (nothing is written;\n"
          "     the message names what matched nothing)\n"
          "A recording whose last chunk is unfinished or cut short is read up to it, with a warning.\n",
          f);
}

/* Prints "jsampler: <msg>" as one line on stderr and returns code (cli_int.h). */
int js_cli_die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("jsampler: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

/* This program's version (cli_int.h). */
const char *js_cli_version(void)
{
    return JS_VERSION;
}

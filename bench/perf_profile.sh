#!/bin/sh
# Where the time goes while jsampler samples at 1 ms: perf record (software cpu-clock event, call graphs) on a
# JVM running BenchOps under the agent, then the top of perf report by shared object and by symbol.
# Not part of make bench; used for docs/BENCHMARKS.md. Needs perf and a prior make bench-smoke (for the classes).
#
#   sh bench/perf_profile.sh [event=cpu|ctimer|itimer|none] [interval=1ms] [seconds=10]
#
# JDK17_HOME overrides the JDK. Output: build/bench/perf/{perf-EVENT.data,report-dso-EVENT.txt,report-sym-EVENT.txt}.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EVENT=${1:-cpu}
INTERVAL=${2:-1ms}
SECONDS_=${3:-10}
JDK17_HOME=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
AGENT=${JSAMPLER_AGENT:-$ROOT/build/libjsampler.so}
CLASSES=$ROOT/build/bench/classes
OUT=$ROOT/build/bench/perf
if [ ! -f "$CLASSES/BenchOps.class" ]; then
    echo "perf_profile: run make bench-smoke first (it compiles the workloads into $CLASSES)" >&2
    exit 1
fi
mkdir -p "$OUT"
cd "$OUT"
# -XX:+PreserveFramePointer lets perf walk JIT-compiled frames. perf samples at 997 Hz so that its own timer
# interrupts stay below the agent's. event=none runs the same JVM without the agent, for comparison.
if [ "$EVENT" = none ]; then
    AGENT_OPT=-Dno.agent=1
else
    AGENT_OPT="-agentpath:$AGENT=start,event=$EVENT,interval=$INTERVAL,threads,file=$OUT/profile-$EVENT.collapsed"
fi
perf record -e cpu-clock -F 997 -g -o "perf-$EVENT.data" -- \
    "$JDK17_HOME/bin/java" -XX:+PreserveFramePointer "$AGENT_OPT" \
    -cp "$CLASSES" BenchOps 2 "$SECONDS_" 2 >"run-$EVENT.out" 2>"run-$EVENT.err"
cat "run-$EVENT.out"
grep 'profiling stopped' "run-$EVENT.err" || true
perf report -i "perf-$EVENT.data" --no-children --sort dso --stdio -g none 2>/dev/null | grep -v '^#' \
    | grep -v '^$' | head -12 >"report-dso-$EVENT.txt"
# Symbols outside JIT-compiled code: the kernel, the JVM, libc and the agent.
perf report -i "perf-$EVENT.data" --no-children --sort dso,sym --stdio -g none \
    --dsos '[kernel.kallsyms]',libjsampler.so,libjvm.so,libc.so.6 2>/dev/null | grep -v '^#' | grep -v '^$' \
    | head -30 >"report-sym-$EVENT.txt"
echo "== by shared object"; cat "report-dso-$EVENT.txt"
echo "== by symbol (outside JIT code)"; cat "report-sym-$EVENT.txt"

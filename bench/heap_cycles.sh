#!/bin/sh
# heap_cycles.sh - the malloc heap over many sessions (not part of make test; docs/BENCHMARKS.md, "Stress").
#
#   sh bench/heap_cycles.sh [CYCLES]
#
# Five JVMs (JDK 17, NMT summary), two at a time, each running bench/java/HeapCycles.java for CYCLES (300)
# start/dump/stop cycles through the Java API: sessions with the stress run's options and no churn, with class churn,
# with thread churn, and the two churns without sessions. Each prints the heap in use, what NMT tracks of it and the
# rest every 50 cycles (build/heap-cycles/NAME.log). Growth that follows the cycles with no churn would be a leak;
# growth with churn that stops at a cache's bound is the cache.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/heap-cycles
JAVA=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin
CYCLES=${1:-300}
[ -f "$ROOT/build/libjsampler.so" ] && [ -f "$ROOT/build/jsampler.jar" ] || { echo "heap_cycles: run make first"; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT/classes"
# UnloadChurn.java holds the throw-away loader and the class it loads
"$JAVA/javac" --release 17 -cp "$ROOT/build/jsampler.jar" -d "$OUT/classes" "$ROOT/bench/java/HeapCycles.java" \
    "$ROOT/java-test-harness/UnloadChurn.java"
FULL="event=cpu,interval=1ms,wall,alloc,lock,cstack=dwarf,file=%B.jfr"
run() {
    mkdir -p "$OUT/$1"
    "$JAVA/java" -XX:NativeMemoryTracking=summary -agentpath:"$ROOT/build/libjsampler.so" \
        -cp "$ROOT/build/jsampler.jar:$OUT/classes" HeapCycles "$2" "$CYCLES" "$OUT/$1" "${3:-}" > "$OUT/$1.log" 2>"$OUT/$1.err"
}
run sessions "$FULL" & run class "$FULL" class & wait
run thread "$FULL" thread & run class-idle none class & wait
run thread-idle none thread
for f in sessions class class-idle thread thread-idle; do
    echo "== $f"
    grep '^CYCLE' "$OUT/$f.log" | sed -n '1p;$p'
done

#!/bin/sh
# Attach cost (make attach-cost; about 3 minutes, not part of make test).
#
# 1. Attach-to-first-sample latency on a fresh JVM (CpuSplit, JDK 17): the wall time of `jsampler start -i 1ms`
#    (trigger file, SIGQUIT, the listener starting, the load request, JVMTI set-up, the first thread armed) plus the
#    interval, against `jcmd PID JVMTI.agent_load` and `jattach PID load` doing the same start; median of
#    ATTACH_RUNS (default 10) fresh JVMs per tool, interleaved.
# 2. The pause an attach costs an application with 20,000 loaded classes (ManyClasses: a thread that sleeps 1 ms at a
#    time and reports, per 100 ms window, how late it woke): the worst lateness in the windows around the attach
#    against the worst in the 3 s before it, with -Xlog:safepoint kept beside.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${JSAMPLER_AGENT:-$ROOT/build/libjsampler.so}
CLI=$ROOT/build/jsampler
JAVA_HOME=${JAVA_HOME:-${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}}
RUNS=${ATTACH_RUNS:-10}
OUT=$ROOT/build/attach-cost
rm -rf "$OUT"
mkdir -p "$OUT/classes"
"$JAVA_HOME/bin/javac" --release 17 -d "$OUT/classes" "$ROOT/java-test-harness/CpuSplit.java" \
    "$ROOT/java-test-harness/ManyClasses.java"
now_ms() { date +%s%3N; }

# one TOOL: a fresh target, one start through TOOL, the wall time in ms on stdout
one() {
    "$JAVA_HOME/bin/java" -cp "$OUT/classes" CpuSplit 6 1 >/dev/null 2>&1 &
    pid=$!
    sleep 1.5
    t0=$(now_ms)
    case $1 in
    jsampler) "$CLI" start -i 1ms "$pid" >/dev/null ;;
    jcmd) "$JAVA_HOME/bin/jcmd" "$pid" JVMTI.agent_load "$AGENT" '"start,interval=1ms"' >/dev/null ;;
    jattach) jattach "$pid" load "$AGENT" true start,interval=1ms >/dev/null ;;
    esac
    t1=$(now_ms)
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    echo $((t1 - t0 + 1))
}

tools="jsampler jcmd"
command -v jattach >/dev/null && tools="$tools jattach"
for r in $(seq "$RUNS"); do
    for tool in $tools; do echo "$tool $(one "$tool")" >>"$OUT/latency.txt"; done
done
echo "attach-to-first-sample latency, median of $RUNS fresh JVMs (ms):"
for tool in $tools; do
    printf '  %-9s %s\n' "$tool" "$(awk -v t="$tool" '$1 == t {print $2}' "$OUT/latency.txt" | sort -n |
        awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)] " (min " a[1] ", max " a[NR] ")"}')"
done

"$JAVA_HOME/bin/java" -Xlog:safepoint:file="$OUT/safepoint.log" -cp "$OUT/classes" ManyClasses 20000 14 100 \
    >"$OUT/many.txt" 2>&1 &
pid=$!
i=0
until grep -q 'MANY loaded' "$OUT/many.txt" 2>/dev/null || [ $i -ge 300 ]; do sleep 0.1; i=$((i + 1)); done
sleep 4
before=$(grep -c PROBE "$OUT/many.txt")
t0=$(now_ms)
"$CLI" start -i 1ms "$pid" >/dev/null
t1=$(now_ms)
after=$(grep -c PROBE "$OUT/many.txt")
sleep 3
"$CLI" stop "$pid" >/dev/null
wait "$pid" || true
base=$(grep PROBE "$OUT/many.txt" | sed -n "$((before - 29)),$((before - 1))p" | sed 's/.*max_late_ms=//' | sort -n | tail -1)
during=$(grep PROBE "$OUT/many.txt" | sed -n "$((before)),$((after + 2))p" | sed 's/.*max_late_ms=//' | sort -n | tail -1)
echo "attach into a JVM with $(sed -n 's/MANY loaded=//p' "$OUT/many.txt" | head -1) loaded classes: jsampler start took $((t1 - t0)) ms;"
echo "  probe's worst lateness in the windows around the attach: $during ms; in the 3 s before: $base ms"

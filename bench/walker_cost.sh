#!/bin/sh
# Stack-walker cost and coverage (make walker-cost; about 6 minutes, not part of make test).
#
# 1. Handler time per sample against stack depth: BenchDeep (one thread, cpu at 1 ms, WALKER_SECONDS each,
#    default 8) at about 10, 50 and 200 frames, with walker=agct and walker=recover interleaved over
#    WALKER_ROUNDS rounds (default 3). On BenchDeep AsyncGetCallTrace rarely fails, so this is the price of the
#    recovering walker where it has nothing to recover: the two should match. Periods are fixed (nojitter) so
#    the time is the walk's, not the per-sample period change of randomised cpu periods.
# 2. The same on Poly (megamorphic calls, where AsyncGetCallTrace alone fails on a third or more of the
#    samples): handler median and failed walks per walker, so the cost of a recovered sample shows.
# Prints one line per run (the stop line's handler median and walk errors) and a median table.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${JSAMPLER_AGENT:-$ROOT/build/libjsampler.so}
JAVA_HOME=${JAVA_HOME:-${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}}
SECS=${WALKER_SECONDS:-8}
ROUNDS=${WALKER_ROUNDS:-3}
OUT=$ROOT/build/walker-cost
rm -rf "$OUT"
mkdir -p "$OUT/classes"
"$JAVA_HOME/bin/javac" --release 17 -d "$OUT/classes" "$ROOT/java-test-harness/BenchDeep.java" \
    "$ROOT/java-test-harness/Poly.java"

# run NAME WALKER MAIN ARGS...: one JVM; prints "NAME WALKER median_ns failed_percent"
run() {
    name=$1 walker=$2
    shift 2
    log=$OUT/$name-$walker.log
    "$JAVA_HOME/bin/java" "-agentpath:$AGENT=start,event=cpu,interval=1ms,nojitter,walker=$walker,file=$OUT/$name-$walker.collapsed" \
        -cp "$OUT/classes" "$@" >/dev/null 2>"$log"
    stop=$(grep 'profiling stopped' "$log")
    med=$(echo "$stop" | sed -n 's/.*median=\([0-9]*\).*/\1/p')
    samples=$(echo "$stop" | sed -n 's/.* samples=\([0-9]*\).*/\1/p')
    failed=$(echo "$stop" | sed -n 's/.*walk_errors:\(.*\)/\1/p' | tr ' ' '\n' |
        grep -v -e no_Java_frame -e not_Java_thread | sed -n 's/^\[[a-zA-Z_]*\]=\([0-9]*\)$/\1/p' |
        awk '{s += $1} END {print s + 0}')
    echo "$name $walker $med $(awk -v f="$failed" -v n="$samples" 'BEGIN {printf "%.2f", n ? 100 * f / n : 0}')" |
        tee -a "$OUT/results.txt"
}

for r in $(seq "$ROUNDS"); do
    for depth in 6 46 196; do
        for w in agct recover; do run "deep$depth" "$w" BenchDeep "$SECS" "$depth" 1; done
    done
    for w in agct recover; do run poly "$w" Poly "$SECS" 2; done
done

echo
echo "median over $ROUNDS rounds: workload walker handler_median_ns failed_walks_%"
sort "$OUT/results.txt" | awk '
    { k = $1 " " $2; n[k]++; m[k, n[k]] = $3; f[k, n[k]] = $4 }
    END { for (k in n) { c = n[k]; for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) {
              if (m[k, j] < m[k, i]) { t = m[k, i]; m[k, i] = m[k, j]; m[k, j] = t }
              if (f[k, j] < f[k, i]) { t = f[k, i]; f[k, i] = f[k, j]; f[k, j] = t } }
          printf "%-10s %-8s %8d ns %7.2f %%\n", substr(k, 1, index(k, " ") - 1), substr(k, index(k, " ") + 1),
                 m[k, int((c + 1) / 2)], f[k, int((c + 1) / 2)] } }' | sort

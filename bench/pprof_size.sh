#!/bin/sh
# pprof_size.sh - what one Sample message per sample costs (make pprof-size; not part of make test).
#
# Two workloads at 1 ms for SECONDS (default 60) on JDK 17: CpuSplit on 2 threads (stacks about 10 frames deep) and
# BenchDeep on 2 threads (about 200 frames deep). Each run writes the agent's pprof (one Sample per sample), a JFR
# recording and, from the recording, collapsed stacks. Printed per workload: samples, distinct stacks; the bytes of
# the pprof file, of its Profile message before gzip, of the same profile aggregated (one Sample per distinct stack,
# as `go tool pprof -proto` writes it back), of the JFR recording and of the collapsed text; and the time
# `jsampler convert` takes to write the pprof from the recording and to read it back.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=$ROOT/build/libjsampler.so
CLI=$ROOT/build/jsampler
OUT=$ROOT/build/pprof-size
JAVA_HOME=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
SECONDS_RUN=${1:-60}
rm -rf "$OUT"
mkdir -p "$OUT/classes"
"$JAVA_HOME/bin/javac" --release 17 -d "$OUT/classes" "$ROOT/java-test-harness/CpuSplit.java" \
    "$ROOT/java-test-harness/BenchDeep.java"

# ms NOW_NS START_NS: elapsed milliseconds.
ms() { echo $((($1 - $2) / 1000000)); }

run() { # run NAME CLASS ARGS...
    name=$1
    shift
    w=$OUT/$name
    mkdir -p "$w"
    "$JAVA_HOME/bin/java" "-agentpath:$AGENT=start,event=cpu,interval=1ms,file=$w/run.pb.gz,jfrfile=$w/run.jfr" \
        -cp "$OUT/classes" "$@" >"$w/run.out" 2>"$w/run.err"
    "$CLI" convert "$w/run.jfr" "$w/run.collapsed"
    t0=$(date +%s%N)
    "$CLI" convert "$w/run.jfr" "$w/conv.pb.gz"
    t1=$(date +%s%N)
    "$CLI" convert "$w/run.pb.gz" "$w/back.collapsed"
    t2=$(date +%s%N)
    go tool pprof -proto "$w/run.pb.gz" >"$w/aggregated.pb.gz" 2>/dev/null
    samples=$(awk '{s += $NF} END {print s}' "$w/run.collapsed")
    printf '%-10s samples=%s stacks=%s pprof=%s raw=%s aggregated=%s (raw %s) jfr=%s collapsed=%s write=%sms read=%sms\n' \
        "$name" "$samples" "$(wc -l <"$w/run.collapsed")" "$(stat -c %s "$w/run.pb.gz")" \
        "$(zcat "$w/run.pb.gz" | wc -c)" "$(stat -c %s "$w/aggregated.pb.gz")" "$(zcat "$w/aggregated.pb.gz" | wc -c)" \
        "$(stat -c %s "$w/run.jfr")" "$(stat -c %s "$w/run.collapsed")" "$(ms "$t1" "$t0")" "$(ms "$t2" "$t1")"
}

run shallow CpuSplit "$SECONDS_RUN" 2
run deep BenchDeep "$SECONDS_RUN" 200 2

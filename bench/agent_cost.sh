#!/bin/sh
# agent_cost.sh - the profiler's own cost on deep stacks with thread churn (java-test-harness/DeepChurn.java):
# CPU time of the agent's threads, JVM exit delay after the workload's last line, and RSS at 60 s and at the end,
# beside the same workload without a profiler. Not part of make test (make agent-cost).
#
#   sh bench/agent_cost.sh [seconds=120] [agent options=start,event=cpu,interval=1ms,file=OUT/p.jfr] [distinct]
#
# JAVA_HOME picks the JDK (default JDK 17); JSAMPLER_AGENT the library.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${JSAMPLER_AGENT:-$ROOT/build/libjsampler.so}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
SECS=${1:-120}
OUT=$ROOT/build/agent-cost
OPTS=${2:-start,event=cpu,interval=1ms,file=$OUT/p.jfr}
MODE=${3:-}
mkdir -p "$OUT/classes"
"$JAVA_HOME/bin/javac" -d "$OUT/classes" "$ROOT/java-test-harness/DeepChurn.java"

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# CPU ms of the agent's threads of pid (utime + stime): threads named "jsampler*", and unnamed ("java") threads
# other than the process's first (builds that did not name their threads; the Java main thread, mostly asleep in
# DeepChurn, is counted there too).
agent_cpu_ms() {
    hz=$(getconf CLK_TCK)
    for st in /proc/$1/task/*/stat; do
        tid=$(basename "$(dirname "$st")")
        comm=$(sed 's/^[0-9]* (\([^)]*\)).*/\1/' "$st" 2>/dev/null) || continue
        case $comm in
        jsampler*) awk -v c="$comm" '{ print c, $14 + $15 }' "$st" 2>/dev/null ;;
        java) [ "$tid" != "$1" ] && awk '{ print "unnamed", $14 + $15 }' "$st" 2>/dev/null ;;
        esac
    done | awk -v hz="$hz" '{ t[$1] += $2 } END { for (k in t) printf "%s=%dms ", k, t[k] * 1000 / hz }'
}

# run NAME AGENTOPTS: one JVM; prints its figures.
run() {
    name=$1
    args=""
    [ -n "$2" ] && args="-agentpath:$AGENT=$2"
    "$JAVA_HOME/bin/java" $args -cp "$OUT/classes" DeepChurn "$SECS" 2 $MODE >"$OUT/$name.out" 2>"$OUT/$name.err" &
    pid=$!
    sleep 60
    rss60=$(rss_kib $pid)
    cpu=""
    while kill -0 $pid 2>/dev/null; do
        grep -q DEEPCHURN_DONE "$OUT/$name.out" 2>/dev/null && break
        rss_end=$(rss_kib $pid)
        c=$(agent_cpu_ms $pid)
        [ -n "$c" ] && cpu=$c
        sleep 0.05
    done
    done_at=$(date +%s%N)
    wait $pid || true
    exit_ms=$(( ($(date +%s%N) - done_at) / 1000000 ))
    echo "$name: RSS at 60 s ${rss60} KiB, at end ${rss_end:-0} KiB; exit ${exit_ms} ms after the last line; agent threads CPU: ${cpu:-none}"
}

run none ""
run agent "$OPTS"
grep -h "profiling stopped\|wrote JFR" "$OUT/agent.err" | cut -c1-240

#!/bin/sh
# wall_idle.sh - what wall-clock sampling costs on a JVM full of idle threads (make wall-idle; not part of make
# test): IdleThreads with N waiting threads, its process CPU over a 10 s window, for no agent, the agent recording
# allocations only (an agent without signals: its housekeeping alone) and the agent with event=wall at its
# defaults (50 ms). Rounds interleave the three; the medians are printed.
#
#   sh bench/wall_idle.sh [threads=2000] [rounds=3]
#
# JAVA_HOME picks the JDK (default JDK 17); JSAMPLER_AGENT the library.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${JSAMPLER_AGENT:-$ROOT/build/libjsampler.so}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
N=${1:-2000}
ROUNDS=${2:-3}
OUT=$ROOT/build/wall-idle
mkdir -p "$OUT/classes"
"$JAVA_HOME/bin/javac" -d "$OUT/classes" "$ROOT/java-test-harness/IdleThreads.java"

one() { # one VARIANT: the CPU share printed by the workload
    case $1 in
    none) "$JAVA_HOME/bin/java" -cp "$OUT/classes" IdleThreads "$N" 10 ;;
    *) "$JAVA_HOME/bin/java" "-agentpath:$AGENT=start,event=$1,file=$OUT/p-%e.collapsed,loglevel=warn" \
        -cp "$OUT/classes" IdleThreads "$N" 10 2>/dev/null ;;
    esac | awk '/^CPU/ { sub("%", "", $2); print $2 }'
}

: > "$OUT/runs.txt"
i=0
while [ $i -lt "$ROUNDS" ]; do
    for v in none alloc wall; do echo "$v $(one $v)" >> "$OUT/runs.txt"; done
    i=$((i + 1))
done
echo "wall-idle: $N idle threads, $("$JAVA_HOME/bin/java" -version 2>&1 | head -n 1), $ROUNDS rounds"
for v in none alloc wall; do
    vals=$(awk -v v="$v" '$1 == v { print $2 }' "$OUT/runs.txt" | sort -n)
    n=$(echo "$vals" | wc -l)
    med=$(echo "$vals" | sed -n "$(((n + 1) / 2))p")
    printf "  %-6s process CPU %s%% of one core (median; runs: %s)\n" "$v" "$med" "$(echo $vals)"
done

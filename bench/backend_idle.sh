#!/bin/sh
# The task client's cost while it only polls (make backend-idle; IDLE_SECONDS, default 3600; not part of make test).
#
# Three idle JVMs side by side (TaskLoad sleeping, JDK 17): one bare, one with the agent loaded idle, one with the
# agent's task client polling the test backend (java-test-harness/backend/oap.py) at the default 20 s. At the end:
# the client thread's own CPU time (from /proc/PID/task/TID/stat: the thread is named jsampler-tasks), each JVM's CPU
# time, and each JVM's memory from smaps_rollup: RSS, and its private anonymous part (what the process itself
# allocated; the rest of RSS is mapped library pages, shared with every process that maps them).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${JSAMPLER_AGENT:-$ROOT/build/libjsampler.so}
JAVA_HOME=${JAVA_HOME:-${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}}
SECONDS_IDLE=${IDLE_SECONDS:-3600}
OUT=${BACKEND_IDLE_OUT:-$ROOT/build/backend-idle}
rm -rf "$OUT"
mkdir -p "$OUT/classes"
"$JAVA_HOME/bin/javac" --release 17 -d "$OUT/classes" "$ROOT/java-test-harness/CpuSplit.java" \
    "$ROOT/java-test-harness/TaskLoad.java"
/usr/bin/python3 "$ROOT/java-test-harness/backend/oap.py" --port 0 --admin-port 0 --gen "$OUT/gen" \
    --ready-file "$OUT/ready" >"$OUT/oap.out" 2>"$OUT/oap.err" &
oap=$!
trap 'kill $oap 2>/dev/null || true' EXIT
i=0
while [ ! -s "$OUT/ready" ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
port=$(sed -n 's/READY grpc=\([0-9]*\).*/\1/p' "$OUT/ready")
[ -n "$port" ] || { echo "backend-idle: the test backend did not start (see $OUT/oap.err)"; exit 1; }

"$JAVA_HOME/bin/java" -Xmx64m -cp "$OUT/classes" TaskLoad "$SECONDS_IDLE" 0 0 >"$OUT/bare.out" 2>&1 &
bare=$!
"$JAVA_HOME/bin/java" -Xmx64m -agentpath:"$AGENT" -cp "$OUT/classes" TaskLoad "$SECONDS_IDLE" 0 0 \
    >"$OUT/idle.out" 2>&1 &
idle=$!
"$JAVA_HOME/bin/java" -Xmx64m -agentpath:"$AGENT=backend=127.0.0.1:$port,service=idle,taskdir=$OUT/tasks" \
    -cp "$OUT/classes" TaskLoad "$SECONDS_IDLE" 0 0 >"$OUT/agent.out" 2>&1 &
agent=$!
sleep $((SECONDS_IDLE - 5))

ticks() { awk '{ s = $0; sub(/.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "$1"; }
mem() { awk '/^Rss:/ { r = $2 } /^Anonymous:/ { a = $2 } END { printf "RSS %d kB (anonymous %d kB)", r, a }' "/proc/$1/smaps_rollup"; }
hz=$(getconf CLK_TCK)
tid=$(grep -l '^jsampler-tasks$' /proc/$agent/task/*/comm | head -n 1 | sed 's|/comm$||')
client_ticks=$(ticks "$tid/stat")
bare_ticks=$(ticks /proc/$bare/stat)
agent_ticks=$(ticks /proc/$agent/stat)
idle_ticks=$(ticks /proc/$idle/stat)
polls=$(curl -s "http://127.0.0.1:$(sed -n 's/.*admin=\([0-9]*\).*/\1/p' "$OUT/ready")/stats")
mem_bare=$(mem $bare)
mem_idle=$(mem $idle)
mem_agent=$(mem $agent)
kill $bare $idle $agent 2>/dev/null || true
{
    echo "idle seconds: $SECONDS_IDLE (clock ticks of $((1000 / hz)) ms)"
    echo "task client thread CPU: $((client_ticks * 1000 / hz)) ms"
    echo "JVM CPU: bare $((bare_ticks * 1000 / hz)) ms, agent idle $((idle_ticks * 1000 / hz)) ms, with the task client $((agent_ticks * 1000 / hz)) ms"
    echo "memory: bare $mem_bare; agent idle $mem_idle; with the task client $mem_agent"
    echo "backend stats: $polls"
} | tee "$OUT/result.txt"

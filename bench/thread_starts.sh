#!/bin/sh
# thread_starts.sh - what tracing thread starts (pprof THREADCREATE tasks) costs a thread start (make thread-starts;
# not part of make test). ThreadStarts (java-test-harness) starts and joins 10,000 platform threads 50 frames below
# main, on JDK 17 and 25: without an agent, with the agent loaded idle, and with the agent and a backend (the task
# client configured, so Thread.start0 is wrapped and every start records its caller's stack; the backend address is
# closed: the client only retries). Each run three times, the median printed, in microseconds a start.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${JSAMPLER_AGENT:-$ROOT/build/libjsampler.so}
OUT=$ROOT/build/thread-starts
rm -rf "$OUT"
mkdir -p "$OUT/tasks"
chmod 700 "$OUT/tasks"
median() { sort -n | sed -n 2p; }
for home in ${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64} ${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}; do
    [ -x "$home/bin/java" ] || continue
    v=$("$home/bin/java" -version 2>&1 | sed -n '1s/.*version "\([0-9]*\).*/\1/p')
    rm -rf "$OUT/classes"
    "$home/bin/javac" --release 17 -d "$OUT/classes" "$ROOT/java-test-harness/ThreadStarts.java"
    for mode in bare idle traced; do
        case $mode in
        bare) opt= ;;
        idle) opt=-agentpath:$AGENT ;;
        traced) opt=-agentpath:$AGENT=backend=127.0.0.1:1,service=bench,taskdir=$OUT/tasks,loglevel=error ;;
        esac
        us=$(for i in 1 2 3; do
            "$home/bin/java" $opt -cp "$OUT/classes" ThreadStarts 20 500 50 2>>"$OUT/stderr" |
                sed -n 's/.*us_per_start=\([0-9.]*\).*/\1/p'
        done | median)
        echo "JDK $v $mode: $us us a thread start"
    done
done

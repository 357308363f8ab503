#!/bin/sh
# Walker soak (make soak-walker; about 11 minutes per JDK, not part of make test): WalkStress (StackOverflowError
# loops, a deoptimisation storm, class unloading, thread churn) profiled at 1 kHz for SOAK_SECONDS (default 600) on
# JDK 17 and JDK 25, with a JFR recording. Fails on a crash (exit code, hs_err file), on a recording the JDK's jfr
# tool cannot read, or on a stop line without the failed-walk counts; prints the stop line of each JDK.
# SOAK_OPTS adds agent options (e.g. SOAK_OPTS=cstack=fp,alloc,lock for native frames and the VM events too);
# SOAK_JDKS=17 runs JDK 17 only.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${JSAMPLER_AGENT:-$ROOT/build/libjsampler.so}
SECS=${SOAK_SECONDS:-600}
OUT=$ROOT/build/soak-walker
rm -rf "$OUT"
status=0
JDKS="${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64} ${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
[ "${SOAK_JDKS:-}" = 17 ] && JDKS=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
for home in $JDKS; do
    if [ ! -x "$home/bin/java" ]; then
        echo "SKIP: no JDK at $home"
        continue
    fi
    d=$OUT/$(basename "$home")
    mkdir -p "$d/classes"
    "$home/bin/javac" --release 17 -d "$d/classes" "$ROOT/java-test-harness/WalkStress.java"
    rc=0
    (cd "$d" && "$home/bin/java" "-agentpath:$AGENT=start,event=cpu,interval=1ms,jfrfile=$d/stress.jfr,chunktime=10s,file=$d/stress-%e.collapsed${SOAK_OPTS:+,$SOAK_OPTS}" \
        -cp "$d/classes" WalkStress "$SECS" >"$d/stdout" 2>"$d/stderr") || rc=$?
    echo "== $home: exit $rc; $(cat "$d/stdout")"
    grep 'profiling stopped' "$d/stderr" || true
    if [ "$rc" -ne 0 ] || ls "$d"/hs_err* >/dev/null 2>&1; then
        echo "FAIL: the JVM crashed or failed (see $d)"
        status=1
    elif ! grep -q 'walk_errors:' "$d/stderr"; then
        echo "FAIL: no walk_errors in the stop line"
        status=1
    elif ! "$home/bin/jfr" summary "$d/stress.jfr" | grep -q 'jdk.ExecutionSample'; then
        echo "FAIL: the recording does not read"
        status=1
    fi
done
exit $status

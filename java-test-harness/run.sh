#!/bin/sh
# JVM integration tests (make java-test): compile the workloads and run IntegrationTest, which launches child
# JVMs of JDK 17 and JDK 25 with build/libjsampler.so, side by side, and checks their profiles and logs.
#
#   sh java-test-harness/run.sh [--only check,check,...]
#
# JDK17_HOME and JDK25_HOME override where the JDKs are looked for, JSAMPLER_AGENT the agent library.
# A missing JDK is skipped; with neither present the run fails. Output of every child JVM stays in
# build/java-test/jdkNN/runs/ (command, stdout, stderr, profile); the flame graph of the html check is
# build/java-test/profile-jdkNN.html.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HARNESS=$ROOT/java-test-harness
OUT=$ROOT/build/java-test
AGENT=${JSAMPLER_AGENT:-$ROOT/build/libjsampler.so}
JAR=${JSAMPLER_JAR:-$ROOT/build/jsampler.jar}
CLASSES=$OUT/classes
JDK17_HOME=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JDK25_HOME=${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}

if [ ! -f "$AGENT" ] || [ ! -f "$JAR" ]; then
    echo "java-test: $AGENT or $JAR is not built (run make)" >&2
    exit 1
fi
mkdir -p "$OUT"

# The seccomp helper that refuses perf_event_open; without it that one check is skipped.
NOPERF=$OUT/noperf
if ! ${CC:-cc} -O2 -Wall -Wextra -std=gnu11 -o "$NOPERF" "$HARNESS/noperf.c" 2>"$OUT/noperf.log"; then
    echo "note: could not build the seccomp helper (see $OUT/noperf.log); its check will be skipped"
    NOPERF=
fi

# The native host that creates a JVM after the C API started a session (the capi-jvm-later check); needs jni.h.
CAPIHOST=$OUT/capi_host
if ! ${CC:-cc} -O2 -Wall -Wextra -std=gnu11 -I"$JDK17_HOME/include" -I"$JDK17_HOME/include/linux" -o "$CAPIHOST" \
        "$HARNESS/capi_host.c" -ldl -lm 2>"$OUT/capi_host.log"; then
    echo "note: could not build the C API host (see $OUT/capi_host.log); its check will be skipped"
    CAPIHOST=
fi

# One driver runs both JDKs' checks side by side (CheckRunner); the classes are compiled once, for Java 17.
javas=
javac=
for spec in "17:$JDK17_HOME" "25:$JDK25_HOME"; do
    n=${spec%%:*}
    home=${spec#*:}
    if [ ! -x "$home/bin/java" ] || [ ! -x "$home/bin/javac" ]; then
        echo "SKIP: JDK $n not found at $home"
        continue
    fi
    echo "== JDK $n: $home ($("$home/bin/java" -version 2>&1 | head -n 1))"
    javas="${javas:+$javas,}jdk$n=$home/bin/java"
    [ -n "$javac" ] || javac=$home/bin/javac
done
if [ -z "$javas" ]; then
    echo "java-test: FAILED: no JDK found (looked at $JDK17_HOME and $JDK25_HOME)"
    exit 1
fi
rm -rf "$CLASSES"
mkdir -p "$CLASSES"
"$javac" --release 17 -cp "$JAR" -d "$CLASSES" "$HARNESS"/*.java "$HARNESS"/one/profiler/*.java
if [ -n "$NOPERF" ]; then
    set -- "$@" --noperf "$NOPERF"
fi
if [ -n "$CAPIHOST" ]; then
    set -- "$@" --capihost "$CAPIHOST"
fi
started=$(date +%s)
driver_java=${javas%%,*}
driver_java=${driver_java#*=}
if "$driver_java" -cp "$CLASSES" IntegrationTest --java "$javas" --agent "$AGENT" --classes "$CLASSES" --jar "$JAR" \
    --work "$OUT" "$@"; then
    echo "java-test: passed ($(($(date +%s) - started)) s)"
else
    echo "java-test: FAILED ($(($(date +%s) - started)) s)"
    exit 1
fi

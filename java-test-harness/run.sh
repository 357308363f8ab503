#!/bin/sh
# JVM integration tests (make java-test): for JDK 17 and JDK 25, compile the workloads and run
# IntegrationTest, which launches child JVMs with build/libjsampler.so and checks their profiles and logs.
#
#   sh java-test-harness/run.sh [--only check,check,...]
#
# JDK17_HOME and JDK25_HOME override where the JDKs are looked for, JSAMPLER_AGENT the agent library.
# A missing JDK is skipped; with neither present the run fails. Output of every child JVM stays in
# build/java-test/jdkNN/runs/ (command, stdout, stderr, profile).
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

found=0
passed_on=
failed_on=

# run_jdk N JAVA_HOME [driver args...]
run_jdk() {
    n=$1
    home=$2
    shift 2
    if [ ! -x "$home/bin/java" ] || [ ! -x "$home/bin/javac" ]; then
        echo "SKIP: JDK $n not found at $home"
        return 0
    fi
    found=$((found + 1))
    echo
    echo "== JDK $n: $home ($("$home/bin/java" -version 2>&1 | head -n 1))"
    rm -rf "$CLASSES"
    mkdir -p "$CLASSES"
    "$home/bin/javac" --release 17 -cp "$JAR" -d "$CLASSES" "$HARNESS"/*.java "$HARNESS"/one/profiler/*.java
    if [ -n "$NOPERF" ]; then
        set -- "$@" --noperf "$NOPERF"
    fi
    started=$(date +%s)
    if "$home/bin/java" -cp "$CLASSES" IntegrationTest \
        --java "$home/bin/java" --agent "$AGENT" --classes "$CLASSES" --jar "$JAR" \
        --work "$OUT/jdk$n" --html "$OUT/profile-jdk$n.html" --label "jdk$n" "$@"; then
        passed_on="$passed_on jdk$n"
    else
        failed_on="$failed_on jdk$n"
    fi
    echo "(JDK $n: $(($(date +%s) - started)) s)"
}

run_jdk 17 "$JDK17_HOME" "$@"
run_jdk 25 "$JDK25_HOME" "$@"

echo
if [ "$found" -eq 0 ]; then
    echo "java-test: FAILED: no JDK found (looked at $JDK17_HOME and $JDK25_HOME)"
    exit 1
fi
if [ -n "$failed_on" ]; then
    echo "java-test: FAILED on$failed_on${passed_on:+ (passed on$passed_on)}"
    exit 1
fi
echo "java-test: passed on$passed_on"

#!/bin/sh
# test_all.sh - make test: every test, in phases, each timed (build/test-times.txt: seconds and CPU seconds per
# phase; a summary at the end).
#
# 1. build: the agent, the CLI, the Java API (a job per CPU).
# 2. native: the layer check, the cmocka suites of the three variants (plain, ASan/UBSan, TSan) and a few seconds of
#    libFuzzer per parser (fuzz-smoke), side by side:
#    their checks are not judged on time, and most of a suite's time is waiting.
# 3. java: the JVM integration checks of JDK 17 and 25 (java-test-harness/run.sh schedules them itself: side by side,
#    and alone where a check judges time or CPU shares).
# 4. backend: the SkyWalking task client against the grpcio test backend, JDK 17 and 25 side by side, each on three
#    lanes (java-test-harness/backend/run.py); run apart from the JVM phase: timing and CPU matter to its size plan.
# 5. readers: the JFR (its three scripts as targets of their own), pprof and browser checks, side by side.
# 6. stress: make stress-smoke, the short form of make stress, on JDK 17 and 25 side by side (about 90 s): every
#    hard case of a JVM at once while sessions start and stop from three entry points; it needs no other phase beside
#    it (its drivers' deadlines and its quiet points assume the two JVMs have the machine).
# Stops at the first phase that fails.
set -eu
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
mkdir -p build
times=build/test-times.txt
: > "$times"
total=$(date +%s)

# CPU seconds used so far by this shell's finished children (user + system, from /proc): what a phase took of the
# machine's two cores is the difference across it.
cpu_now() {
    awk -v hz="$(getconf CLK_TCK)" '{ print int(($16 + $17) / hz) }' /proc/$$/stat
}

phase() {
    name=$1
    shift
    echo
    echo "==== make test: $name"
    t0=$(date +%s)
    c0=$(cpu_now)
    if ! "$@"; then
        echo "==== make test: $name FAILED after $(($(date +%s) - t0)) s"
        echo "$name failed $(($(date +%s) - t0))" >> "$times"
        exit 1
    fi
    echo "$name $(($(date +%s) - t0)) cpu $(($(cpu_now) - c0))" >> "$times"
}

phase build $MAKE --no-print-directory -j"$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)" all
phase native $MAKE --no-print-directory -j3 -O check-layers native-test check-asan check-tsan fuzz-smoke
phase java $MAKE --no-print-directory java-test
phase backend $MAKE --no-print-directory backend-test
phase readers $MAKE --no-print-directory -j3 -O jfr-test pprof-test browser-test
phase stress $MAKE --no-print-directory stress-smoke

echo "total $(($(date +%s) - total))" >> "$times"
echo
echo "==== make test: every phase passed; seconds per phase (build/test-times.txt):"
sed 's/^/    /' "$times"

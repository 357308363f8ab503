#!/bin/sh
# test_all.sh - make test: every test, timed (build/test-times.txt, and a summary at the end).
#
# 1. build: the agent, the CLI, the Java API, every native suite's binaries (plain, ASan/UBSan, TSan) and the fuzz
#    targets, before anything is judged (a compiler beside a check that measures time would disturb it).
# 2. the test groups, side by side, each printed in one piece when it ends:
#    native   the layer check, the cmocka suites of the three variants and a few seconds of libFuzzer per parser;
#    java     the JVM integration checks of JDK 17 and 25 (java-test-harness/run.sh), then the browser check of the
#             flame graph page they wrote;
#    backend  the SkyWalking task client against the grpcio test backend, JDK 17 and 25;
#    readers  the JFR and pprof checks.
#    They share the machine through one lock (tools/machine_lock.sh, named by JSAMPLER_MACHINE_LOCK): a check that
#    judges time, CPU shares or sample counts takes it alone, everything else shared, with at most a few shared
#    holders at once. So a measuring check never has another test beside it, and the waiting of the others
#    (child JVMs starting, sleeping workloads, tasks running for their duration) overlaps.
# JSAMPLER_TEST_SERIAL=1 runs the groups one after the other instead (the same lock, uncontended).
set -eu
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
mkdir -p build
times=build/test-times.txt
logs=build/test-logs
: > "$times"
rm -rf "$logs"
mkdir -p "$logs"
total=$(date +%s)
JSAMPLER_MACHINE_LOCK=$(pwd)/tools/machine_lock.sh
export JSAMPLER_MACHINE_LOCK

echo "==== make test: build"
t0=$(date +%s)
if ! $MAKE --no-print-directory all native-build fuzz-build; then
    echo "==== make test: build FAILED"
    exit 1
fi
echo "build $(($(date +%s) - t0))" >> "$times"

# group NAME COMMAND: runs one group (a shell command line) into its log; its time and CPU time (of every process it
# ran, in seconds: what the two cores had to give it), or its failure, into $times.
group() {
    name=$1
    g0=$(date +%s)
    if sh -c "$2"' ; rc=$?; awk -v hz="$(getconf CLK_TCK)" "{ print int((\$16 + \$17) / hz) }" /proc/$$/stat \
            > "'"$logs/$name.cpu"'"; exit $rc' > "$logs/$name.log" 2>&1; then
        result="$name $(($(date +%s) - g0))"
        word=passed
    else
        result="$name failed $(($(date +%s) - g0))"
        word=FAILED
    fi
    cpu=$(cat "$logs/$name.cpu" 2>/dev/null || echo "?")
    echo "$result cpu $cpu" >> "$times"
    echo "==== make test: $name $word ($(($(date +%s) - g0)) s, $cpu s of CPU)" >> "$logs/$name.log"
    # printed in one piece, whole lines, while the other groups go on
    flock build/.test-print.lock sh -c "echo; echo '==== make test: $name'; cat '$logs/$name.log'"
}

M="$MAKE --no-print-directory"
native="$M -j3 -O check-layers native-test check-asan check-tsan fuzz-smoke"
java="$M java-test && $M browser-test"
backend="$M backend-test"
readers="$M -j2 -O jfr-test pprof-test"

if [ "${JSAMPLER_TEST_SERIAL:-0}" = 1 ]; then
    for g in native java backend readers; do
        eval "group $g \"\$$g\""
    done
else
    echo "==== make test: native, java, backend and readers side by side (logs in $logs/)"
    group native "$native" &
    group java "$java" &
    group backend "$backend" &
    group readers "$readers" &
    wait
fi

echo "total $(($(date +%s) - total))" >> "$times"
echo
if grep -q " failed " "$times"; then
    echo "==== make test: FAILED: $(grep " failed " "$times" | cut -d' ' -f1 | tr '\n' ' ')(seconds per group:"
    sed 's/^/    /' "$times"
    exit 1
fi
echo "==== make test: every group passed; seconds per group (build/test-times.txt):"
sed 's/^/    /' "$times"

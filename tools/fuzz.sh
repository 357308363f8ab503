#!/bin/sh
# fuzz.sh MODE SECONDS NAME... - run the libFuzzer targets build/fuzz/fuzz_NAME one after another (make fuzz,
# make fuzz-smoke; docs/FUZZING.md).
#
#   campaign  SECONDS per target; the committed seeds (native-tests/fuzz-corpus/NAME and NAME-crashes) are read,
#             what the run finds worth keeping goes to build/fuzz/corpus-NAME (kept between runs). FUZZ_RUNS=N
#             runs N executions instead of a time limit. FUZZ_NICE (default 19) is the niceness.
#   smoke     SECONDS per target on the committed corpus only; new inputs go to a scratch directory.
#
# Each target's options: the largest input (JFR recordings are big, options strings small) and a dictionary
# (native-tests/fuzz-corpus/NAME.dict) when there is one. A crash, leak, timeout or broken invariant leaves its
# input in build/fuzz as NAME-crash-*, NAME-leak-*, NAME-timeout-*, NAME-oom-*; the run goes on with the next
# target and the script fails at the end. The timeout is 60 s of wall-clock time (room for a busy machine). The
# summary (executions, seconds, executions/s, corpus, findings) is printed and kept in build/fuzz/summary-MODE.txt.
set -u
mode=$1
secs=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/fuzz
corp=$root/native-tests/fuzz-corpus
nice=${FUZZ_NICE:-19}
mkdir -p "$out"
summary=$out/summary-$mode.txt
printf '%-12s %14s %8s %10s %8s  %s\n' target executions seconds exec/s corpus findings > "$summary"
failed=0

for name in "$@"; do
    bin=$out/fuzz_$name
    [ -x "$bin" ] || { echo "fuzz: $bin is not built (make fuzz-build)"; failed=1; continue; }
    case $name in
    jfr_read) maxlen=262144 ;; # whole JDK recordings (150 KB)
    pprof_read) maxlen=131072 ;;
    elf) maxlen=65536 ;;
    collapsed | backend_msg | grpc | proc) maxlen=16384 ;;
    *) maxlen=4096 ;; # jfr_gen: a recipe; 4 KB of it already makes recordings of hundreds of KB
    esac
    dict=""
    [ -f "$corp/$name.dict" ] && dict="-dict=$corp/$name.dict"
    seeds=""
    for d in "$corp/$name" "$corp/$name-crashes"; do [ -d "$d" ] && seeds="$seeds $d"; done
    if [ "$mode" = smoke ]; then
        work=$out/smoke-$name
        rm -rf "$work"
        limit="-max_total_time=$secs"
    else
        work=$out/corpus-$name
        limit="-max_total_time=$secs"
        [ -n "${FUZZ_RUNS:-}" ] && limit="-runs=$FUZZ_RUNS"
    fi
    mkdir -p "$work"
    log=$out/$name-$mode.log
    before=$(ls "$out" | grep -c "^$name-\(crash\|leak\|timeout\|oom\|slow-unit\)-" || true)
    start=$(date +%s)
    # shellcheck disable=SC2086 # word splitting of the option and seed lists is wanted
    # -timeout is wall-clock time: at nice 19 on a busy machine an input of 0.2 s once took 25 s
    nice -n "$nice" "$bin" $limit -max_len=$maxlen -timeout=60 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$out/$name-" $dict "$work" $seeds > "$log" 2>&1
    rc=$?
    end=$(date +%s)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    after=$(ls "$out" | grep -c "^$name-\(crash\|leak\|timeout\|oom\|slow-unit\)-" || true)
    found=$((after - before))
    size=$(ls "$work" | wc -l)
    el=$((end - start))
    [ "$el" -gt 0 ] || el=1
    result=none
    if [ "$rc" -ne 0 ] || [ "$found" -gt 0 ]; then
        result="FAILED (exit $rc, $found new inputs in build/fuzz; see $log)"
        failed=1
    fi
    printf '%-12s %14s %8s %10s %8s  %s\n' "$name" "${execs:-?}" "$el" "$(( ${execs:-0} / el ))" "$size" "$result" \
        >> "$summary"
    tail -1 "$summary"
done
echo "fuzz ($mode): summary in $summary"
[ "$mode" = smoke ] && [ "$failed" -eq 0 ] && rm -rf "$out"/smoke-*
exit $failed

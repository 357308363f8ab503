#!/bin/sh
# Memory soak (make soak; ~12 minutes, not part of make test): a CPU-bound JVM with SOAK_THREADS (default 8) busy
# threads profiled at 1 kHz per thread for SOAK_SECONDS (default 600) while streaming JFR in 10 s chunks. The JVM's
# RSS is read from /proc at 60 s and at the end, beside the same workload without a profiler (60 s), with the
# agent's JFR file size and sample count; then the recording is checked with the JDK's jfr tool and converted by
# build/jsampler, whose peak RSS is reported. Prints one summary block; exits non-zero if the RSS grew more than
# SOAK_GROWTH_KIB (default 8192 KiB) between 60 s and the end, if the profiled JVM's RSS at the end is more than
# SOAK_OVER_KIB (default 40960 KiB) over the unprofiled one, if any sample was dropped, or if the recording does not
# read.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${JSAMPLER_AGENT:-$ROOT/build/libjsampler.so}
CLI=$ROOT/build/jsampler
JAVA_HOME=${JAVA_HOME:-${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}}
SECONDS_TOTAL=${SOAK_SECONDS:-600}
GROWTH_KIB=${SOAK_GROWTH_KIB:-8192}
OVER_KIB=${SOAK_OVER_KIB:-40960}
THREADS=${SOAK_THREADS:-8}
OUT=$ROOT/build/soak
rm -rf "$OUT"
mkdir -p "$OUT/classes"
"$JAVA_HOME/bin/javac" --release 17 -d "$OUT/classes" "$ROOT/java-test-harness/BenchOps.java"

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# The unprofiled baseline: the same workload for 60 s.
"$JAVA_HOME/bin/java" -cp "$OUT/classes" BenchOps 1 62 "$THREADS" >"$OUT/stdout.none" 2>&1 &
pid=$!
sleep 60
rss_none=$(rss_kib "$pid")
wait "$pid" || true

# BenchOps: warm-up 1 s, measuring window = the soak.
"$JAVA_HOME/bin/java" "-agentpath:$AGENT=start,event=cpu,interval=1ms,file=$OUT/soak.jfr,chunktime=10s,loglevel=info" \
    -cp "$OUT/classes" BenchOps 1 "$SECONDS_TOTAL" "$THREADS" >"$OUT/stdout" 2>"$OUT/stderr" &
pid=$!
sleep 60
rss60=$(rss_kib "$pid")
jfr60=$(stat -c %s "$OUT/soak.jfr" 2>/dev/null || echo 0)
sleep $((SECONDS_TOTAL - 65))
rss_end=$(rss_kib "$pid")
wait "$pid" || true

events=$(grep -o 'wrote JFR recording ([0-9]* events' "$OUT/stderr" | grep -o '[0-9]*' || echo 0)
bytes=$(stat -c %s "$OUT/soak.jfr" 2>/dev/null || echo 0)
ok=1
"$JAVA_HOME/bin/jfr" summary "$OUT/soak.jfr" >"$OUT/summary.txt" 2>"$OUT/summary.err" && [ ! -s "$OUT/summary.err" ] || ok=0
/usr/bin/time -v "$CLI" convert "$OUT/soak.jfr" "$OUT/soak.collapsed" 2>"$OUT/convert.time" >/dev/null || ok=0
conv_rss=$(awk -F: '/Maximum resident/ {gsub(/ /, "", $2); print $2}' "$OUT/convert.time")
growth=$((rss_end - rss60))
over=$((rss_end - rss_none))
dropped=$(grep -o 'profiling stopped: .* dropped=[0-9]*' "$OUT/stderr" | grep -o 'dropped=[0-9]*' | grep -o '[0-9]*' || echo missing)

echo "soak: ${SECONDS_TOTAL} s, cpu engine at 1 ms, ${THREADS} busy threads, JFR streamed in 10 s chunks ($JAVA_HOME)"
echo "  JVM RSS unprofiled (60 s): ${rss_none} KiB"
echo "  JVM RSS at 60 s: ${rss60} KiB; at end: ${rss_end} KiB; growth ${growth} KiB (bound ${GROWTH_KIB} KiB)"
echo "  over the unprofiled JVM at the end: ${over} KiB (bound ${OVER_KIB} KiB); samples dropped: ${dropped}"
echo "  JFR: ${bytes} bytes for ${events} samples ($(awk -v b="$bytes" -v n="$events" 'BEGIN { if (n) printf "%.2f", b / n; else print "-" }') bytes/sample); ${jfr60} bytes after 60 s"
echo "  chunks: $(awk '/^ *Chunks:/ {print $2}' "$OUT/summary.txt"); jfr summary clean: $([ "$ok" = 1 ] && echo yes || echo no)"
echo "  jsampler convert peak RSS: ${conv_rss} KiB"
grep 'profiling stopped' "$OUT/stderr" | sed 's/^/  /' || true
[ "$ok" = 1 ] && [ "$growth" -le "$GROWTH_KIB" ] && [ "$over" -le "$OVER_KIB" ] && [ "$dropped" = 0 ]

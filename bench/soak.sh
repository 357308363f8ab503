#!/bin/sh
# Memory soak (make soak; ~11 minutes, not part of make test): a 2-thread CPU-bound JVM profiled at 1 kHz per
# thread for SOAK_SECONDS (default 600) while streaming JFR. The JVM's RSS is read from /proc at 60 s and at the
# end, with the agent's JFR file size and sample count; then the recording is checked with the JDK's jfr tool and
# converted by build/jsampler, whose peak RSS is reported. Prints one summary block; exits non-zero if the RSS grew
# more than SOAK_GROWTH_KIB (default 8192 KiB) between 60 s and the end, or if the recording does not read.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${JSAMPLER_AGENT:-$ROOT/build/libjsampler.so}
CLI=$ROOT/build/jsampler
JAVA_HOME=${JAVA_HOME:-${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}}
SECONDS_TOTAL=${SOAK_SECONDS:-600}
GROWTH_KIB=${SOAK_GROWTH_KIB:-8192}
OUT=$ROOT/build/soak
rm -rf "$OUT"
mkdir -p "$OUT/classes"
"$JAVA_HOME/bin/javac" --release 17 -d "$OUT/classes" "$ROOT/java-test-harness/BenchOps.java"

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# BenchOps: warm-up 1 s, measuring window = the soak, 2 workers.
"$JAVA_HOME/bin/java" "-agentpath:$AGENT=start,event=cpu,interval=1ms,file=$OUT/soak.jfr,loglevel=info" \
    -cp "$OUT/classes" BenchOps 1 "$SECONDS_TOTAL" 2 >"$OUT/stdout" 2>"$OUT/stderr" &
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

echo "soak: ${SECONDS_TOTAL} s, cpu engine at 1 ms, 2 busy threads, JFR streamed ($JAVA_HOME)"
echo "  JVM RSS at 60 s: ${rss60} KiB; at end: ${rss_end} KiB; growth ${growth} KiB (bound ${GROWTH_KIB} KiB)"
echo "  JFR: ${bytes} bytes for ${events} samples ($(awk -v b="$bytes" -v n="$events" 'BEGIN { if (n) printf "%.2f", b / n; else print "-" }') bytes/sample); ${jfr60} bytes after 60 s"
echo "  chunks: $(awk '/^ *Chunks:/ {print $2}' "$OUT/summary.txt"); jfr summary clean: $([ "$ok" = 1 ] && echo yes || echo no)"
echo "  jsampler convert peak RSS: ${conv_rss} KiB"
grep 'profiling stopped' "$OUT/stderr" | sed 's/^/  /' || true
[ "$ok" = 1 ] && [ "$growth" -le "$GROWTH_KIB" ]

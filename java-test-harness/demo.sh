#!/bin/sh
# make demo: profile the bundled order-analytics demo (Demo.java) with the agent and print where the
# flame graph is. A second, shorter run writes collapsed stacks, from which a flat summary is shown.
# The JDK is JAVA_HOME if set, else the java/javac on PATH; JSAMPLER_AGENT overrides the agent library.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${JSAMPLER_AGENT:-$ROOT/build/libjsampler.so}
CLI=$ROOT/build/jsampler
OUT=$ROOT/build/demo
CLASSES=$OUT/classes

if [ -n "${JAVA_HOME:-}" ]; then
    JAVA=$JAVA_HOME/bin/java
    JAVAC=$JAVA_HOME/bin/javac
else
    JAVA=java
    JAVAC=javac
fi
if [ ! -f "$AGENT" ]; then
    echo "demo: $AGENT is not built (run make)" >&2
    exit 1
fi

rm -rf "$CLASSES"
mkdir -p "$CLASSES"
"$JAVAC" --release 17 -d "$CLASSES" "$ROOT/java-test-harness/Demo.java"
rm -f "$OUT/profile.html" "$OUT/profile.collapsed" "$OUT/flat.txt"

echo "== Profiling the demo for 10 s (event=cpu, interval=1ms)"
"$JAVA" "-agentpath:$AGENT=start,event=cpu,interval=1ms,title=jsampler demo,file=$OUT/profile.html" \
    -cp "$CLASSES" Demo 10

echo
echo "== Flat summary (second run, 4 s, collapsed stacks)"
"$JAVA" "-agentpath:$AGENT=start,event=cpu,interval=1ms,loglevel=warn,file=$OUT/profile.collapsed" \
    -cp "$CLASSES" Demo 4 >/dev/null
if [ -x "$CLI" ] && "$CLI" convert --format flat --top 15 "$OUT/profile.collapsed" "$OUT/flat.txt" >/dev/null 2>&1; then
    head -n 40 "$OUT/flat.txt"
else
    # No CLI: the heaviest stacks, leaf frame and share.
    awk '{ n = $NF; total += n; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); self[f[k]] += n }
         END { for (m in self) printf "%6.2f%%  %s\n", 100 * self[m] / total, m }' "$OUT/profile.collapsed" |
        sort -rn | head -n 15
fi

if [ ! -s "$OUT/profile.html" ]; then
    echo "demo: no flame graph was written to $OUT/profile.html" >&2
    exit 1
fi
echo
echo "Flame graph: $OUT/profile.html"

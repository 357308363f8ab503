#!/bin/sh
# JFR round trip with the agent (part of make test): for JDK 17 and JDK 25, profile CpuSplit writing a
# collapsed profile and a JFR recording in one run, then check that
#   - the JDK's own `jfr` tool (summary, print --json) reads every recording with no warning,
#   - every stack and count in `jfr print --json` equals the agent's collapsed output,
#   - `jsampler convert` reads the recording back to the same collapsed stacks and the same flame graph (the kinds of
#     Java frames may differ: see same_page),
#   - a multi-chunk recording (chunksize=64k) and one cut short by SIGTERM mid-run are complete,
#   - of a JVM killed mid-chunk, jsampler convert reads every complete chunk (what the JDK reads from them),
#   - jfrmaxsize caps the file,
#   - on deep distinct stacks with thread churn (DeepChurn), whose stores rotate many times, and per loop= file,
#     the collapsed output and the JFR recording written side by side are the same profile through
#     `jsampler convert`.
# JDK17_HOME / JDK25_HOME override the JDK locations; a missing JDK is skipped with a message.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${JSAMPLER_AGENT:-$ROOT/build/libjsampler.so}
CLI=$ROOT/build/jsampler
OUT=$ROOT/build/jfr-test
PY=/usr/bin/python3
JDK17_HOME=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JDK25_HOME=${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
fails=0
found=0

fail() { echo "FAIL $*"; fails=$((fails + 1)); }
pass() { echo "PASS $*"; }

# jfr_stacks JAVA_HOME FILE OUT: the recording's ExecutionSample stacks as collapsed lines, via the JDK's tool.
jfr_stacks() {
    "$1/bin/jfr" print --json --stack-depth 4096 --events jdk.ExecutionSample "$2" >"$3.json" 2>"$3.err" || return 1
    [ ! -s "$3.err" ] || { cat "$3.err"; return 1; }
    "$PY" "$ROOT/java-test-harness/jfr_stacks.py" "$3.json" >"$3"
}

# same_stacks A B: collapsed files with the same stacks and weights (order ignored).
same_stacks() {
    sort "$1" >"$1.sorted"
    sort "$2" >"$2.sorted"
    cmp -s "$1.sorted" "$2.sorted"
}

# same_page A.html B.html: two flame-graph pages with the same title, unit, total and (stack, self weight) pairs, and
# the same frame kinds except among the Java kinds (interpreted, JIT, inlined, C1): the JFR writer takes a trace's
# frames (and so their kinds) when the trace is first seen in a chunk, the agent's own page when the run ends, and a
# method compiled in between is interpreted in one and compiled in the other. Prints how many stacks differ so.
same_page() {
    "$PY" - "$1" "$2" <<'EOF'
import collections, json, re, sys
JAVA = {0, 1, 2, 6}
def page(path):
    text = open(path, encoding="utf-8").read()
    m = re.search(r'<script id="fg-data" type="application/json">(.*?)</script>', text, re.S)
    d = json.loads(m.group(1))
    names, types, raw = d["names"], d["types"], d["nodes"]
    stacks, exact, path = collections.Counter(), collections.Counter(), []
    prev = 0
    for k in range(0, len(raw), 3):
        f, depth, self_w = raw[k], prev + 1 - raw[k + 1], raw[k + 2]
        del path[depth - 1:]
        t = ord(types[f]) - 48
        path.append((names[f], "J" if t in JAVA else t, t))
        prev = depth
        if self_w:
            stacks[tuple((n, c) for n, c, _ in path)] += self_w
            exact[tuple(path)] += self_w
    return (d["title"], d["unit"], d["total"]), stacks, exact
a, b = page(sys.argv[1]), page(sys.argv[2])
if a[0] != b[0] or a[1] != b[1]:
    sys.exit("%s vs %s; %d stacks differ" % (a[0], b[0], sum(1 for k in set(a[1]) | set(b[1]) if a[1][k] != b[1][k])))
print("%d stacks, %d of them with other Java frame kinds" % (len(a[1]), len(set(a[2]) - set(b[2]))))
EOF
}

check_jdk() {
    n=$1
    home=$2
    if [ ! -x "$home/bin/java" ] || [ ! -x "$home/bin/jfr" ]; then
        echo "SKIP: JDK $n not found at $home"
        return 0
    fi
    found=$((found + 1))
    w=$OUT/jdk$n
    rm -rf "$w"
    mkdir -p "$w/classes"
    "$home/bin/javac" --release 17 -d "$w/classes" "$ROOT/java-test-harness/CpuSplit.java" \
        "$ROOT/java-test-harness/DeepChurn.java"
    echo "== JDK $n ($("$home/bin/java" -version 2>&1 | head -n 1))"

    # 1. One run, two outputs: collapsed and JFR.
    "$home/bin/java" "-agentpath:$AGENT=start,event=cpu,interval=1ms,dot,file=$w/run.collapsed,jfrfile=$w/run.jfr" \
        -cp "$w/classes" CpuSplit 3 2 >"$w/run.out" 2>"$w/run.err" || { fail "jdk$n run exited non-zero"; cat "$w/run.err"; return 0; }
    grep -q "wrote JFR recording" "$w/run.err" || { fail "jdk$n: no JFR line in the log"; cat "$w/run.err"; return 0; }
    if "$home/bin/jfr" summary "$w/run.jfr" >"$w/summary.txt" 2>"$w/summary.err" && [ ! -s "$w/summary.err" ]; then
        pass "jdk$n jfr summary reads the recording ($(grep -E 'jdk.ExecutionSample' "$w/summary.txt" | awk '{print $2}') samples)"
    else
        fail "jdk$n jfr summary"; cat "$w/summary.err"
    fi
    if jfr_stacks "$home" "$w/run.jfr" "$w/jdk.collapsed" && same_stacks "$w/jdk.collapsed" "$w/run.collapsed"; then
        pass "jdk$n jfr print --json: every stack and count equals the collapsed output ($(wc -l <"$w/run.collapsed") stacks)"
    else
        fail "jdk$n jfr print --json differs from the collapsed output"
        diff "$w/jdk.collapsed.sorted" "$w/run.collapsed.sorted" | head -n 10
    fi
    if "$CLI" convert "$w/run.jfr" "$w/ours.collapsed" 2>"$w/convert.err" && same_stacks "$w/ours.collapsed" "$w/run.collapsed"; then
        pass "jdk$n jsampler convert reads the recording back to the same stacks"
    else
        fail "jdk$n jsampler convert of the recording differs"; cat "$w/convert.err"
        [ -f "$w/ours.collapsed.sorted" ] && diff "$w/ours.collapsed.sorted" "$w/run.collapsed.sorted" | head -n 10
    fi
    # The agent's own flame graph and one made from its JFR recording, in one run: the same page.
    "$home/bin/java" "-agentpath:$AGENT=start,event=cpu,interval=1ms,dot,title=T,file=$w/agent.html,jfrfile=$w/html.jfr" \
        -cp "$w/classes" CpuSplit 2 2 >/dev/null 2>"$w/html.err" || true
    "$CLI" convert --title T "$w/html.jfr" "$w/from-jfr.html" 2>/dev/null || true
    r=""
    if [ -s "$w/from-jfr.html" ] && cmp -s "$w/from-jfr.html" "$w/agent.html"; then
        pass "jdk$n flame graph converted from JFR equals the agent's own flame graph"
    elif [ -s "$w/from-jfr.html" ] && r=$(same_page "$w/from-jfr.html" "$w/agent.html"); then
        pass "jdk$n flame graph converted from JFR has the agent's own stacks and weights ($r)"
    else
        fail "jdk$n flame graph from JFR differs from the agent's own: ${r:-}"
    fi

    # 2. Small chunks (64k or 1 s, whichever comes first): many chunks, both readers agree with the collapsed output.
    "$home/bin/java" "-agentpath:$AGENT=start,event=cpu,interval=1ms,dot,chunksize=64k,chunktime=1s,file=$w/chunks.collapsed,jfrfile=$w/chunks.jfr" \
        -cp "$w/classes" CpuSplit 3 2 >/dev/null 2>"$w/chunks.err" || true
    chunks=$("$home/bin/jfr" summary "$w/chunks.jfr" 2>/dev/null | awk '/^ *Chunks:/ {print $2}')
    if [ "${chunks:-0}" -ge 2 ] && jfr_stacks "$home" "$w/chunks.jfr" "$w/chunks.jdk" &&
        same_stacks "$w/chunks.jdk" "$w/chunks.collapsed" && "$CLI" convert "$w/chunks.jfr" "$w/chunks.ours" 2>/dev/null &&
        same_stacks "$w/chunks.ours" "$w/chunks.collapsed"; then
        pass "jdk$n multi-chunk recording ($chunks chunks) read by both tools, same stacks"
    else
        fail "jdk$n multi-chunk recording (chunks=${chunks:-?})"; tail -n 3 "$w/chunks.err"
    fi

    # 3. Stopped mid-run by SIGTERM: the recording is complete.
    "$home/bin/java" "-agentpath:$AGENT=start,event=cpu,interval=1ms,file=$w/term.jfr" \
        -cp "$w/classes" CpuSplit 20 2 >/dev/null 2>"$w/term.err" &
    pid=$!
    sleep 3
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    if "$home/bin/jfr" print --events jdk.ExecutionSample "$w/term.jfr" >/dev/null 2>"$w/term.print.err" &&
        [ ! -s "$w/term.print.err" ] && "$CLI" convert "$w/term.jfr" "$w/term.collapsed" 2>/dev/null &&
        [ -s "$w/term.collapsed" ]; then
        pass "jdk$n recording stopped by SIGTERM mid-run is complete ($(awk '{s += $NF} END {print s}' "$w/term.collapsed") samples)"
    else
        fail "jdk$n recording stopped by SIGTERM"; cat "$w/term.print.err"; tail -n 3 "$w/term.err"
    fi

    # 4. jfrmaxsize caps the file; the capped file still reads.
    "$home/bin/java" "-agentpath:$AGENT=start,event=cpu,interval=1ms,jfrmaxsize=64k,file=$w/cap.jfr" \
        -cp "$w/classes" CpuSplit 3 2 >/dev/null 2>"$w/cap.err" || true
    size=$(stat -c %s "$w/cap.jfr" 2>/dev/null || echo 0)
    if [ "$size" -gt 0 ] && [ "$size" -le 65536 ] && "$home/bin/jfr" summary "$w/cap.jfr" >/dev/null 2>&1; then
        pass "jdk$n jfrmaxsize=64k: $size bytes, readable; $(grep -o '[0-9]* events over jfrmaxsize' "$w/cap.err")"
    else
        fail "jdk$n jfrmaxsize=64k gave $size bytes"; tail -n 3 "$w/cap.err"
    fi

    # 4b. The JVM killed (SIGKILL) while a chunk is half written: the chunks before it are complete on disk and
    #     jsampler convert reads them, warning once about the unfinished one. (The JDK's jfr tool waits for such
    #     a chunk to be finished, as for a live recording, so it is not asked here.) 1 MB chunks at 100 us: the
    #     writer flushes every 256 KB, so once the file passes 1.4 MB a second chunk is partly on disk.
    "$home/bin/java" "-agentpath:$AGENT=start,event=cpu,interval=100us,chunksize=1m,file=$w/killed.jfr" \
        -cp "$w/classes" CpuSplit 60 2 >/dev/null 2>"$w/killed.err" &
    kpid=$!
    waited=0
    while [ "$(stat -c %s "$w/killed.jfr" 2>/dev/null || echo 0)" -lt 1468006 ] && [ $waited -lt 400 ]; do
        sleep 0.1; waited=$((waited + 1))
    done
    kill -9 $kpid 2>/dev/null; wait $kpid 2>/dev/null || true
    # Every complete chunk is recovered: the complete chunks cut out by their headers, read by the JDK's tool, give
    # exactly the stacks and counts convert read from the whole file.
    chunks=$("$PY" - "$w/killed.jfr" "$w/killed.complete.jfr" <<'EOF2' || echo 0
import struct, sys
data = open(sys.argv[1], "rb").read()
off = n = 0
while off + 68 <= len(data) and data[off:off + 4] == b"FLR\0":
    size = struct.unpack(">q", data[off + 8:off + 16])[0]
    if size < 68 or off + size > len(data):
        break
    off, n = off + size, n + 1
open(sys.argv[2], "wb").write(data[:off])
print(n)
EOF2
)
    if "$CLI" convert "$w/killed.jfr" "$w/killed.collapsed" 2>"$w/killed.convert.err" &&
        grep -q "the last chunk was never finished" "$w/killed.convert.err" && grep -q "CpuSplit.burn" "$w/killed.collapsed" &&
        [ "$chunks" -ge 1 ] && jfr_stacks "$home" "$w/killed.complete.jfr" "$w/killed.jdk.collapsed" &&
        same_stacks "$w/killed.jdk.collapsed" "$w/killed.collapsed"; then
        pass "jdk$n JVM killed mid-chunk: all $chunks complete chunks read ($(awk '{s += $NF} END {print s}' "$w/killed.collapsed") samples, the same stacks the JDK reads from them), one warning"
    else
        fail "jdk$n JVM killed mid-chunk (file $(stat -c %s "$w/killed.jfr" 2>/dev/null) bytes after ${waited}00 ms)"
        cat "$w/killed.convert.err"
    fi

    # 4c. Deep distinct stacks (1,000-3,000 frames, cut at jstackdepth=1024) with thread churn: the stores rotate
    #     every second or so (a store holds about 2,000 such samples); collapsed output and JFR recording of the run
    #     are the same profile.
    "$home/bin/java" "-agentpath:$AGENT=start,event=cpu,interval=1ms,jstackdepth=1024,dot,file=$w/deep.collapsed,jfrfile=$w/deep.jfr" \
        -cp "$w/classes" DeepChurn 5 2 distinct >/dev/null 2>"$w/deep.err" || true
    rot=$(sed -n 's/.*rotations=\([0-9]*\).*/\1/p' "$w/deep.err" | tail -n 1)
    if [ "${rot:-0}" -ge 3 ] && "$CLI" convert "$w/deep.jfr" "$w/deep.ours" 2>/dev/null &&
        same_stacks "$w/deep.ours" "$w/deep.collapsed" && "$home/bin/jfr" summary "$w/deep.jfr" >/dev/null 2>"$w/deep.summary.err" &&
        [ ! -s "$w/deep.summary.err" ]; then
        pass "jdk$n deep stacks, $rot store rotations: JFR and collapsed output are the same profile ($(wc -l <"$w/deep.collapsed") stacks, $(stat -c %s "$w/deep.jfr") bytes)"
    else
        fail "jdk$n deep stacks (rotations=${rot:-?}): JFR and collapsed output differ"; tail -n 3 "$w/deep.err"
        [ -f "$w/deep.ours.sorted" ] && diff "$w/deep.ours.sorted" "$w/deep.collapsed.sorted" | head -n 4 | cut -c1-200
    fi
    # 4d. loop=: each collapsed file and the JFR file of the same number are the same profile.
    rm -f "$w"/loop*.collapsed "$w"/loop*.jfr
    "$home/bin/java" "-agentpath:$AGENT=start,event=cpu,interval=1ms,jstackdepth=256,dot,loop=2s,file=$w/loop%n.collapsed,jfrfile=$w/loop%n.jfr" \
        -cp "$w/classes" DeepChurn 7 2 distinct >/dev/null 2>"$w/loop.err" || true
    files=0 bad=""
    for c in "$w"/loop*.collapsed; do
        [ -f "$c" ] || continue
        j=${c%.collapsed}.jfr
        if "$CLI" convert "$j" "$c.ours" 2>/dev/null && same_stacks "$c.ours" "$c"; then files=$((files + 1)); else bad="$bad $(basename "$c")"; fi
    done
    if [ $files -ge 3 ] && [ -z "$bad" ]; then
        pass "jdk$n loop=2s: $files files, each JFR file the same profile as its collapsed file"
    else
        fail "jdk$n loop=2s: $files files agree, differing:${bad:- none}"; tail -n 3 "$w/loop.err"
    fi

    # 5. jsampler convert writes JFR: the agent's collapsed output as a recording the JDK's tool reads to the
    #    same stacks and counts; threads and lines survive collapsed -> JFR -> collapsed.
    if "$CLI" convert "$w/run.collapsed" "$w/export.jfr" 2>"$w/export.err" &&
        "$home/bin/jfr" summary "$w/export.jfr" >/dev/null 2>"$w/export.summary.err" && [ ! -s "$w/export.summary.err" ] &&
        jfr_stacks "$home" "$w/export.jfr" "$w/export.jdk.collapsed" && same_stacks "$w/export.jdk.collapsed" "$w/run.collapsed"; then
        pass "jdk$n collapsed -> JFR by jsampler convert: jfr print --json gives every stack and count back"
    else
        fail "jdk$n collapsed -> JFR by jsampler convert"; cat "$w/export.err" "$w/export.summary.err" 2>/dev/null
    fi
    "$CLI" convert --threads --lines "$w/run.jfr" "$w/tl.collapsed" 2>/dev/null &&
        "$CLI" convert "$w/tl.collapsed" "$w/tl.jfr" 2>/dev/null &&
        "$CLI" convert --threads --lines "$w/tl.jfr" "$w/tl.back.collapsed" 2>/dev/null || true
    if [ -s "$w/tl.collapsed" ] && cmp -s "$w/tl.collapsed" "$w/tl.back.collapsed"; then
        pass "jdk$n threads and lines survive collapsed -> JFR -> collapsed ($(wc -l <"$w/tl.collapsed") stacks)"
    else
        fail "jdk$n threads/lines round trip through JFR output"
    fi
    # Unknown lines are written as 0, not -1 (SkyWalking's OAP shows a 32-bit -1 as :65535): the collapsed input of
    # export.jfr has no lines, so jfr print --json shows 0s there, and no -1 in it or in the agent's recording; and
    # jsampler convert --lines shows no line for them (no ':0').
    nolines=0
    grep -q '"lineNumber": 0,' "$w/export.jdk.collapsed.json" 2>/dev/null || nolines=1
    for j in "$w/export.jdk.collapsed.json" "$w/jdk.collapsed.json"; do
        [ -s "$j" ] && ! grep -q '"lineNumber": -1' "$j" || nolines=1
    done
    if [ $nolines -eq 0 ] && [ -s "$w/tl.collapsed" ] && ! grep -q ':0;\|:0 [0-9]*$\|:-1\|:65535' "$w/tl.collapsed"; then
        pass "jdk$n unknown lines are written as 0 (JFR output, the agent's recording) and never shown as ':0'"
    else
        fail "jdk$n unknown line numbers: -1 in jfr print --json, or a ':0' suffix in convert --lines"
    fi
}

mkdir -p "$OUT"
if [ ! -f "$AGENT" ] || [ ! -x "$CLI" ]; then
    echo "jfr-test: build first (make)" >&2
    exit 1
fi
# The two JDKs side by side (no check here judges time or shares), each in a subshell writing its lines to a log and
# its counts to a file; the logs are printed in order once both are done.
run_jdk() {
    (
        fails=0
        found=0
        check_jdk "$1" "$2"
        echo "$found $fails" >"$OUT/jdk$1.counts"
    ) >"$OUT/jdk$1.log" 2>&1
}
rm -f "$OUT/jdk17.counts" "$OUT/jdk25.counts"
run_jdk 17 "$JDK17_HOME" &
p17=$!
run_jdk 25 "$JDK25_HOME" &
p25=$!
wait $p17 || true
wait $p25 || true
for n in 17 25; do
    cat "$OUT/jdk$n.log"
    if [ -f "$OUT/jdk$n.counts" ]; then
        read -r f x <"$OUT/jdk$n.counts"
        found=$((found + f))
        fails=$((fails + x))
    else
        fail "jdk$n: its checks ended without a result (see $OUT/jdk$n.log)"
    fi
done
if [ "$found" -eq 0 ]; then
    echo "jfr-test: FAILED: no JDK with a jfr tool found"
    exit 1
fi
if [ "$fails" -ne 0 ]; then
    echo "jfr-test: FAILED ($fails checks)"
    exit 1
fi
echo "jfr-test: passed"

#!/bin/sh
# pprof with real readers (make pprof-test, part of make test):
# for JDK 17 and JDK 25, one EventMix run with the agent recording cpu, wall, alloc and lock at once with native frames
# (cstack=fp), each kind as a pprof file (file=run-%e.pb.gz) and all of them in one JFR recording (jfrfile=); the
# collapsed stacks of the run are `jsampler convert --event KIND` of that recording. For each kind:
#   - `go tool pprof -raw` reads the agent's pprof file: its stacks' values give the hot methods' shares of the
#     collapsed output within 0.5 point, with the same total (samples, bytes or ns), for every sample type;
#   - SkyWalking's OAP tree, rebuilt from protobuf's parse as its parser builds it (+1 per Sample message, frames
#     found by position), counts the samples: for cpu and wall every stack's samples as go tool pprof reads them, the
#     collapsed output's total; for alloc and lock one sample per event of the recording (`jfr summary`);
#   - our reader reads what `go tool pprof -proto -symbolize=none` writes back to the same stacks (go tool pprof
#     demangles C++ names again unless told not to);
#   - `jsampler convert --event KIND run.jfr x.pb.gz` is read by go tool pprof with the same shares;
#   - cpu: native, C++ and kernel frames are marked as such (their mappings), as the recording has them; collapsed
#     stacks converted to pprof are read by go tool pprof to the same stacks and counts.
# Then a Go program's own CPU and heap profiles (runtime/pprof, built here with the Go toolchain): `jsampler convert`
# reads them to the stacks `go tool pprof -raw` shows, into every text format, and into JFR with --sample-type samples
# (the JDK's jfr tool reads it), while a JFR of cpu nanoseconds is refused.
# JDK17_HOME / JDK25_HOME override the JDK locations; a missing JDK is skipped with a message.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${JSAMPLER_AGENT:-$ROOT/build/libjsampler.so}
CLI=$ROOT/build/jsampler
OUT=$ROOT/build/pprof-test
PY=/usr/bin/python3
TOOL=$ROOT/java-test-harness/pprof_tool.py
JDK17_HOME=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JDK25_HOME=${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
fails=0
found=0

fail() { echo "FAIL $*"; fails=$((fails + 1)); }
pass() { echo "PASS $*"; }

command -v go >/dev/null || { echo "FAIL go is not installed (make deps installs golang-go)"; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT/py"
export GOCACHE="$OUT/gocache" GOPATH="$OUT/gopath" GO111MODULE=off GOFLAGS=
"$PY" -m grpc_tools.protoc -I"$ROOT/proto" --python_out="$OUT/py" "$ROOT/proto/pprof/profile.proto"

# events JDK FILE TYPE...: how many events of these types the recording holds (jfr summary).
events() {
    home=$1 file=$2
    shift 2
    "$home/bin/jfr" summary "$file" | awk -v types=" $* " 'index(types, " " $1 " ") {n += $2} END {print n + 0}'
}

# same_sorted A B: two files with the same lines, order ignored.
same_sorted() {
    sort "$1" >"$1.sorted"
    sort "$2" >"$2.sorted"
    cmp -s "$1.sorted" "$2.sorted"
}

# same_ratio A B: collapsed files with the same stacks whose weights in B are one multiple of those in A; prints it.
same_ratio() {
    "$PY" - "$1" "$2" <<'EOF'
import sys
def load(p):
    d = {}
    for line in open(p):
        s, _, v = line.rstrip("\n").rpartition(" ")
        d[s] = int(v)
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
ratios = {b[s] / a[s] for s in a if a[s]}
if set(a) != set(b) or len(ratios) != 1:
    sys.exit("the stacks differ, or their values are not one multiple of the samples: %s" % sorted(ratios)[:5])
print(int(ratios.pop()))
EOF
}

# check_kind JDK_HOME DIR KIND WEIGHT_TYPE OTHER_TYPE PERIOD: the sample type of the collapsed weights, the other
# one (cpu, wall: samples times PERIOD ns; alloc, lock: one per event).
check_kind() {
    home=$1 w=$2 k=$3 wt=$4 ot=$5 period=$6
    f=$w/run-$k.pb.gz
    "$CLI" convert --event "$k" "$w/run.jfr" "$w/$k.collapsed"
    case $k in
    alloc) events=$(events "$home" "$w/run.jfr" jdk.ObjectAllocationInNewTLAB jdk.ObjectAllocationOutsideTLAB) ;;
    lock) events=$(events "$home" "$w/run.jfr" jdk.JavaMonitorEnter jdk.ThreadPark) ;;
    *) events=0 ;;
    esac
    r=""
    if "$PY" "$TOOL" raw "$f" "$wt" >"$w/go-$k-$wt.collapsed" 2>"$w/go-$k.err" &&
        r=$("$PY" "$TOOL" shares "$w/$k.collapsed" "$w/go-$k-$wt.collapsed" 10); then
        pass "$n $k: go tool pprof -raw reads the agent's pprof ($wt): $r"
    else
        fail "$n $k: go tool pprof -raw ($wt) differs from the collapsed output: $r"; cat "$w/go-$k.err"
    fi
    r=""
    if ! "$PY" "$TOOL" raw "$f" "$ot" >"$w/go-$k-$ot.collapsed" 2>"$w/go-$k.err"; then
        fail "$n $k: go tool pprof -raw ($ot)"; cat "$w/go-$k.err"
    elif [ "$events" -eq 0 ] && r=$(same_ratio "$w/go-$k-$wt.collapsed" "$w/go-$k-$ot.collapsed") && [ "$r" -eq "$period" ]; then
        pass "$n $k: go tool pprof -raw ($ot): every stack's $ot is its samples times the period, $r ns"
    elif [ "$events" -gt 0 ] && r=$(awk '{s += $NF} END {print s}' "$w/go-$k-$ot.collapsed") && [ "$r" -eq "$events" ]; then
        pass "$n $k: go tool pprof -raw ($ot): $r in all, one per event of the recording"
    else
        fail "$n $k: go tool pprof -raw ($ot): $r (events in the recording: $events, period $period)"
    fi
    # SkyWalking's OAP: one per Sample message
    if "$PY" "$TOOL" oap "$f" "$OUT/py" >"$w/oap-$k.collapsed" 2>"$w/oap-$k.count"; then
        msgs=$(cat "$w/oap-$k.count")
        case $k in
        cpu | wall)
            sed 's/:[0-9]*;/;/g; s/:[0-9]* \([0-9]*\)$/ \1/' "$w/oap-$k.collapsed" >"$w/oap-$k.names"
            if same_sorted "$w/oap-$k.names" "$w/go-$k-samples.collapsed" &&
                [ "$msgs" -eq "$(awk '{s += $NF} END {print s}' "$w/$k.collapsed")" ]; then
                pass "$n $k: the OAP's tree counts every sample ($msgs Sample messages, the samples of every stack go tool pprof shows)"
            else
                fail "$n $k: the OAP's tree differs from go tool pprof's samples"
                diff "$w/oap-$k.names.sorted" "$w/go-$k-samples.collapsed.sorted" | head -n 6
            fi ;;
        alloc | lock)
            if [ "$msgs" -eq "$events" ] && [ "$msgs" -gt 0 ]; then
                pass "$n $k: the OAP's tree counts every event ($msgs Sample messages, $events events in the recording)"
            else
                fail "$n $k: $msgs Sample messages, $events events in the recording"
            fi ;;
        esac
    else
        fail "$n $k: protobuf could not parse the agent's pprof"; cat "$w/oap-$k.count"
    fi
    # our reader on what go tool pprof writes
    if go tool pprof -proto -symbolize=none "$f" >"$w/goproto-$k.pb.gz" 2>"$w/goproto-$k.err" &&
        "$CLI" convert "$w/goproto-$k.pb.gz" "$w/goproto-$k.collapsed" && "$CLI" convert "$f" "$w/ours-$k.collapsed" &&
        same_sorted "$w/goproto-$k.collapsed" "$w/ours-$k.collapsed"; then
        pass "$n $k: jsampler convert reads go tool pprof -proto's file to the same stacks ($(wc -l <"$w/ours-$k.collapsed") stacks)"
    else
        fail "$n $k: go tool pprof -proto's file read differently"; cat "$w/goproto-$k.err"
    fi
    # frame kinds: native, C++ and kernel frames marked by their mappings, as the recording has them
    if [ "$k" = cpu ] && "$CLI" convert --event cpu "$w/run.jfr" "$w/kinds.html" &&
        r=$("$PY" "$TOOL" kinds "$f" "$w/kinds.html"); then
        pass "$n $k: frame kinds in the agent's pprof (mappings) as in the recording: $r"
    elif [ "$k" = cpu ]; then
        fail "$n $k: frame kinds: ${r:-}"
    fi
    # collapsed -> pprof by the CLI: samples/count, one per sample
    if [ "$k" = cpu ] && "$CLI" convert "$w/$k.collapsed" "$w/fromcol.pb.gz" &&
        "$PY" "$TOOL" raw "$w/fromcol.pb.gz" samples >"$w/fromcol.collapsed" && same_sorted "$w/fromcol.collapsed" "$w/$k.collapsed"; then
        pass "$n $k: jsampler convert collapsed -> pprof, read by go tool pprof: the same stacks and counts"
    elif [ "$k" = cpu ]; then
        fail "$n $k: collapsed -> pprof"
    fi
    # JFR -> pprof by the CLI
    if "$CLI" convert --event "$k" "$w/run.jfr" "$w/conv-$k.pb.gz" &&
        "$PY" "$TOOL" raw "$w/conv-$k.pb.gz" "$wt" >"$w/conv-$k.collapsed" &&
        r=$("$PY" "$TOOL" shares "$w/$k.collapsed" "$w/conv-$k.collapsed" 10); then
        pass "$n $k: jsampler convert JFR -> pprof, read by go tool pprof: $r"
    else
        fail "$n $k: JFR -> pprof: ${r:-}"
    fi
}

check_jdk() {
    n=jdk$1
    home=$2
    if [ ! -x "$home/bin/java" ] || [ ! -x "$home/bin/jfr" ]; then
        echo "SKIP: JDK $1 not found at $home"
        return 0
    fi
    found=$((found + 1))
    w=$OUT/$n
    mkdir -p "$w/classes"
    "$home/bin/javac" --release 17 -d "$w/classes" "$ROOT/java-test-harness/EventMix.java" \
        "$ROOT/java-test-harness/AllocSplit.java" "$ROOT/java-test-harness/LockSplit.java"
    echo "== JDK $1 ($("$home/bin/java" -version 2>&1 | head -n 1))"
    "$home/bin/java" "-agentpath:$AGENT=start,event=cpu,alloc,lock,wall,interval=1ms,cstack=fp,file=$w/run-%e.pb.gz,jfrfile=$w/run.jfr" \
        -cp "$w/classes" EventMix 4 >"$w/run.out" 2>"$w/run.err" || { fail "$n run exited non-zero"; cat "$w/run.err"; return 0; }
    for k in cpu wall alloc lock; do
        grep -q "wrote pprof profile .* to $w/run-$k.pb.gz" "$w/run.err" || { fail "$n: no pprof line for $k"; cat "$w/run.err"; return 0; }
    done
    if ! "$home/bin/java" "-agentpath:$AGENT=start,pprof" -version >"$w/nofile.out" 2>&1 &&
        grep -q "pprof profile (gzip-compressed) needs file=PATH" "$w/nofile.out"; then
        pass "$n: start,pprof without file= stops the JVM at start-up with one line"
    else
        fail "$n: start,pprof without file="; cat "$w/nofile.out"
    fi
    check_kind "$home" "$w" cpu samples cpu 1000000
    check_kind "$home" "$w" wall samples wall 50000000
    check_kind "$home" "$w" alloc alloc_space alloc_objects 0
    check_kind "$home" "$w" lock delay contentions 0
}

check_go() {
    w=$OUT/go
    mkdir -p "$w"
    echo "== Go ($(go version))"
    if ! go build -o "$w/burn" "$ROOT/java-test-harness/pprof/burn.go" 2>"$w/build.err" ||
        ! "$w/burn" 2 "$w/cpu.pb.gz" "$w/heap.pb.gz" 2>"$w/burn.err"; then
        fail "the Go program did not build or run"; cat "$w/build.err" "$w/burn.err"; return 0
    fi
    for t in cpu samples; do
        "$PY" "$TOOL" raw "$w/cpu.pb.gz" "$t" >"$w/go-$t.collapsed"
        if "$CLI" convert ${t:+--sample-type "$t"} "$w/cpu.pb.gz" "$w/ours-$t.collapsed" &&
            same_sorted "$w/ours-$t.collapsed" "$w/go-$t.collapsed" && grep -q "main.burnA" "$w/ours-$t.collapsed"; then
            pass "Go CPU profile ($t): jsampler convert reads the stacks go tool pprof -raw shows ($(wc -l <"$w/ours-$t.collapsed") stacks)"
        else
            fail "Go CPU profile ($t) read differently"; diff "$w/ours-$t.collapsed.sorted" "$w/go-$t.collapsed.sorted" | head
        fi
    done
    "$PY" "$TOOL" raw "$w/heap.pb.gz" alloc_space >"$w/go-heap.collapsed"
    if "$CLI" convert --sample-type alloc_space "$w/heap.pb.gz" "$w/ours-heap.collapsed" &&
        same_sorted "$w/ours-heap.collapsed" "$w/go-heap.collapsed" && [ -s "$w/ours-heap.collapsed" ]; then
        pass "Go heap profile (alloc_space): the stacks go tool pprof -raw shows"
    else
        fail "Go heap profile read differently"
    fi
    ok=1
    for ext in html txt tree json collapsed; do
        "$CLI" convert "$w/cpu.pb.gz" "$w/cpu.$ext" 2>"$w/conv.err" && [ -s "$w/cpu.$ext" ] || { ok=0; cat "$w/conv.err"; }
    done
    grep -q 'main.burnA' "$w/cpu.html" || ok=0
    [ $ok = 1 ] && pass "Go CPU profile converts to html, flat, tree, json and collapsed" || fail "Go CPU profile conversions"
    if "$CLI" convert --sample-type samples "$w/cpu.pb.gz" "$w/cpu.jfr" 2>"$w/jfr.err" &&
        got=$(events "$JDK17_HOME" "$w/cpu.jfr" jdk.ExecutionSample) &&
        want=$(awk '{s += $NF} END {print s}' "$w/ours-samples.collapsed") && [ "$got" -eq "$want" ]; then
        pass "Go CPU profile -> JFR (--sample-type samples): the JDK's jfr reads $got samples"
    else
        fail "Go CPU profile -> JFR"; cat "$w/jfr.err"
    fi
    if ! "$CLI" convert "$w/cpu.pb.gz" "$w/ns.jfr" 2>"$w/ns.err" && grep -q "samples" "$w/ns.err" && [ ! -s "$w/ns.jfr" ]; then
        pass "Go CPU profile -> JFR of cpu nanoseconds is refused: $(cat "$w/ns.err")"
    else
        fail "a JFR of nanoseconds was not refused"
    fi
}

check_jdk 17 "$JDK17_HOME"
check_jdk 25 "$JDK25_HOME"
check_go
[ "$found" -gt 0 ] || { echo "FAIL no JDK found"; exit 1; }
if [ "$fails" -gt 0 ]; then
    echo "pprof-test: $fails failure(s)"
    exit 1
fi
echo "pprof-test: passed"

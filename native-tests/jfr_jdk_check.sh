#!/bin/sh
# jfr_jdk_check.sh - `jsampler convert` on real JDK Flight Recorder recordings, JDK 17 and JDK 25.
#
# For each JDK found (a missing one is skipped with a SKIP line):
#   1. CPU: records java-test-harness/CpuSplit (2 threads, $JFR_CHECK_SECONDS s, default 5, and at least 1.6 x
#      that in CPU seconds) with -XX:StartFlightRecording=...,settings=profile (jdk.ExecutionSample every 10-20 ms
#      per running thread: several hundred samples) and checks, from `jsampler convert` to collapsed:
#        - the hot method: CpuSplit.burnA is the top self frame, and the self-sample shares of burnA, burnB,
#          burnC are each within SHARE_TOL (0.08 absolute) of the CPU-time truth CpuSplit prints. With 600
#          samples the binomial standard error of a 0.5 share is 0.02, so 0.08 is about 4 sigma; at least
#          MIN_SAMPLES (300) burn samples are required;
#        - every (thread, stack with lines) count equals the one computed with /usr/bin/python3 (json module)
#          from `jfr print --json --stack-depth 4096 --events jdk.ExecutionSample,jdk.NativeMethodSample`,
#          frames named the reader's way (see include/jfr/jfr_read.h); stacks with no frames are left out on both
#          sides (collapsed output cannot show them);
#        - .json output: valid JSON, one EXECUTION_SAMPLE tree, root "all" (id "0", parentId "-1") whose
#          total is the sample count, every parentId an earlier id, every total = self + children's totals;
#        - .html output is written and names CpuSplit.burnA.
#   2. Lock and allocation: records a small program written here (4 threads contending one monitor, parking
#      and allocating) with the TLAB events enabled too, and checks that `--event lock --threads` and
#      `--event alloc --threads` give exactly the per-stack weights computed from `jfr print --json` (lock: ns
#      from the duration; alloc: tlabSize, else allocationSize, or weight; class leaf frame "_[i]" / "_[k]").
#   3. The CLI's refusals, once and without a JDK, on a recording converted from collapsed stacks: a selection
#      (--event, --thread, --from, --to) that matches nothing exits 3 with one line naming it (and, for a thread
#      pattern, the threads there are) and writes nothing; OUTPUT being INPUT (same path, another path, a hard
#      link, a symbolic link to it, stdin) exits 2 and leaves it untouched; a JFR OUTPUT that is a symbolic link
#      is not followed. With each JDK: --thread with no match on the real recording lists its cpusplit threads.
# Needs build/jsampler (make). Exit status: 0 all passed (or every JDK skipped: a SKIP line each), 1 a failure.
#
# Run from anywhere:  sh native-tests/jfr_jdk_check.sh
# Environment: JDK17_HOME, JDK25_HOME (defaults below), JFR_CHECK_SECONDS (5), JFR_JDK_CHECK_DIR
# (build/jfr-jdk-check: recordings and outputs are kept there).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLI=$ROOT/build/jsampler
OUT=${JFR_JDK_CHECK_DIR:-$ROOT/build/jfr-jdk-check}
JDK17=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JDK25=${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
RUN_SECONDS=${JFR_CHECK_SECONDS:-5}
SHARE_TOL=0.08
MIN_SAMPLES=300
PY=/usr/bin/python3
fails=0
found=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
pass() { echo "PASS: $*"; }

# The reader's naming rules, for the Python checks below (must match src/jfr/jfr_read_resolve.c).
NAMES_PY='
import collections, json, re, sys
PRIMS = dict(B="byte", C="char", D="double", F="float", I="int", J="long", S="short", Z="boolean")
def java_class(n):
    n = n or ""
    dims = len(n) - len(n.lstrip("["))
    n = n[dims:]
    if dims and n in PRIMS:
        base = PRIMS[n]
    else:
        if dims and n.startswith("L"):
            n = n[1:]
        if dims:
            n = n.split(";")[0]
        cuts = [i for i in (n.find("/0x"), n.find("+0x")) if i >= 0]
        if cuts:
            n = n[:min(cuts)]
        base = n.replace("/", ".")
    return base + "[]" * dims
def clean(s):
    return re.sub("[;\n\r]", "_", s)
def frame_name(fr, lines):
    m = fr.get("method") or {}
    name = m.get("name") or ""
    if not name:
        return "[unknown_method]"
    cls = java_class((m.get("type") or {}).get("name"))
    s = cls + "." + name if cls else name
    line = fr.get("lineNumber")
    if lines and line is not None and line > 0:
        s += ":%d" % line
    return s
def thread_name(t):
    if not t:
        return "[unknown thread]"
    n = t.get("javaName") or t.get("osName") or ""
    return "[%s tid=%d]" % (n, t.get("osThreadId") or 0) if n else "[tid=%d]" % (t.get("osThreadId") or 0)
def duration_ns(d):
    m = re.fullmatch(r"(-?)PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d+))?S)?", d or "PT0S")
    if not m:
        sys.exit("unparsed duration %r" % d)
    ns = (int(m.group(2) or 0) * 3600 + int(m.group(3) or 0) * 60 + int(m.group(4) or 0)) * 10**9
    ns += int(((m.group(5) or "") + "000000000")[:9])
    return 0 if m.group(1) else ns
def weight_and_leaf(ev):
    t, v = ev["type"], ev["values"]
    if t in ("jdk.ExecutionSample", "jdk.NativeMethodSample"):
        return 1, None
    if t in ("jdk.JavaMonitorEnter", "jdk.ThreadPark"):
        c = v.get("monitorClass") if t == "jdk.JavaMonitorEnter" else v.get("parkedClass")
        return duration_ns(v.get("duration")), (c, "_[i]")
    c = v.get("objectClass")
    if t == "jdk.ObjectAllocationInNewTLAB":
        return (v.get("tlabSize") or v.get("allocationSize") or 0), (c, "_[i]")
    if t == "jdk.ObjectAllocationOutsideTLAB":
        return (v.get("allocationSize") or 0), (c, "_[k]")
    return (v.get("weight") or 0), (c, "_[k]")
def expected(path, threads, lines):
    counts = collections.Counter()
    for ev in json.load(open(path, encoding="utf-8"))["recording"]["events"]:
        v = ev["values"]
        names = []
        if threads:
            names.append(thread_name(v.get("sampledThread") or v.get("eventThread")))
        frames = (v.get("stackTrace") or {}).get("frames") or []
        names += [frame_name(fr, lines) for fr in reversed(frames)]
        w, leaf = weight_and_leaf(ev)
        if leaf and leaf[0] and java_class(leaf[0].get("name")):
            names.append(java_class(leaf[0].get("name")) + leaf[1])
        if names:
            counts[";".join(clean(n) for n in names)] += w
    return counts
def ours(path):
    counts = collections.Counter()
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        counts[stack] += int(n)
    return counts
'

# same_stacks JFR_JSON COLLAPSED THREADS LINES: per-stack weights from the JDK tool equal ours.
same_stacks() {
    "$PY" - "$@" <<EOF
$NAMES_PY
want, got = expected(sys.argv[1], sys.argv[3] == "1", sys.argv[4] == "1"), ours(sys.argv[2])
if want != got:
    keys = sorted(set(want) | set(got), key=lambda k: -abs(want[k] - got[k]))
    for k in keys[:5]:
        if want[k] != got[k]:
            print("  jfr %d, jsampler %d: %s" % (want[k], got[k], k[-200:]))
    sys.exit(1)
print("%d stacks, weight %d" % (len(got), sum(got.values())))
EOF
}

# jfr_json JAVA_HOME EVENTS FILE OUT: `jfr print --json` of the events; fails on an error or any stderr.
jfr_json() {
    "$1/bin/jfr" print --json --stack-depth 4096 --events "$2" "$3" >"$4" 2>"$4.err" && [ ! -s "$4.err" ]
}

# shares COLLAPSED TRUTH_LINE: top self frame is burnA; burn shares within SHARE_TOL of the truth.
shares() {
    "$PY" - "$1" "$2" "$SHARE_TOL" "$MIN_SAMPLES" <<'EOF'
import collections, sys
path, truth_line, tol, min_samples = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
truth = dict(kv.split("=") for kv in truth_line.split()[1:] if kv.startswith("burn"))
self_w = collections.Counter()
for line in open(path, encoding="utf-8"):
    stack, n = line.rstrip("\n").rsplit(" ", 1)
    self_w[stack.split(";")[-1]] += int(n)
top = self_w.most_common(1)[0][0] if self_w else None
burn = {m: self_w["CpuSplit." + m] for m in ("burnA", "burnB", "burnC")}
total = sum(burn.values())
report = " ".join("%s %.3f (truth %.3f)" % (m, burn[m] / max(total, 1), float(truth[m])) for m in sorted(burn))
ok = top == "CpuSplit.burnA" and total >= min_samples and all(
    abs(burn[m] / total - float(truth[m])) <= tol for m in burn)
print("top self frame %s, %d burn samples: %s" % (top, total, report))
sys.exit(0 if ok else 1)
EOF
}

# tree_ok JSON TOTAL: the analysis tree is well formed and holds TOTAL samples.
tree_ok() {
    "$PY" - "$1" "$2" <<'EOF'
import collections, json, sys
doc, total = json.load(open(sys.argv[1], encoding="utf-8")), int(sys.argv[2])
trees = doc["trees"]
assert len(trees) == 1 and trees[0]["type"] == "EXECUTION_SAMPLE", [t["type"] for t in trees]
el = trees[0]["elements"]
root = el[0]
assert (root["id"], root["parentId"], root["codeSignature"]) == ("0", "-1", "all"), root
assert root["total"] == total, (root["total"], total)
seen, child_sum = {}, collections.Counter()
for i, e in enumerate(el):
    assert e["id"] == str(i), e
    if i:
        assert e["parentId"] in seen, e
        child_sum[e["parentId"]] += e["total"]
    seen[e["id"]] = e
for i, e in seen.items():
    assert e["total"] == e["self"] + child_sum[i], e
print("%d elements" % len(el))
EOF
}

# A program with monitor contention, parking and allocation (JFR lock and allocation events).
write_lockmix() {
    cat >"$1/LockMix.java" <<'EOF'
import java.util.concurrent.locks.LockSupport;

/** Four threads contend one monitor (held 15 ms), park 15 ms and allocate, for args[0] seconds. */
public final class LockMix {
    static final Object LOCK = new Object();
    static volatile long sink;

    public static void main(String[] args) throws InterruptedException {
        long end = System.nanoTime() + (long) (Double.parseDouble(args[0]) * 1e9);
        Thread[] threads = new Thread[4];
        for (int i = 0; i < threads.length; i++) {
            threads[i] = new Thread(() -> work(end), "locker-" + i);
            threads[i].start();
        }
        for (Thread t : threads) t.join();
        System.out.println("done " + sink);
    }

    static void work(long end) {
        while (System.nanoTime() < end) {
            synchronized (LOCK) {
                try {
                    Thread.sleep(15);
                } catch (InterruptedException e) {
                    return;
                }
            }
            LockSupport.parkNanos(15_000_000L);
            long s = 0;
            for (int i = 0; i < 64; i++) s += new byte[1 << (10 + (i & 7))].length + String.valueOf(i).length();
            sink += s;
        }
    }
}
EOF
}

# refuses CODE PATTERN ARGS...: `jsampler convert ARGS` exits CODE with exactly one stderr line holding PATTERN.
refuses() {
    rf_code=$1 rf_pat=$2
    shift 2
    "$CLI" convert "$@" >"$OUT/refuses.out" 2>"$OUT/refuses.err"
    rf_rc=$?
    if [ $rf_rc -eq "$rf_code" ] && [ "$(wc -l <"$OUT/refuses.err")" -eq 1 ] && grep -qF -- "$rf_pat" "$OUT/refuses.err"; then
        return 0
    fi
    echo "  convert $* -> exit $rf_rc, want $rf_code and one line with: $rf_pat"
    sed 's/^/  stderr: /' "$OUT/refuses.err"
    return 1
}

# 3. The CLI's refusals (no JDK needed).
check_cli() {
    c=$OUT/cli
    rm -rf "$c"
    mkdir -p "$c"
    printf '[main tid=1];A.a;B.b 5\n[worker-1 tid=2];A.a;C.c 3\n[main tid=3];X.x 1\n' >"$c/in.collapsed"
    : >"$c/empty.collapsed"
    if ! "$CLI" convert "$c/in.collapsed" "$c/rec.jfr" || ! "$CLI" convert "$c/empty.collapsed" "$c/empty.jfr"; then
        fail "cli: collapsed -> jfr"
        return 0
    fi
    cp "$c/rec.jfr" "$c/orig.jfr"
    cpu="no jdk.ExecutionSample or jdk.NativeMethodSample events"
    refuses 3 "$cpu for thread pattern 'foo' (threads in the recording: main, worker-1)" --thread foo "$c/rec.jfr" "$c/o1.collapsed" &&
        refuses 3 "no jdk.ObjectAllocationInNewTLAB, jdk.ObjectAllocationOutsideTLAB or jdk.ObjectAllocationSample events in the recording (--event alloc)" \
            --event alloc "$c/rec.jfr" "$c/o2.collapsed" &&
        refuses 3 "$cpu at or after --from 1h (the recording spans" --from 1h "$c/rec.jfr" "$c/o3.collapsed" &&
        refuses 3 "$cpu before --to 0 (" --to 0 "$c/rec.jfr" "$c/o4.json" &&
        refuses 3 "$cpu for thread pattern 'w*' from --from 1h to --to 2h (" --thread 'w*' --from 1h --to 2h "$c/rec.jfr" "$c/o5.jfr" &&
        refuses 3 "$cpu in the recording (--event cpu)" --event cpu "$c/empty.jfr" "$c/o6.collapsed" &&
        [ ! -e "$c/o1.collapsed" ] && [ ! -e "$c/o2.collapsed" ] && [ ! -e "$c/o3.collapsed" ] && [ ! -e "$c/o4.json" ] &&
        [ ! -e "$c/o5.jfr" ] && [ ! -e "$c/o6.collapsed" ] &&
        "$CLI" convert --thread 'work*' "$c/rec.jfr" "$c/w.collapsed" && [ "$(cat "$c/w.collapsed")" = "A.a;C.c 3" ] &&
        "$CLI" convert "$c/empty.jfr" "$c/empty.out.collapsed" && [ ! -s "$c/empty.out.collapsed" ] &&
        pass "cli: a selection that matches nothing exits 3 with one line naming it and writes nothing" ||
        fail "cli: selections that match nothing"
    ln "$c/rec.jfr" "$c/hard.jfr"
    ln -s rec.jfr "$c/sym.collapsed"
    ln -s orig.jfr "$c/sym-out.jfr"
    same="is the INPUT file"
    refuses 2 "$same" "$c/rec.jfr" "$c/rec.jfr" && refuses 2 "$same" "$c/rec.jfr" "$c/../cli/rec.jfr" &&
        refuses 2 "$same" "$c/rec.jfr" "$c/hard.jfr" && refuses 2 "$same" "$c/rec.jfr" "$c/sym.collapsed" &&
        refuses 2 "$same" --format json "$c/rec.jfr" "$c/sym.collapsed" &&
        refuses 2 "$same" - "$c/rec.jfr" <"$c/rec.jfr" && cmp -s "$c/rec.jfr" "$c/orig.jfr" &&
        refuses 1 "it is a symbolic link (not followed)" "$c/in.collapsed" "$c/sym-out.jfr" &&
        cmp -s "$c/rec.jfr" "$c/orig.jfr" &&
        pass "cli: OUTPUT that is INPUT (path, hard link, symlink, stdin) exits 2, a symlinked JFR OUTPUT is not followed" ||
        fail "cli: OUTPUT that is INPUT, or a symlinked JFR OUTPUT"
}

# check_jdk N JAVA_HOME
check_jdk() {
    n=$1 home=$2
    if [ ! -x "$home/bin/java" ] || [ ! -x "$home/bin/jfr" ] || [ ! -x "$home/bin/javac" ]; then
        echo "SKIP: JDK $n not found at $home"
        return 0
    fi
    found=$((found + 1))
    w=$OUT/jdk$n
    rm -rf "$w"
    mkdir -p "$w/classes"
    write_lockmix "$w"
    echo "== JDK $n ($("$home/bin/java" -version 2>&1 | head -n 1))"
    if ! "$home/bin/javac" --release 17 -d "$w/classes" "$ROOT/java-test-harness/CpuSplit.java" "$w/LockMix.java"; then
        fail "jdk$n javac"
        return 0
    fi

    # 1. CPU (the workers run until they have burnt 1.6 x RUN_SECONDS of CPU: enough samples on a busy machine)
    min_cpu=$(awk "BEGIN {print 1.6 * $RUN_SECONDS}")
    if ! "$home/bin/java" "-XX:StartFlightRecording=filename=$w/cpu.jfr,settings=profile" -cp "$w/classes" \
        CpuSplit "$RUN_SECONDS" 2 "$min_cpu" >"$w/cpu.out" 2>"$w/cpu.err"; then
        fail "jdk$n CpuSplit run"
        tail -n 5 "$w/cpu.err"
        return 0
    fi
    r=""
    truth=$(grep '^TRUTH ' "$w/cpu.out")
    if "$CLI" convert "$w/cpu.jfr" "$w/cpu.collapsed" 2>"$w/convert.err" && r=$(shares "$w/cpu.collapsed" "$truth"); then
        pass "jdk$n hot method: $r"
    else
        fail "jdk$n hot method: ${r:-}"
        cat "$w/convert.err"
    fi
    r=""
    if jfr_json "$home" jdk.ExecutionSample,jdk.NativeMethodSample "$w/cpu.jfr" "$w/cpu.print.json" &&
        "$CLI" convert --threads --lines "$w/cpu.jfr" "$w/cpu-tl.collapsed" &&
        r=$(same_stacks "$w/cpu.print.json" "$w/cpu-tl.collapsed" 1 1); then
        pass "jdk$n per-(thread, stack, line) counts equal jfr print --json: $r"
    else
        fail "jdk$n counts differ from jfr print --json"
        echo "${r:-}"
        cat "$w/cpu.print.json.err" 2>/dev/null
    fi
    r=""
    total=$(awk '{s += $NF} END {print s + 0}' "$w/cpu-tl.collapsed")
    if "$CLI" convert "$w/cpu.jfr" "$w/cpu.json" && r=$(tree_ok "$w/cpu.json" "$total"); then
        pass "jdk$n json analysis tree: $r, total $total"
    else
        fail "jdk$n json analysis tree: ${r:-}"
    fi
    if refuses 3 "for thread pattern 'no-such-thread' (threads in the recording: " --thread no-such-thread \
        "$w/cpu.jfr" "$w/none.collapsed" && grep -q "cpusplit-0" "$OUT/refuses.err" && grep -q "cpusplit-1" "$OUT/refuses.err" &&
        [ ! -e "$w/none.collapsed" ]; then
        pass "jdk$n --thread with no match: exit 3, $(cut -c1-160 "$OUT/refuses.err")"
    else
        fail "jdk$n --thread with no match"
    fi
    if "$CLI" convert "$w/cpu.jfr" "$w/cpu.html" && [ -s "$w/cpu.html" ] && grep -q 'CpuSplit.burnA' "$w/cpu.html"; then
        pass "jdk$n html flame graph written ($(wc -c <"$w/cpu.html") bytes)"
    else
        fail "jdk$n html output"
    fi

    # 2. Lock and allocation
    settings="settings=profile,jdk.ObjectAllocationInNewTLAB#enabled=true,jdk.ObjectAllocationOutsideTLAB#enabled=true"
    if ! "$home/bin/java" "-XX:StartFlightRecording=filename=$w/lock.jfr,$settings" -cp "$w/classes" \
        LockMix 3 >"$w/lock.out" 2>"$w/lock.err"; then
        fail "jdk$n LockMix run"
        tail -n 5 "$w/lock.err"
        return 0
    fi
    for kind in lock alloc; do
        r=""
        case $kind in
        lock) events=jdk.JavaMonitorEnter,jdk.ThreadPark ;;
        alloc) events=jdk.ObjectAllocationInNewTLAB,jdk.ObjectAllocationOutsideTLAB,jdk.ObjectAllocationSample ;;
        esac
        if jfr_json "$home" "$events" "$w/lock.jfr" "$w/$kind.print.json" &&
            "$CLI" convert --event $kind --threads "$w/lock.jfr" "$w/$kind.collapsed" &&
            [ -s "$w/$kind.collapsed" ] && r=$(same_stacks "$w/$kind.print.json" "$w/$kind.collapsed" 1 0); then
            pass "jdk$n --event $kind weights equal jfr print --json: $r"
        else
            fail "jdk$n --event $kind differs from jfr print --json"
            echo "${r:-}"
        fi
    done
}

if [ ! -x "$CLI" ]; then
    echo "jfr-jdk-check: build first (make)" >&2
    exit 1
fi
mkdir -p "$OUT" || exit 1
check_cli
check_jdk 17 "$JDK17"
check_jdk 25 "$JDK25"
if [ "$fails" -ne 0 ]; then
    echo "jfr-jdk-check: FAILED ($fails checks)"
    exit 1
fi
[ "$found" -eq 0 ] && echo "jfr-jdk-check: SKIP (no JDK found)" && exit 0
echo "jfr-jdk-check: passed"

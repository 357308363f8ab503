#!/bin/sh
# jfr_tool_check.sh - check the JFR writer's files with the JDK's own `jfr` tool (JDK 17 and 25).
#
# Builds native-tests/jfr_write_driver.c with the writer sources, writes (a) a single-chunk file,
# (b) a multi-chunk file (16 KiB chunks), (c) a file capped at 40000 bytes, (d) a file whose stacks
# are named by several keys each and written each in a checkpoint of its own (many checkpoints
# chained in every chunk), each with an expectation
# file, then for every JDK found runs `jfr summary`, `jfr print --json --events jdk.ExecutionSample`
# and `jfr print --events jdk.ActiveSetting` and requires: exit status 0, nothing on stderr, the
# chunk and event counts, every (thread, stack) event count with method names, descriptors, line
# numbers, bytecode indexes and frame types exactly as written, and the settings. Also reports the
# bytes per event of 100k samples over 50 stacks. Exit status 0 = all passed (or no JDK found: a
# SKIP line is printed), 1 = a failure.
#
# Optional: with JFR_OAP_CLASSES set to a directory holding async-profiler 3.0's reader classes
# (javac of its src/converter/one/jfr/**/*.java at tag v3.0, the reader SkyWalking's OAP uses), the
# same files are also read chunk by chunk the way the OAP does and the per-stack counts compared.
#
# Run from anywhere:  sh native-tests/jfr_tool_check.sh
# Environment: JDK17_HOME, JDK25_HOME (defaults below), CC (gcc), JFR_CHECK_DIR (build/jfr-tool-check),
# JFR_OAP_CLASSES (unset: OAP reader check skipped).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${JFR_CHECK_DIR:-$ROOT/build/jfr-tool-check}
JDK17=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JDK25=${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
PY=/usr/bin/python3
failures=0

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

mkdir -p "$OUT" || exit 1
DRIVER=$OUT/jfr_write_driver
${CC:-gcc} -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -O2 -g -D_GNU_SOURCE \
    -I"$ROOT/include" -o "$DRIVER" "$ROOT/native-tests/jfr_write_driver.c" \
    "$ROOT"/src/jfr/jfr_write*.c "$ROOT/src/jfr/jfr_meta.c" "$ROOT/src/jfr/jfr_pool.c" "$ROOT/src/util/safefile.c" || { echo "FAIL: driver build" >&2; exit 1; }

for mode in single multi capped flushed; do
    "$DRIVER" $mode "$OUT/$mode.jfr" "$OUT/$mode.expect.json" || fail "driver $mode"
done

# The capped file must respect its cap and must have dropped events.
"$PY" - "$OUT/capped.jfr" "$OUT/capped.expect.json" <<'EOF' || fail "capped file size"
import json, os, sys
e = json.load(open(sys.argv[2]))
size = os.path.getsize(sys.argv[1])
if size > e["max_size"] or e["dropped"] == 0 or e["events"] == 0:
    sys.exit("size %d cap %d events %d dropped %d" % (size, e["max_size"], e["events"], e["dropped"]))
EOF

# run_jfr JDK NAME ARGS...: run the tool into $OUT/NAME.out; fail on a non-zero exit or any stderr.
run_jfr() {
    rj_tool=$1/bin/jfr rj_name=$2
    shift 2
    "$rj_tool" "$@" > "$OUT/$rj_name.out" 2> "$OUT/$rj_name.err"
    rj_rc=$?
    if [ $rj_rc -ne 0 ] || [ -s "$OUT/$rj_name.err" ]; then
        fail "$rj_tool $* (exit $rj_rc):"
        head -20 "$OUT/$rj_name.err" >&2
        return 1
    fi
}

# check_summary SUMMARY EXPECT: chunk count and ExecutionSample count.
check_summary() {
    "$PY" - "$1" "$2" <<'EOF'
import json, re, sys
text, e = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
chunks = re.search(r"Chunks:\s+(\d+)", text)
samples = re.search(r"jdk\.ExecutionSample\s+(\d+)", text)
got = (int(chunks.group(1)) if chunks else None, int(samples.group(1)) if samples else 0)
if got != (e["chunks"], e["events"]):
    sys.exit("summary: chunks/events %s, expected %s" % (got, (e["chunks"], e["events"])))
EOF
}

# check_samples JSON EXPECT: per (thread, stack) counts and every frame's fields.
check_samples() {
    "$PY" - "$1" "$2" <<'EOF'
import collections, json, sys
events = json.load(open(sys.argv[1]))["recording"]["events"]
e = json.load(open(sys.argv[2]))
norm = lambda s: s.replace("/", ".")
got = collections.Counter()
for ev in events:
    v = ev["values"]
    t = v["sampledThread"]
    name = t["javaName"] if t["javaName"] is not None else t["osName"]
    if v["stackTrace"]["truncated"]:
        sys.exit("unexpected truncated stack")
    frames = tuple((norm(f["method"]["type"]["name"]), f["method"]["name"], norm(f["method"]["descriptor"]),
                    f["lineNumber"], f["bytecodeIndex"], f["type"]) for f in v["stackTrace"]["frames"])
    if v["state"] != "STATE_RUNNABLE":
        sys.exit("state %r" % v["state"])
    got[(name, frames)] += 1
want = collections.Counter()
for s in e["stacks"]:
    want[(s["thread"], tuple((norm(c), m, norm(d), l, b, ty) for c, m, d, l, b, ty in s["frames"]))] += s["count"]
if got != want:
    for k in sorted(set(got) | set(want), key=repr):
        if got[k] != want[k]:
            print("  %s x%d, expected x%d" % (repr(k)[:300], got[k], want[k]), file=sys.stderr)
    sys.exit("per-stack counts differ")
if sum(got.values()) != e["events"]:
    sys.exit("total %d != %d" % (sum(got.values()), e["events"]))
EOF
}

# check_settings TEXT EXPECT: every setting (name, value) appears in each chunk's ActiveSetting events.
check_settings() {
    "$PY" - "$1" "$2" <<'EOF'
import collections, json, re, sys
text, e = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
pairs = collections.Counter(re.findall(r'name = "([^"]*)"\s+value = "([^"]*)"', text))
want = collections.Counter({tuple(p): e["chunks"] for p in e["settings"]})
if pairs != want:
    sys.exit("settings %s, expected %s" % (dict(pairs), dict(want)))
EOF
}

ran=0
for jdk in "$JDK17" "$JDK25"; do
    if [ ! -x "$jdk/bin/jfr" ]; then
        echo "SKIP: no $jdk/bin/jfr"
        continue
    fi
    ran=$((ran + 1))
    v=$(basename "$jdk")
    for mode in single multi capped flushed; do
        f=$OUT/$mode.jfr x=$OUT/$mode.expect.json
        run_jfr "$jdk" "$v-$mode-summary" summary "$f" &&
            { check_summary "$OUT/$v-$mode-summary.out" "$x" || fail "$v $mode: summary"; }
        run_jfr "$jdk" "$v-$mode-samples" print --json --stack-depth 4096 --events jdk.ExecutionSample "$f" &&
            { check_samples "$OUT/$v-$mode-samples.out" "$x" || fail "$v $mode: samples"; }
        run_jfr "$jdk" "$v-$mode-settings" print --events jdk.ActiveSetting "$f" &&
            { check_settings "$OUT/$v-$mode-settings.out" "$x" || fail "$v $mode: settings"; }
        run_jfr "$jdk" "$v-$mode-all" print "$f" || true # every event prints without error
    done
    echo "$v: checked single, multi-chunk, capped and checkpoint-per-trace files"
done

# check_oap: read the files with async-profiler 3.0's JfrReader as SkyWalking's JFRConverter does.
check_oap() {
    java=
    for oap_jdk in "$JDK17" "$JDK25"; do [ -x "$oap_jdk/bin/javac" ] && java=$oap_jdk && break; done
    [ -n "$java" ] || { echo "SKIP: OAP reader check: no javac"; return 0; }
    mkdir -p "$OUT/oap" && cat > "$OUT/oap/JsamplerOapCheck.java" <<'EOF'
import one.jfr.*;
import one.jfr.event.ExecutionSample;
import java.nio.charset.StandardCharsets;
import java.util.*;

/* Prints "chunks N", then "thread<TAB>frame;frame...<TAB>count" per stack, frame = name:type[:line]. */
public class JsamplerOapCheck {
    static JfrReader jfr;
    static String str(long key) { return new String(jfr.symbols.get(key), StandardCharsets.UTF_8); }
    static String method(long id, byte type) {
        MethodRef m = jfr.methods.get(id);
        String cls = str(jfr.classes.get(m.cls).name);
        boolean nat = type == 3 && jfr.getEnumValue("jdk.types.FrameType", 5) != null || type == 4 || type == 5;
        return cls.isEmpty() || nat ? str(m.name) : cls.replace('/', '.') + "." + str(m.name);
    }
    public static void main(String[] a) throws Exception {
        jfr = new JfrReader(a[0]);
        jfr.stopAtNewChunk = true;
        Map<String, Integer> counts = new TreeMap<>();
        int chunks = 0;
        while (!jfr.eof()) {
            chunks++;
            for (ExecutionSample e; (e = jfr.readEvent(ExecutionSample.class)) != null; ) {
                StackTrace st = jfr.stackTraces.get(e.stackTraceId);
                StringJoiner sj = new StringJoiner(";");
                for (int i = 0; i < st.methods.length; i++) {
                    int line = st.locations[i] >> 16;
                    sj.add(method(st.methods[i], st.types[i]) + ":" + st.types[i] + (line >= -1 && line < 32768 ? ":" + line : ""));
                }
                counts.merge(jfr.threads.get(e.tid) + "\t" + sj, 1, Integer::sum);
            }
        }
        if (jfr.incomplete()) throw new IllegalStateException("incomplete");
        System.out.println("chunks " + chunks);
        counts.forEach((k, v) -> System.out.println(k + "\t" + v));
    }
}
EOF
    "$java/bin/javac" -cp "$JFR_OAP_CLASSES" -d "$OUT/oap" "$OUT/oap/JsamplerOapCheck.java" || { fail "JsamplerOapCheck build"; return 0; }
    for mode in single multi capped flushed; do
        "$java/bin/java" -cp "$JFR_OAP_CLASSES:$OUT/oap" JsamplerOapCheck "$OUT/$mode.jfr" > "$OUT/oap/$mode.out" ||
            { fail "OAP reader on $mode"; continue; }
        "$PY" - "$OUT/oap/$mode.out" "$OUT/$mode.expect.json" <<'EOF' || fail "OAP reader $mode: counts"
import collections, json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
e = json.load(open(sys.argv[2]))
types = ["Interpreted", "JIT compiled", "Inlined", "Native", "C++", "Kernel", "C1 compiled"]
want = collections.Counter()
for s in e["stacks"]:
    fr = []
    for c, m, d, l, b, t in s["frames"]:
        ty = types.index(t)
        name = m if c == "" or ty in (4, 5) else c.replace("/", ".") + "." + m
        fr.append("%s:%d%s" % (name, ty, ":%d" % l if -1 <= l < 32768 else ""))
    want[(s["thread"], ";".join(fr))] += s["count"]
got = collections.Counter()
for ln in lines[1:]:
    t, f, c = ln.split("\t")
    got[(t, f)] += int(c)
if lines[0] != "chunks %d" % e["chunks"] or got != want:
    sys.exit("OAP reader: %s, %d stacks differ" % (lines[0], sum(1 for k in set(got) | set(want) if got[k] != want[k])))
EOF
    done
    echo "OAP reader (async-profiler 3.0 JfrReader): checked single, multi-chunk, capped and checkpoint-per-trace files"
}
if [ -n "${JFR_OAP_CLASSES:-}" ]; then check_oap; else echo "SKIP: OAP reader check (JFR_OAP_CLASSES not set)"; fi

if "$DRIVER" bench "$OUT/bench.jfr" 100000 50 > "$OUT/bench.out"; then
    echo "bench (100000 events, 50 stacks): $(cat "$OUT/bench.out")"
else
    fail "bench"
fi

if [ $failures -ne 0 ]; then
    echo "jfr_tool_check: $failures failure(s)" >&2
    exit 1
fi
[ $ran -eq 0 ] && echo "SKIP: jfr_tool_check found no JDK jfr tool; nothing was checked"
echo "jfr_tool_check: passed"
exit 0

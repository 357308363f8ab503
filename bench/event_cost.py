#!/usr/bin/python3
"""event_cost.py - what alloc and lock profiling and native frames cost (make event-cost; not part of make test).

BenchEvents (java-test-harness) in its alloc and lock modes, side by side in one run: no profiler, jsampler at the
defaults (alloc: one sample per 512 KiB; lock: waits of 10 us and longer, to a JFR file), and the JDK's JFR with its
equivalents (jdk.ObjectAllocationSample at its default throttle of 150 events/s; jdk.JavaMonitorEnter and
jdk.ThreadPark with the same 10 us threshold). In its zip mode (most time in zlib), cpu sampling at 1 ms without
native frames, with cstack=fp and with cstack=dwarf, beside the JDK's JFR sampling Java and native-method stacks at
1 ms (it records no native frames). Variants are interleaved round by round; each figure is the median
of the rounds' throughput relative to the same round's run without a profiler.

    /usr/bin/python3 bench/event_cost.py [rounds=5] [window_s=5] [threads=2]

JAVA_HOME picks the JDK (default 17); JSAMPLER_AGENT the library; EVENT_COST_MODES the modes (default
"alloc lock zip"). Output: one line per mode and variant.
"""
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JAVA_HOME = Path(os.environ.get("JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64"))
AGENT = os.environ.get("JSAMPLER_AGENT", str(ROOT / "build/libjsampler.so"))


def jfc(tmp, events):
    """A JFR settings file enabling only the given events ({name: {setting: value}})."""
    body = "".join(f'<event name="{n}">' + "".join(f'<setting name="{k}">{v}</setting>' for k, v in s.items()) +
                   "</event>" for n, s in events.items())
    path = Path(tmp) / f"s{abs(hash(str(events)))}.jfc"
    path.write_text(f'<?xml version="1.0" encoding="UTF-8"?><configuration version="2.0">{body}</configuration>')
    return str(path)


def variants(mode, tmp):
    out = Path(tmp) / "out.jfr"
    if mode == "alloc":
        jfr = jfc(tmp, {"jdk.ObjectAllocationSample": {"enabled": "true", "throttle": "150/s", "stackTrace": "true"}})
        return [("none", []), ("jsampler alloc (512k)", [f"-agentpath:{AGENT}=start,event=alloc,file={out}"]),
                ("JFR ObjectAllocationSample (150/s)", [f"-XX:StartFlightRecording=filename={out},settings={jfr}"])]
    if mode == "zip":
        jfr = jfc(tmp, {"jdk.ExecutionSample": {"enabled": "true", "period": "1 ms"},
                        "jdk.NativeMethodSample": {"enabled": "true", "period": "1 ms"}})
        cpu = f"-agentpath:{AGENT}=start,event=cpu,interval=1ms,file={out}"
        return [("none", []), ("jsampler cpu 1ms", [cpu]), ("jsampler cpu 1ms cstack=fp", [cpu + ",cstack=fp"]),
                ("jsampler cpu 1ms cstack=dwarf", [cpu + ",cstack=dwarf"]),
                ("JFR Execution+NativeMethodSample 1ms", [f"-XX:StartFlightRecording=filename={out},settings={jfr}"])]
    jfr = jfc(tmp, {"jdk.JavaMonitorEnter": {"enabled": "true", "threshold": "10 us", "stackTrace": "true"},
                    "jdk.ThreadPark": {"enabled": "true", "threshold": "10 us", "stackTrace": "true"}})
    return [("none", []), ("jsampler lock (10us)", [f"-agentpath:{AGENT}=start,event=lock,file={out}"]),
            ("JFR MonitorEnter+ThreadPark (10us)", [f"-XX:StartFlightRecording=filename={out},settings={jfr}"])]


def run(mode, jvm_args, classes, window, threads):
    cmd = [str(JAVA_HOME / "bin/java"), "-Xmx256m", *jvm_args, "-cp", classes, "BenchEvents", mode, "3",
           str(window), str(threads)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    for line in res.stdout.splitlines():
        if line.startswith("OPS "):
            return float(line.split()[1])
    raise RuntimeError(f"no OPS line from {' '.join(cmd)}: {res.stderr[-500:]}")


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    window = sys.argv[2] if len(sys.argv) > 2 else "5"
    threads = sys.argv[3] if len(sys.argv) > 3 else "2"
    with tempfile.TemporaryDirectory(prefix="event-cost-") as tmp:
        classes = str(Path(tmp) / "classes")
        subprocess.run([str(JAVA_HOME / "bin/javac"), "-d", classes, str(ROOT / "java-test-harness/BenchEvents.java")],
                       check=True)
        print(f"event-cost: {JAVA_HOME.name}, {rounds} rounds, {window} s windows, {threads} threads")
        modes = os.environ.get("EVENT_COST_MODES", "alloc lock zip").split()
        for mode in modes:
            vs = variants(mode, tmp)
            ratios = {name: [] for name, _ in vs[1:]}
            base_ops = []
            for _ in range(rounds):
                ops = {name: run(mode, args, classes, window, threads) for name, args in vs}
                base_ops.append(ops["none"])
                for name in ratios:
                    ratios[name].append(ops[name] / ops["none"])
            print(f"  {mode}: without a profiler {statistics.median(base_ops):,.0f} ops/s (median)")
            for name, r in ratios.items():
                print(f"    {name:38s} throughput {statistics.median(r):.3f} of none  [{min(r):.3f}..{max(r):.3f}]  "
                      f"overhead {100 * (1 - statistics.median(r)):+.1f}%")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""run.py: the task client's end-to-end checks (make backend-test) on JDK 17 and JDK 25: checks.py (async-profiler
tasks, the client's resilience) and checks_pprof.py (pprof tasks).

    /usr/bin/python3 java-test-harness/backend/run.py [--only check,check] [--jdk 17|25]

Per JDK: compiles the workloads into build/backend-test/jdkNN/classes and runs every check of checks.py against
fresh test backends (oap.py): pprof-events on a lane of its own beside two lanes of the others, then basic and the
size plans; the two JDKs run side by side (their checks judge shares of CPU time and sizes, which another JVM beside
them does not change, and most of a check is waiting on its task's duration). A missing JDK is skipped with a message; with
neither the run fails. The fleet check (50 JVMs) runs on the first JDK only: it tests the backend client, not the
JVM. Logs of every JVM and backend stay in build/backend-test/jdkNN/<check>/."""
import argparse
import collections
import concurrent.futures
import os
import shutil
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import ROOT, Backend, CheckFailed  # noqa: E402
import checks  # noqa: E402
import checks_pprof  # noqa: E402

CHECKS = dict(checks.CHECKS, **checks_pprof.CHECKS)

JDKS = {"17": os.environ.get("JDK17_HOME", "/usr/lib/jvm/java-17-openjdk-amd64"),
        "25": os.environ.get("JDK25_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")}
WORKLOADS = ["CpuSplit.java", "TaskLoad.java", "EventMix.java", "AllocSplit.java", "LockSplit.java", "HeapSplit.java"]


class Ctx:
    def __init__(self, home, label, work, classes):
        self.java = f"{home}/bin/java"
        self.jfr_tool = f"{home}/bin/jfr"
        self.agent = os.environ.get("JSAMPLER_AGENT", str(ROOT / "build/libjsampler.so"))
        self.classes = classes
        self.label = label
        self.work = work
        self.backends = []
        self.notes = []

    def backend(self, name, *extra, port=0, state=None):
        b = Backend(self.work, name, *extra, port=port, state=state)
        self.backends.append(b)
        return b

    def dir(self, name):
        d = self.work / name
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
        return str(d)

    def note(self, text):
        self.notes.append(text)

    def cleanup(self):
        for b in self.backends:
            b.stop()
        self.backends = []


# pprof-events (four one-minute tasks; its CPU task wants 1,200 samples: CpuSplit busy until it used 15 CPU-s)
# runs on a lane of its own beside the other checks, which mostly wait on their tasks' durations with light
# workloads: two lanes take them from one queue, the longest first (SHARED_LANES, LONG_FIRST), so that neither lane
# waits on the other. The checks that need the CPU their workload asks for come after both lanes, alone (with the
# other JDK's): basic judges shares over a 6 s task (beside the lanes it got 152 samples of the 1,200 it is sized
# for), and the size plans are made from the CPU the workload gets (beside the lanes a 16-thread workload got 0.9
# CPUs and its recording fit without a plan; docs/BENCHMARKS.md, "make test time").
OWN_LANE = ["pprof-events"]
AFTER = ["basic", "size-plan", "size-adapt"]
SHARED_LANES = 2
LONG_FIRST = ["events", "sigterm-mid-upload", "task-errors", "unimplemented-http1", "exit-mid-task", "fleet"]


def run_check(label, home, name, fn, base, classes):
    """One check in its own directory with its own backends; returns its label if it failed."""
    work = base / name
    work.mkdir(parents=True)
    ctx = Ctx(home, label, work, classes)
    t0 = time.monotonic()
    try:
        fn(ctx)
        print(f"PASS jdk{label} {name} ({time.monotonic() - t0:.1f} s)" +
              "".join(f"\n     {n}" for n in ctx.notes), flush=True)
        return None
    except (CheckFailed, Exception) as e:  # every check runs, whatever one of them does
        detail = str(e) if isinstance(e, CheckFailed) else traceback.format_exc()
        print(f"FAIL jdk{label} {name} ({time.monotonic() - t0:.1f} s): {detail}\n     logs: {work}", flush=True)
        return f"jdk{label} {name}"
    finally:
        ctx.cleanup()
        # no JVM outlives its check (Jvm marks each with the check's directory; "--": the pattern starts with "-")
        subprocess.run(["pkill", "-f", "--", f"-Djsampler.check={work} "], capture_output=True)


def run_jdk(label, home, only, with_fleet, together):
    base = ROOT / "build/backend-test" / f"jdk{label}"
    shutil.rmtree(base, ignore_errors=True)
    classes = base / "classes"
    classes.mkdir(parents=True)
    try:
        subprocess.run([f"{home}/bin/javac", "--release", "17", "-d", str(classes)] +
                       [str(ROOT / "java-test-harness" / w) for w in WORKLOADS], check=True)
    except subprocess.CalledProcessError:
        together.abort()  # the other JDK does not wait for this one
        raise
    names = [n for n in CHECKS if not only or n in only]
    if "fleet" in names and not with_fleet and not only:
        print(f"SKIP jdk{label} fleet: runs on the first JDK only")
        names.remove("fleet")
    shared = [n for n in names if n not in OWN_LANE + AFTER]
    shared.sort(key=lambda n: LONG_FIRST.index(n) if n in LONG_FIRST else len(LONG_FIRST))
    queue = collections.deque(shared)

    def lane(checks):
        return [f for f in (run_check(label, home, n, CHECKS[n], base, classes) for n in checks) if f]

    def shared_lane():
        failed = []
        while True:
            try:
                n = queue.popleft()  # deque operations are atomic: each check is taken by one lane
            except IndexError:
                return failed
            f = run_check(label, home, n, CHECKS[n], base, classes)
            if f:
                failed.append(f)

    with concurrent.futures.ThreadPoolExecutor(max_workers=1 + SHARED_LANES) as pool:
        runs = [pool.submit(lane, [n for n in OWN_LANE if n in names])]
        runs += [pool.submit(shared_lane) for _ in range(SHARED_LANES)]
        failed = [f for r in runs for f in r.result()]
    try:  # the other JDK's lanes done too, so that the size plans see only each other
        together.wait(timeout=1800)
    except threading.BrokenBarrierError:
        pass
    return failed + lane([n for n in AFTER if n in names])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", help="comma-separated check names: " + ", ".join(CHECKS))
    p.add_argument("--jdk", choices=sorted(JDKS), help="one JDK only")
    a = p.parse_args()
    only = set(a.only.split(",")) if a.only else None
    if only and only - set(CHECKS):
        p.error(f"unknown checks: {', '.join(sorted(only - set(CHECKS)))}")
    runs = []
    for label, home in JDKS.items():
        if a.jdk and a.jdk != label:
            continue
        if not os.access(f"{home}/bin/java", os.X_OK):
            print(f"SKIP: JDK {label} not found at {home}")
            continue
        runs.append((label, home, not runs))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(runs))) as pool:
        together = threading.Barrier(len(runs))
        results = [pool.submit(run_jdk, label, home, only, fleet, together) for label, home, fleet in runs]
        failed = [f for r in results for f in r.result()]
    ran = len(runs)
    if not ran:
        print("backend-test: no JDK found")
        return 1
    print(f"backend-test: {'FAILED ' + ', '.join(failed) if failed else 'passed'} ({ran} JDKs)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

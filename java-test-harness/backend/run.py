#!/usr/bin/python3
"""run.py: the task client's end-to-end checks (make backend-test) on JDK 17 and JDK 25: checks.py (async-profiler
tasks, the client's resilience) and checks_pprof.py (pprof tasks).

    /usr/bin/python3 java-test-harness/backend/run.py [--only check,check] [--jdk 17|25]

Per JDK: compiles the workloads into build/backend-test/jdkNN/classes; then every check of both JDKs runs against
fresh test backends (oap.py), PARALLEL at a time: most of a check is waiting on its task's duration, and shares of CPU
time do not change with another JVM beside them. The checks in ALONE (sizes and rates planned from what the machine
gives) run alone, under the machine lock that make test's phases share (tools/machine_lock.sh). A missing JDK is
skipped with a message; with neither the run fails. The fleet check (50 JVMs) runs on the first JDK only: it tests
the backend client, not the JVM. Logs of every JVM and backend stay in
build/backend-test/jdkNN/<check>/."""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import ROOT, Backend, CheckFailed, MachineLock  # noqa: E402
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


# Checks that judge rates, sizes or timing against what the machine gives (the size plan, the adaptation, 50 JVMs
# at once) run alone; the others mostly wait on their tasks and share the machine.
ALONE = {"size-plan", "size-adapt", "fleet"}
PARALLEL = 4  # checks in flight at once, of both JDKs


def prepare_jdk(label, home, lock):
    """Compiles the workloads of one JDK into build/backend-test/jdkNN/classes; the JDK's base directory."""
    base = ROOT / "build/backend-test" / f"jdk{label}"
    shutil.rmtree(base, ignore_errors=True)
    classes = base / "classes"
    classes.mkdir(parents=True)
    with lock.hold(False):
        subprocess.run([f"{home}/bin/javac", "--release", "17", "-d", str(classes)] +
                       [str(ROOT / "java-test-harness" / w) for w in WORKLOADS], check=True)
    return base


def run_check(label, home, base, name, fn, lock):
    """One check in its own directory, holding the machine lock in its mode; its name if it failed."""
    work = base / name
    work.mkdir(parents=True)
    ctx = Ctx(home, label, work, base / "classes")
    with lock.hold(name in ALONE):
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
            # no JVM outlives its check (Jvm marks each with the check's directory)
            subprocess.run(["pkill", "-f", "--", f"-Djsampler.check={work} "], capture_output=True)


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
    lock = MachineLock()
    tasks = []
    for label, home, first in runs:
        base = prepare_jdk(label, home, lock)
        for name, fn in CHECKS.items():
            if only and name not in only:
                continue
            if name == "fleet" and not first and not only:
                print(f"SKIP jdk{label} {name}: runs on the first JDK only")
                continue
            tasks.append((label, home, base, name, fn))
    tasks.sort(key=lambda t: t[3] not in ALONE)  # the alone ones first: the shared ones then fill the end
    with concurrent.futures.ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        results = [pool.submit(run_check, *t, lock) for t in tasks]
        failed = [r.result() for r in results if r.result()]
    ran = len(runs)
    if not ran:
        print("backend-test: no JDK found")
        return 1
    print(f"backend-test: {'FAILED ' + ', '.join(failed) if failed else 'passed'} ({ran} JDKs)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

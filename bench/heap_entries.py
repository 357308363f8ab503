"""heap_entries.py - the malloc heap over many sessions from two entry points (not part of make test;
docs/BENCHMARKS.md, "Stress").

    /usr/bin/python3 bench/heap_entries.py [TASKS [ATTACH_CYCLES]]

One JVM (JDK 17 unless JDK17_HOME says otherwise; Native Memory Tracking summary) runs CpuSplit at 30% duty on two
threads with the agent polling the grpcio test backend. First TASKS (100) SkyWalking tasks, one at a time (1 s each,
alternately CPU+ALLOC+LOCK+WALL with cstack=dwarf and CPU alone), then ATTACH_CYCLES (300) start/stop cycles through
build/jsampler. After the 10th, the middle and the last of each it prints the resident set, the malloc heap in use and
held free (the agent's `status`), what NMT counts of it, and the rest (malloc'ed outside the JVM's tracking: the
agent, libcurl, the C library). Growth that follows the tasks or cycles once the first sessions built their caches
would be a leak of that entry point. Run directory: build/heap-entries.
"""
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "java-test-harness" / "backend"))
sys.path.insert(0, str(ROOT / "bench"))
from harness import Backend  # noqa: E402
from stress import nmt_summary  # noqa: E402

JDK = os.environ.get("JDK17_HOME", "/usr/lib/jvm/java-17-openjdk-amd64") + "/bin"
CLI = str(ROOT / "build" / "jsampler")
TASKS = [({"events": ["CPU", "ALLOC", "LOCK", "WALL"], "execArgs": "interval=1ms,cstack=dwarf"}, 1),
         ({"events": ["CPU"], "execArgs": "interval=1ms"}, 1)]


def figures(jvm, work, tag):
    r = subprocess.run([CLI, "status", str(jvm.pid)], capture_output=True, text=True, timeout=60)
    h = re.search(r"heap_used_kib=(\d+) heap_free_kib=(\d+)", r.stdout)
    used, free = (int(h.group(1)), int(h.group(2))) if h else (-1, -1)
    nmt = nmt_summary(f"{JDK}/jcmd", jvm.pid, work / f"nmt-{tag}.txt", False).get("malloc", -1)
    rss = int(re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{jvm.pid}/status").read_text()).group(1))
    print(f"{tag:>10}: rss_kib={rss} heap_used_kib={used} heap_free_kib={free} nmt_malloc_kib={nmt} "
          f"untracked_kib={used - nmt}", flush=True)


def cli(*args):
    r = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise SystemExit(f"heap_entries: jsampler {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")


def task_done(backend, task, limit_s):
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if any(e["operationType"] in ("EXECUTION_FINISHED", "EXECUTION_TASK_ERROR")
               for e in backend.progress(task)["logs"]):
            return
        time.sleep(0.2)
    raise SystemExit(f"heap_entries: task {task} had no outcome in {limit_s} s")


def main():
    ntasks = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    ncycles = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    work = ROOT / "build" / "heap-entries"
    subprocess.run(["rm", "-rf", str(work)], check=True)
    (work / "taskdir").mkdir(parents=True)
    subprocess.run([f"{JDK}/javac", "-d", str(work / "classes"), str(ROOT / "java-test-harness" / "CpuSplit.java")],
                   check=True)
    backend = Backend(work, "oap")
    opts = f"backend=127.0.0.1:{backend.port},service=hx,instance=hx1,poll=1s,taskdir={work}/taskdir"
    jvm = subprocess.Popen([f"{JDK}/java", "-XX:NativeMemoryTracking=summary", f"-agentpath:{ROOT}/build/libjsampler.so={opts}",
                            "-cp", str(work / "classes"), "CpuSplit", "100000", "2", "0", "0.3"],
                           stdout=open(work / "jvm.out", "w"), stderr=open(work / "jvm.err", "w"))
    try:
        time.sleep(8)
        figures(jvm, work, "start")
        for i in range(ntasks):
            kw, duration = TASKS[i % len(TASKS)]
            task_done(backend, backend.task("hx", duration, **kw), duration + 30)
            if i + 1 in (10, ntasks // 2, ntasks):
                time.sleep(2)
                figures(jvm, work, f"task {i + 1}")
        for i in range(ncycles):
            cli("start", "-e", "cpu", "-i", "1ms", "--wall", "10ms", "--alloc", "512k", "-f", str(work / "a.jfr"),
                str(jvm.pid))
            time.sleep(0.2)
            cli("stop", "-f", str(work / "a.jfr"), str(jvm.pid))
            if i + 1 in (10, ncycles // 2, ncycles):
                time.sleep(2)
                figures(jvm, work, f"attach {i + 1}")
    finally:
        jvm.terminate()
        jvm.wait()
        backend.stop()


if __name__ == "__main__":
    main()

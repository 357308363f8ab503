#!/usr/bin/python3
"""task_size.py (make task-size; about 22 minutes, not part of make test): a SkyWalking task that would not fit.

A 10-minute task at interval=1ms on a service with 16 busy threads (CpuSplit), run through the task client against
the test backend, then the same workload recorded at the full rate with -agentpath for comparison. On a 16-core host
that task samples 16 CPUs: about 9.6 million samples, far over the OAP's 30 MiB. These machines have 2 cores, so the
16 threads share 2 CPUs; uploadmax is scaled by 2/16 (30 MiB -> 3840 KiB) to make the task as much too big here.

Reported (and written to build/task-size/result.txt): the interval the plan chose, the bytes uploaded against
uploadmax, and the shares of burnA/B/C in the task's recording, in the full-rate recording and as CpuSplit measured
them. Pass: the upload fits and every share is within 1 point of the full-rate run's.
Environment: TASK_SECONDS (default 600), JAVA_HOME (default: the JDK of the javac on PATH)."""
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "java-test-harness/backend"))
from harness import Backend, Jvm, Workspace, analysis_shares, collapsed_shares, truth, wait_for  # noqa: E402

SECONDS = int(os.environ.get("TASK_SECONDS", "600"))
THREADS = 16
UPLOADMAX_K = 30 * 1024 * 2 // THREADS  # 3840


def main():
    ctx = Workspace(ROOT / "build/task-size", ["CpuSplit.java", "TaskLoad.java"])
    work = ctx.work
    b = Backend(work, "oap")
    opts = f"backend=127.0.0.1:{b.port},service=busy,instance=busy-1,poll=2s,uploadmax={UPLOADMAX_K}k," \
           f"taskdir={work}/tasks"
    jvm = Jvm(ctx, "task", opts, ["TaskLoad", 0, SECONDS + 15, THREADS])
    try:
        wait_for(lambda: b.instance_seen("busy-1"), 30, "the instance")
        time.sleep(5)
        task = b.task("busy", SECONDS, execArgs="interval=1ms")
        b.wait_log(task, "EXECUTION_FINISHED", SECONDS + 120, "busy-1")
        up = b.uploads(task)[0]
        (task_shares, n1), _ = analysis_shares(b, task)
        jvm.wait_exit(120)
        t1 = truth(jvm)
        plan = [l for l in jvm.log().splitlines() if "task " in l and ("interval" in l)]
    finally:
        jvm.kill()
        b.stop()
    full_jfr = work / "full.jfr"
    full = Jvm(ctx, "full", f"start,interval=1ms,file={full_jfr}", ["TaskLoad", 0, SECONDS, THREADS])
    full.wait_exit(SECONDS + 120)
    full_shares, n2 = collapsed_shares(full_jfr)
    t2 = truth(full)
    worst = max(abs(task_shares[k] - full_shares[k]) for k in task_shares)
    ok = up["contentSize"] <= UPLOADMAX_K * 1024 and worst <= 0.01
    lines = [f"task: {SECONDS} s at interval=1ms on {THREADS} threads, uploadmax {UPLOADMAX_K}k",
             *[f"agent: {l.split('INFO: ', 1)[-1]}" for l in plan],
             f"uploaded {up['contentSize']} bytes of {UPLOADMAX_K * 1024}; full-rate file {full_jfr.stat().st_size} bytes",
             "shares (task / full rate / measured in task run / measured in full run):"]
    for k in task_shares:
        lines.append(f"  {k}: {task_shares[k]:.4f} ({n1} samples) / {full_shares[k]:.4f} ({n2}) / {t1[k]:.4f} / "
                     f"{t2[k]:.4f}")
    lines.append(f"largest difference to the full-rate run: {100 * worst:.2f} points -> {'PASS' if ok else 'FAIL'}")
    text = "\n".join(lines)
    print(text)
    (work / "result.txt").write_text(text + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

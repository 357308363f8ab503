#!/usr/bin/python3
"""demo_task.py: make demo-task: the whole SkyWalking loop in about a minute and a half. The test backend (oap.py, on
grpcio) starts; the demo application runs with the agent's task client polling it; an async-profiler task is created
as the SkyWalking UI would (CPU, 10 s); the agent profiles and uploads the JFR; the analysis the OAP's query API would
give is printed, hottest methods first. Then the same for pprof tasks (the OAP's receiver-pprof): a GOROUTINE task
(a thread dump, at once) and a CPU task (1 minute, the shortest the UI offers), their trees as the OAP builds them."""
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import ROOT, Backend, CheckFailed, Jvm, Workspace, wait_for  # noqa: E402


def self_by_signature(elements):
    """The OAP tree's self counts summed per codeSignature, and its total."""
    own = collections.Counter()
    for e in elements:
        if e["self"]:
            own[e["codeSignature"]] += e["self"]
    return own, elements[0]["total"]


def pprof_demo(b):
    """A GOROUTINE and a CPU pprof task, as the SkyWalking UI creates them, and the trees the OAP builds."""
    t0 = time.monotonic()
    task = b.pprof_task("demo-shop", "GOROUTINE", ["demo-1"])
    print(f"\n== pprof task {task} created: GOROUTINE (no duration: a thread dump)")
    b.pprof_wait_log(task, "EXECUTION_FINISHED", 20, "demo-1")
    up = b.pprof_uploads(task)[0]
    own, total = self_by_signature(b.pprof_analysis(task)["elements"])
    print(f"   EXECUTION_FINISHED after {time.monotonic() - t0:.1f} s: {up['received']} bytes, {total} threads; "
          f"where they are:")
    for sig, n in own.most_common(6):
        print(f"   {n:4d}  {sig}")
    t0 = time.monotonic()
    task = b.pprof_task("demo-shop", "CPU", ["demo-1"], duration=1)
    print(f"== pprof task {task} created: CPU, 1 minute")
    b.pprof_wait_log(task, "NOTIFIED", 10, "demo-1")
    print(f"   NOTIFIED after {time.monotonic() - t0:.1f} s; profiling...")
    b.pprof_wait_log(task, "EXECUTION_FINISHED", 100, "demo-1")
    up = b.pprof_uploads(task)[0]
    own, total = self_by_signature(b.pprof_analysis(task)["elements"])
    print(f"   EXECUTION_FINISHED after {time.monotonic() - t0:.1f} s: {up['received']} bytes, {up['samples']} Sample "
          f"messages; the OAP's tree, self time (function:line):")
    for sig, n in own.most_common(8):
        print(f"   {100.0 * n / total:6.2f}%  {sig}")


def main():
    ctx = Workspace(ROOT / "build/demo-task", ["Demo.java"])
    work = ctx.work
    print("== Test backend (a grpcio stand-in for the SkyWalking OAP)")
    b = Backend(work, "oap")
    print(f"   gRPC on 127.0.0.1:{b.port}, admin on 127.0.0.1:{b.admin}")
    opts = f"backend=127.0.0.1:{b.port},service=demo-shop,instance=demo-1,poll=2s,taskdir={work}/tasks"
    print(f"== The demo with -agentpath:libjsampler.so={opts}")
    jvm = Jvm(ctx, "demo", opts, ["Demo", 120])
    try:
        wait_for(lambda: b.instance_seen("demo-1"), 30, "the instance to register")
        print("   instance demo-1 registered (keepAlive)")
        task = b.task("demo-shop", 10, events=["CPU"], execArgs="interval=5ms")
        t0 = time.monotonic()
        print(f"== Task {task} created: CPU, 10 s, ExecArgs 'event=cpu,interval=5ms'")
        b.wait_log(task, "NOTIFIED", 10, "demo-1")
        print(f"   NOTIFIED after {time.monotonic() - t0:.1f} s; profiling...")
        b.wait_log(task, "EXECUTION_FINISHED", 40, "demo-1")
        up = b.uploads(task)[0]
        print(f"   EXECUTION_FINISHED after {time.monotonic() - t0:.1f} s: {up['received']} of {up['contentSize']} "
              f"bytes received")
        a = b.get(f"/tasks/{task}/analysis?event=EXECUTION_SAMPLE")
        total = next(e["total"] for e in a["elements"] if e["parentId"] == "-1")
        print(f"== Analysis (EXECUTION_SAMPLE, {total} samples, {len(a['elements'])} tree elements), self time:")
        for e in a["top"][:10]:
            print(f"   {100.0 * e['self'] / total:6.2f}%  {e['codeSignature']}")
        pprof_demo(b)
        print("\n== The agent's log")
        print("".join(l for l in jvm.log().splitlines(True) if "task" in l))
    except CheckFailed as e:
        print(f"demo-task: {e}", file=sys.stderr)
        return 1
    finally:
        jvm.kill()
        b.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

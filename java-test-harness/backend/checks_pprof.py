"""checks_pprof.py: pprof tasks end to end (make backend-test), against the test backend's PprofTask service
(oap_pprof.py, which takes uploads and builds the tree as the OAP's receiver-pprof does): every event a SkyWalking UI
offers, what each profile holds (read as the OAP reads it and by `go tool pprof`), the events a JVM cannot serve
reported with their reason, the oversize answer, a backend without receiver-pprof, and a backend dying mid-upload."""
import re
import subprocess
import sys
import time
from pathlib import Path

from checks import POLL, agent_opts, one_line
from harness import ROOT, Jvm, check, truth, wait_for

sys.path.insert(0, str(ROOT / "java-test-harness"))
import pprof_tool  # noqa: E402  (go tool pprof -raw, as the pprof checks read files)

SVC = "svc-pprof"
# The CPU task's shares are judged within 5 points: at n samples a share near 0.5 has the binomial error
# 50/sqrt(n) points, 2.2 at the 500 a CpuSplit of 15 s wall got beside the other lanes (a check in 20 failed
# by chance). CpuSplit runs until its workers used MIN_CPU_S of CPU (about 100 samples a CPU second at 10 ms, 45 s
# at most), and the check wants MIN_CPU_SAMPLES: 5 points is then 3.5 times the error.
MIN_CPU_S = 15
MIN_CPU_SAMPLES = 1200


def method(sig):
    """"pkg.Class.method:LINE" -> "pkg.Class.method"."""
    return sig.rsplit(":", 1)[0]


def paths(elements):
    """The analysis tree as {path of method names from the root's child down: (total, self)}."""
    by_id = {e["id"]: e for e in elements}
    out = {}
    for e in elements:
        if e["parentId"] == -1:
            continue
        names, cur = [], e
        while cur["parentId"] != -1:
            names.append(method(cur["codeSignature"]))
            cur = by_id[cur["parentId"]]
        key = tuple(reversed(names))
        t, s = out.get(key, (0, 0))
        out[key] = (t + e["total"], s + e["self"])
    return out


def through(tree, *names):
    """Samples whose path holds names in this order, one after the other (a caller and its callees)."""
    n = len(names)
    return sum(s for p, (t, s) in tree.items() if any(p[i:i + n] == names for i in range(len(p) - n + 1)))


def leaf_methods(tree):
    return {p[-1] for p, (t, s) in tree.items() if s}


def all_methods(tree):
    return {m for p in tree for m in p}


def finished(b, task, instance, timeout):
    """The task's one upload, whole and parsed by the OAP's parser, with its analysis tree."""
    b.pprof_wait_log(task, "EXECUTION_FINISHED", timeout, instance)
    ups = wait_for(lambda: b.pprof_uploads(task), 10, f"the parsed upload of {task}")  # logged before the parse
    check(len(ups) == 1, f"one upload of {task}, got {len(ups)}")
    up = ups[0]
    check(up["received"] == up["contentSize"] and "parseError" not in up, f"a whole profile the OAP parses: {up}")
    a = b.pprof_analysis(task)
    root = a["elements"][0]
    check(root["codeSignature"] == "root" and root["total"] == up["samples"] > 0,
          f"the OAP's tree counts one per Sample message: root {root}, {up['samples']} Samples")
    return up, paths(a["elements"])


def workers_running(pid):
    """Threads of process pid named as CpuSplit's workers (cpusplit-N)."""
    n = 0
    for t in Path(f"/proc/{pid}/task").glob("*"):
        try:
            n += (t / "comm").read_text().startswith("cpusplit-")
        except OSError:
            pass
    return n


def check_pprof_events(ctx):
    """Every event of the SkyWalking UI's pprof task, on JVMs of known workloads, the timed ones (1 minute each) at
    once: CPU (CpuSplit busy from the task's start until its workers used 15 CPU-s, then idle to its end: its measured
    split within 5 points in the OAP's tree, go tool pprof reads cpu/nanoseconds),
    BLOCK (the synchronized and the ReentrantLock sites, parked in Unsafe.park, with their classes), MUTEX (the
    synchronized site only: monitors, no parking), ALLOCS without a Duration (a minute of AllocSplit's two sites with
    their classes), HEAP without a Duration (HeapSplit: of the bytes still reachable, 75% keepBig's and 25% keepSmall's
    within 8 points, drop()'s garbage under 3%, read by go tool pprof as inuse_space); during the CPU task, on the same JVM, GOROUTINE (one sample per thread: the two CpuSplit workers,
    the main thread, one Reference Handler), THREADCREATE (the two workers started by CpuSplit.main) and an ALLOCS
    task refused because the CPU task holds the profiler (EXECUTION_TASK_ERROR naming it, logged by the agent)."""
    b = ctx.backend("pprof")
    jvms = {}
    try:
        go = Path(ctx.dir("pprof-cpu-go")) / "go"  # CpuSplit starts once the CPU task profiles: the whole run sampled
        for name, main in (("cpu", ["TaskLoad", f"@{go}", 15, 2, 50, MIN_CPU_S]), ("block", ["EventMix", 80, 32]),
                           ("mutex", ["EventMix", 80, 32]), ("allocs", ["EventMix", 80, 32]),
                           ("heap", ["HeapSplit", 80])):
            jvms[name] = Jvm(ctx, f"pprof-{name}", agent_opts(b.port, SVC, name, ctx.dir(f"pprof-{name}-tasks")), main,
                             jvm_args=["-Xmx1g" if name == "heap" else "-Xmx256m"])
        for name in jvms:
            wait_for(lambda: b.instance_seen(name), 30, f"the keepAlive of {name}")
        cpu = b.pprof_task(SVC, "CPU", ["cpu"], duration=1)
        block = b.pprof_task(SVC, "BLOCK", ["block"], duration=1, dump_period=1000)
        mutex = b.pprof_task(SVC, "MUTEX", ["mutex"], duration=1, dump_period=1)
        allocs = b.pprof_task(SVC, "ALLOCS", ["allocs"])
        heap = b.pprof_task(SVC, "HEAP", ["heap"])
        jvms["cpu"].wait_log(r"pprof task \S+: profiling cpu", 15)
        go.touch()
        wait_for(lambda: workers_running(jvms["cpu"].proc.pid) == 2, 10, "CpuSplit's two workers to start")
        goroutine = b.pprof_task(SVC, "GOROUTINE", ["cpu"])
        threadcreate = b.pprof_task(SVC, "THREADCREATE", ["cpu"])
        busy = b.pprof_task(SVC, "ALLOCS", ["cpu"])

        _, tree = finished(b, goroutine, "cpu", 15)
        workers = through(tree, "CpuSplit.work")
        check(workers == 2, f"the two CpuSplit workers, once each: {workers}")
        check(through(tree, "TaskLoad.main", "CpuSplit.main") == 1, "the main thread, once, in CpuSplit.main")
        check(through(tree, "java.lang.ref.Reference$ReferenceHandler.run") == 1, "one Reference Handler")
        dump_threads = sum(s for t, s in tree.values())
        _, tree = finished(b, threadcreate, "cpu", 15)
        started = through(tree, "CpuSplit.main", "java.lang.Thread.start", "java.lang.Thread.start0")
        check(started == 2, f"CpuSplit.main started 2 threads, the profile says {started}: {tree}")
        err = b.pprof_wait_log(busy, "EXECUTION_TASK_ERROR", 15, "cpu")[0]["message"]
        check("not started" in err and cpu in err, f"the refused task names the running one: {err}")
        one_line(jvms["cpu"].log(), r"pprof task " + re.escape(busy) + r": not started", "the refusal logged")

        up, tree = finished(b, cpu, "cpu", 100)
        raw = pprof_tool.go_raw(up["path"], "cpu")
        check(sum(raw.values()) > 0, "go tool pprof reads the profile's cpu/nanoseconds")
        self_of = {k: sum(s for p, (t, s) in tree.items() if p[-1] == "CpuSplit." + k)
                   for k in ("burnA", "burnB", "burnC")}
        n = sum(self_of.values())
        check(n >= MIN_CPU_SAMPLES, f"CPU samples in burnA/B/C: {n} (need {MIN_CPU_SAMPLES}; the machine was busy)")
        check(jvms["cpu"].wait_exit(60) == 0, "the CPU JVM ran to its end")
        t = truth(jvms["cpu"])
        for k in t:
            check(abs(self_of[k] / n - t[k]) <= 0.05, f"{k}: {self_of[k] / n:.3f} in the OAP's tree vs {t[k]:.3f}")
        one_line(jvms["cpu"].log(), r"pprof task \S+: profiling cpu: .*interval 10\.0 ms", "the CPU plan")

        _, tree = finished(b, block, "block", 60)
        names = all_methods(tree)
        check("LockSplit.syncSite" in names and "java.lang.Object_[i]" in leaf_methods(tree),
              f"BLOCK: the synchronized site and its monitor's class: {sorted(names)[:30]}")
        check(through(tree, "LockSplit.reentrantSite") > 0 and "jdk.internal.misc.Unsafe.park" in names and
              "java.util.concurrent.locks.ReentrantLock$NonfairSync_[i]" in leaf_methods(tree),
              f"BLOCK: the ReentrantLock site, parked, with its lock's class: {sorted(names)[:30]}")

        _, tree = finished(b, mutex, "mutex", 60)
        names = all_methods(tree)
        check("LockSplit.syncSite" in names and "java.lang.Object_[i]" in leaf_methods(tree),
              f"MUTEX: the contended monitor: {sorted(names)[:30]}")
        check("jdk.internal.misc.Unsafe.park" not in names and "LockSplit.reentrantSite" not in names,
              f"MUTEX: monitors only, no parking: {sorted(names)[:30]}")

        _, tree = finished(b, allocs, "allocs", 60)
        leaves = leaf_methods(tree)
        check(through(tree, "AllocSplit.allocBig") > 0 and "long[]_[i]" in leaves and
              through(tree, "AllocSplit.allocSmall") > 0 and "AllocSplit$Small_[i]" in leaves,
              f"ALLOCS: both sites with their classes: {sorted(leaves)[:20]}")
        check(re.search(r"pprof task \S+: profiling allocs: .*for 1 minute \(the task gives no Duration\)",
                        jvms["allocs"].log()), "the allocs window is logged")
        up, tree = finished(b, heap, "heap", 60)
        kept = {k: sum(s for p, (t, s) in tree.items() if "HeapSplit." + k in p)
                for k in ("keepBig", "keepSmall", "drop")}
        raw = pprof_tool.go_raw(up["path"], "inuse_space")
        check(sum(raw.values()) > 0, "go tool pprof reads the profile's inuse_space")
        live = kept["keepBig"] + kept["keepSmall"] + kept["drop"]
        check(live > 100, f"HEAP: samples of live objects in HeapSplit: {kept}")
        big = kept["keepBig"] / live
        check(abs(big - 0.75) <= 0.08 and kept["drop"] / live < 0.03,
              f"HEAP: keepBig {big:.3f} of the live samples (truth 0.75), drop {kept['drop'] / live:.3f} (garbage)")
        ctx.note(f"pprof-events: heap keepBig {big:.3f} (0.75), drop {kept['drop'] / live:.3f} of {live} live samples")
        ctx.note(f"pprof-events: cpu {n} samples in burnA/B/C, shares " +
                 " ".join(f"{k}={self_of[k] / n:.3f}/{t[k]:.3f}" for k in t) + f"; thread dump {dump_threads} threads")
    finally:
        for j in jvms.values():
            j.kill()


def check_pprof_refused(ctx):
    """Events a JVM cannot serve are reported, not left hanging: THREADCREATE in a JVM the task client was attached to
    (Thread.start0 is bound at start-up only; the reason logged by the agent as well, since the OAP keeps no message),
    where GOROUTINE is served."""
    b = ctx.backend("pprof-refused")
    jvm = Jvm(ctx, "refused", agent_opts(b.port, SVC, "r1", ctx.dir("refused-tasks")), ["TaskLoad", 30, 0, 0])
    late = Jvm(ctx, "refused-late", None, ["TaskLoad", 30, 0, 0])
    try:
        wait_for(lambda: b.instance_seen("r1"), 20, "the keepAlive")
        time.sleep(1)
        r = subprocess.run([str(ROOT / "build/jsampler"), "attach-backend", str(late.pid),
                            agent_opts(b.port, SVC, "late", ctx.dir("late-tasks"))], capture_output=True, text=True)
        check(r.returncode == 0, f"attach-backend: {r.stdout} {r.stderr}")
        tc = b.pprof_task(SVC, "THREADCREATE", ["late"])
        msg = b.pprof_wait_log(tc, "EXECUTION_TASK_ERROR", 10, "late")[0]["message"]
        check("loaded at start-up" in msg, f"THREADCREATE in an attached agent says why: {msg}")
        g = b.pprof_task(SVC, "GOROUTINE", ["late"])
        _, tree = finished(b, g, "late", 10)
        check(through(tree, "TaskLoad.main", "java.lang.Thread.sleep") == 1, f"the attached JVM's main thread: {tree}")
    finally:
        jvm.kill()
        late.kill()


def check_pprof_oversize(ctx):
    """A backend whose pprofMaxSize the profile passes: PPROF_TERMINATED_BY_OVERSIZE on both sides, nothing stored,
    the profile dropped from taskdir."""
    b = ctx.backend("pprof-oversize", "--pprof-max-size", "300")
    td = ctx.dir("pprof-oversize-tasks")
    jvm = Jvm(ctx, "pprof-oversize", agent_opts(b.port, SVC, "o1", td), ["TaskLoad", 20, 0, 0])
    try:
        wait_for(lambda: b.instance_seen("o1"), 20, "the keepAlive")
        task = b.pprof_task(SVC, "GOROUTINE", ["o1"])
        b.pprof_wait_log(task, "PPROF_UPLOAD_FILE_TOO_LARGE_ERROR", 10, "o1")
        jvm.wait_log("PPROF_TERMINATED_BY_OVERSIZE", 10)
        check(not b.pprof_uploads(task), "nothing stored")
        wait_for(lambda: not list(Path(td).iterdir()), 5, "taskdir emptied")
    finally:
        jvm.kill()


def check_pprof_unimplemented(ctx):
    """An OAP without receiver-pprof answers UNIMPLEMENTED: pprof polling goes off with one line, async-profiler
    tasks still run. An OAP without the async-profiler receiver: pprof tasks still run."""
    b = ctx.backend("no-pprof", "--no-pprof")
    jvm = Jvm(ctx, "no-pprof", agent_opts(b.port, SVC, "n1", ctx.dir("no-pprof-tasks")), ["TaskLoad", 0, 15, 1])
    try:
        wait_for(lambda: b.instance_seen("n1"), 20, "the keepAlive")
        task = b.task(SVC, 2)
        b.wait_log(task, "EXECUTION_FINISHED", 20, "n1")
        time.sleep(POLL * 2)
        one_line(jvm.log(), r"does not serve pprof tasks \(UNIMPLEMENTED: its receiver-pprof module is off\): pprof "
                            r"task polling is off", "receiver-pprof off")
        check("does not serve async-profiler" not in jvm.log(), "async-profiler polling goes on")
    finally:
        jvm.kill()
    b = ctx.backend("no-ap", "--unimplemented")
    jvm = Jvm(ctx, "no-ap", agent_opts(b.port, SVC, "n2", ctx.dir("no-ap-tasks")), ["TaskLoad", 20, 0, 0])
    try:
        wait_for(lambda: b.instance_seen("n2"), 20, "the keepAlive")
        task = b.pprof_task(SVC, "GOROUTINE", ["n2"])
        finished(b, task, "n2", 15)
        one_line(jvm.log(), r"does not serve async-profiler tasks \(UNIMPLEMENTED\)", "async-profiler receiver off")
    finally:
        jvm.kill()


def check_pprof_killed_mid_upload(ctx):
    """The backend dies in the middle of a profile's upload and comes back: the profile waits in taskdir and is
    uploaded once, whole, and parsed."""
    from harness import free_port
    port = free_port()
    state = ctx.work / "pprof-killed.state.json"
    b = ctx.backend("pprof-killed", "--die-after-bytes", "100", port=port, state=state)
    td = ctx.dir("pprof-killed-tasks")
    jvm = Jvm(ctx, "pprof-killed", agent_opts(port, SVC, "k1", td), ["TaskLoad", 40, 0, 0])
    try:
        wait_for(lambda: b.instance_seen("k1"), 20, "the keepAlive")
        task = b.pprof_task(SVC, "THREADCREATE", ["k1"])
        wait_for(lambda: b.proc.poll() is not None, 20, "the backend to die mid-upload")
        b.stop()
        check(list(Path(td).glob("pprof@*.task")) and list(Path(td).glob("pprof@*.pb.gz")),
              "the profile waits in taskdir while the backend is down")
        b = ctx.backend("pprof-killed2", port=port, state=state)
        up, tree = finished(b, task, "k1", 30)
        time.sleep(POLL * 2)
        check(len(b.pprof_uploads(task)) == 1, "uploaded once")
        check(not list(Path(td).iterdir()), "taskdir empty after the upload")
        ctx.note(f"pprof-killed-mid-upload: {up['contentSize']} bytes uploaded once after the backend died at 100")
    finally:
        jvm.kill()


CHECKS = {
    "pprof-events": check_pprof_events,
    "pprof-refused": check_pprof_refused,
    "pprof-oversize": check_pprof_oversize,
    "pprof-unimplemented": check_pprof_unimplemented,
    "pprof-killed-mid-upload": check_pprof_killed_mid_upload,
}

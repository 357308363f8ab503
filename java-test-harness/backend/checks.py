"""checks.py: the task client end to end (make backend-test): JVMs with the agent, the grpcio test backend (oap.py),
tasks created through its admin interface, and what a SkyWalking user relies on checked at the end of each:
notified within one poll, profiled for the task's duration, every byte uploaded once, the hot method on top, every
failure reported with its reason, and the JVM running on. Each check is a function; run.py runs them per JDK."""
import datetime
import re
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

from harness import (ROOT, CheckFailed, Jvm, RawServer, analysis_shares, check, free_port,
                     jfr_tool_events, skywalking_env, truth, wait_for)

POLL = 1  # s: the agent's poll period in these checks (the default is 20 s)


def agent_opts(backend_port, service, instance, taskdir, extra=""):
    opts = f"backend=127.0.0.1:{backend_port},service={service},instance={instance},poll={POLL}s,taskdir={taskdir}"
    return opts + ("," + extra if extra else "")


def one_line(log, pattern, what):
    """The agent logged pattern exactly once (one line per change of state, not per attempt)."""
    n = len(re.findall(pattern, log))
    check(n == 1, f"{what}: expected one log line matching '{pattern}', found {n}")


def check_basic(ctx):
    """A task end to end: notified within one poll, profiled for its duration, uploaded whole, the hot method on
    top with CpuSplit's measured split within 5 points (about 1,200 samples: 5 points is over 3 standard errors; at
    the default 10 ms, with the other JDK's basic beside it, the workload got one CPU and 560-600 samples, where
    5 points is 2.4 standard errors: a clean-clone run failed at 5.1 points)."""
    b = ctx.backend("basic")
    td = ctx.dir("basic-tasks")
    jvm = Jvm(ctx, "basic", agent_opts(b.port, "svc-basic", "i1", td), ["TaskLoad", 0, 16, 2, 2])
    wait_for(lambda: b.instance_seen("i1"), 20, "the instance's keepAlive")
    created = time.time()
    task = b.task("svc-basic", 6, execArgs="interval=5ms")  # ~1,200 samples with the other JDK's basic beside it
    notified = b.wait_log(task, "NOTIFIED", 10, "i1")
    lag = notified[0]["time"] / 1000 - created
    check(lag <= POLL * 1.2 + 1.0, f"notified {lag:.2f} s after creation; the poll period is {POLL} s")
    b.wait_log(task, "EXECUTION_FINISHED", 30, "i1")
    log = jvm.log()
    m = re.search(r"task \S+: recorded (\d+) bytes in (\d+) s", log)
    check(m and int(m.group(2)) in (6, 7), f"profiled for the task's 6 s: {m and m.group(0)}")
    sent = int(re.search(r"task \S+: uploaded (\d+) bytes", log).group(1))
    ups = b.uploads(task)
    check(len(ups) == 1, f"one upload, got {len(ups)}")
    check(ups[0]["received"] == ups[0]["contentSize"] == sent == int(m.group(1)),
          f"bytes written {m.group(1)}, announced {ups[0]['contentSize']}, sent {sent}, received {ups[0]['received']}")
    check(jfr_tool_events(ctx.jfr_tool, ups[0]["path"]) > 0, "the uploaded JFR has no jdk.ExecutionSample")
    (shares, n), a = analysis_shares(b, task)
    check(a["top"][0]["codeSignature"].endswith("CpuSplit.burnA"), f"hot method on top: {a['top'][:3]}")
    check(b.progress(task)["successInstances"] == ["i1"], "i1 listed as success")
    check(jvm.wait_exit(40) == 0, "the JVM ran to its end")
    t = truth(jvm)
    # 5 points are 3 standard errors of a share near 0.5 at 900 samples: fewer means the workload did not get the CPU
    # the check is sized for, which is said as such rather than as a share error
    check(n >= 900, f"only {n} samples in burnA/B/C of the 1,200 the check is sized for: the machine was too busy")
    for k in t:
        check(abs(shares[k] - t[k]) <= 0.05, f"{k}: {shares[k]:.3f} sampled vs {t[k]:.3f} measured ({n} samples)")
    check(not list(Path(td).iterdir()), "taskdir empty once the server accepted the recording")
    props = next(i for i in b.get("/instances") if i["instance"] == "i1")
    check(props["keepAlives"] >= 1 and str(props["properties"].get("Process No.")) == str(jvm.pid) and
          props["properties"].get("language") == "java", f"keepAlive and the instance's properties: {props}")
    ctx.note(f"basic: notified after {lag:.2f} s, {sent} bytes, {n} samples, shares " +
             " ".join(f"{k}={shares[k]:.3f}/{t[k]:.3f}" for k in t))


def check_events(ctx):
    """A task asking for CPU, ALLOC and LOCK, as the SkyWalking UI sends it (ExecArgs event=cpu,alloc,lock): one
    recording with all three event types that the JDK's jfr tool reads, and the OAP's analysis of each: the
    allocation tree names AllocSplit's sites with their classes, the lock tree LockSplit's synchronized and
    ReentrantLock sites, the CPU tree the allocating worker."""
    b = ctx.backend("events")
    td = ctx.dir("events-tasks")
    jvm = Jvm(ctx, "events", agent_opts(b.port, "svc-ev", "i1", td), ["EventMix", 16, 64])
    wait_for(lambda: b.instance_seen("i1"), 20, "the instance's keepAlive")
    task = b.task("svc-ev", 6, events=["CPU", "ALLOC", "LOCK"])
    b.wait_log(task, "EXECUTION_FINISHED", 40, "i1")
    ups = b.uploads(task)
    check(len(ups) == 1 and ups[0]["received"] == ups[0]["contentSize"], f"one whole upload: {ups}")
    r = subprocess.run([ctx.jfr_tool, "summary", ups[0]["path"]], capture_output=True, text=True)
    check(r.returncode == 0, f"the JDK's jfr tool reads the recording: {r.stderr[:300]}")
    counts = {t: int(m.group(1)) if (m := re.search(re.escape(t) + r"\s+(\d+)", r.stdout)) else 0
              for t in ("jdk.ExecutionSample", "jdk.ObjectAllocationInNewTLAB", "jdk.JavaMonitorEnter",
                        "jdk.ThreadPark")}
    for t, n in counts.items():
        check(n > 0, f"{t} events in the upload: {counts}")
    trees = {}
    for ev in ("EXECUTION_SAMPLE", "IN_NEW_TLAB", "LOCK"):
        a = b.get(f"/tasks/{task}/analysis?event={ev}")
        trees[ev] = {e["codeSignature"] for e in a["elements"]}
        check(a["elements"], f"the {ev} analysis has elements")
    alloc, lock = trees["IN_NEW_TLAB"], trees["LOCK"]
    check(any(s.endswith("AllocSplit.allocBig") for s in alloc) and "long[]" in alloc,
          f"allocBig and its long[] in the allocation tree: {sorted(alloc)[:20]}")
    check(any(s.endswith("AllocSplit.allocSmall") for s in alloc) and "AllocSplit$Small" in alloc,
          f"allocSmall and its objects in the allocation tree: {sorted(alloc)[:20]}")
    check(any(s.endswith("LockSplit.syncSite") for s in lock) and "java.lang.Object" in lock,
          f"the synchronized site and its monitor in the lock tree: {sorted(lock)[:20]}")
    check(any(s.endswith("LockSplit.reentrantSite") for s in lock) and
          "java.util.concurrent.locks.ReentrantLock$NonfairSync" in lock,
          f"the ReentrantLock site and its lock class in the lock tree: {sorted(lock)[:20]}")
    check(jvm.wait_exit(40) == 0, "the JVM ran to its end")
    ctx.note("events: " + ", ".join(f"{t} {n}" for t, n in counts.items()))


def check_bad_options(ctx):
    """A bad task client option stops the JVM at start-up with one line naming it; so does a bad SW_AGENT_* value
    that an option asked for ('backend' alone). Every JVM here runs in a SkyWalking environment (skywalking_env)."""
    cases = [("backend=oap,service=s", None, "option 'backend=oap'"),
             ("backend=127.0.0.1:1,poll=5ms,service=s", None, "option 'poll=5ms'"),
             ("backend=127.0.0.1:1", {"SW_AGENT_NAME": None}, "option 'service=' missing"),
             ("backend", {"SW_AGENT_NAME": "s", "SW_AGENT_COLLECTOR_BACKEND_SERVICES": "nohost"},
              "SW_AGENT_COLLECTOR_BACKEND_SERVICES"),
             ("backend,service=s", {"SW_AGENT_COLLECTOR_BACKEND_SERVICES": None}, "SW_AGENT_COLLECTOR_BACKEND_SERVICES"),
             ("service=s", None, "option 'backend' missing")]
    for i, (opts, env, want) in enumerate(cases):
        jvm = Jvm(ctx, f"badopt{i}", opts, ["TaskLoad", 0, 0, 0], env=env)
        rc = jvm.wait_exit(30)
        errs = [l for l in jvm.log().splitlines() if "ERROR" in l]
        check(rc != 0 and "TASKLOAD_STARTED" not in jvm.stdout(), f"'{opts}' {env}: the JVM did not stop ({rc})")
        check(len(errs) == 1 and want in errs[0], f"'{opts}' {env}: one line naming {want}: {errs}")
        jvm.kill()


def check_task_errors(ctx):
    """One JVM, four tasks it must not run as asked: one for another instance (ignored: never notified), one
    with ExecArgs jsampler cannot honour (EXECUTION_TASK_ERROR naming them, nothing started), a second task
    while one runs (reported, the first finishes), and a task while a session started by hand runs (reported with
    the profiler's reason; the user's session goes on)."""
    b = ctx.backend("errors")
    jvm = Jvm(ctx, "errors", agent_opts(b.port, "svc-err", "i1", ctx.dir("errors-tasks")), ["TaskLoad", 0, 40, 1])
    wait_for(lambda: b.instance_seen("i1"), 20, "the instance's keepAlive")
    other = b.task("svc-err", 2, instances=["someone-else"])
    time.sleep(POLL * 3 + 0.5)
    check(not [e for e in b.progress(other)["logs"] if e["instance"] == "i1"], "a task for another instance reached i1")
    bad = b.task("svc-err", 2, events=["CPU", "ALLOC", "LOCK"], execArgs="interval=5ms,ttsp,file=/etc/x")
    err = b.wait_log(bad, "EXECUTION_TASK_ERROR", 10, "i1")[0]["message"]
    for token in ("ttsp", "file=/etc/x"):
        check(token in err, f"the error names '{token}': {err}")
    check("profiling started" not in jvm.log(), "a task with bad ExecArgs started a recording")
    first = b.task("svc-err", 5)
    b.wait_log(first, "NOTIFIED", 10, "i1")
    jvm.wait_log(r"task \S+: profiling cpu", 10)
    second = b.task("svc-err", 2)
    msg = b.wait_log(second, "EXECUTION_TASK_ERROR", 10, "i1")[0]["message"]
    check(first in msg and "not started" in msg, f"the second task's error names the running one: {msg}")
    b.wait_log(first, "EXECUTION_FINISHED", 20, "i1")
    check(b.progress(second)["successInstances"] == [], "the second task did not run")
    cli = str(ROOT / "build/jsampler")
    check(subprocess.run([cli, "start", str(jvm.pid)], capture_output=True).returncode == 0, "a session started by hand")
    busy = b.task("svc-err", 2)
    msg = b.wait_log(busy, "EXECUTION_TASK_ERROR", 10, "i1")[0]["message"]
    check("refused to start" in msg, f"a task while a session runs by hand is reported with the reason: {msg}")
    check(subprocess.run([cli, "stop", "-f", str(ctx.work / "by-hand.collapsed"), str(jvm.pid)],
                         capture_output=True).returncode == 0, "the session by hand is still the user's to stop")
    jvm.exited_early()
    jvm.kill()
    ctx.note(f"task-errors: bad ExecArgs -> '{err[:90]}...'")


def check_oversize(ctx):
    """A backend whose limit the recording passes: TERMINATED_BY_OVERSIZE logged on both sides, the file dropped."""
    b = ctx.backend("oversize", "--jfr-max-size", "2000")
    td = ctx.dir("oversize-tasks")
    jvm = Jvm(ctx, "oversize", agent_opts(b.port, "svc-big", "i1", td), ["TaskLoad", 0, 20, 2])
    wait_for(lambda: b.instance_seen("i1"), 20, "the instance's keepAlive")
    task = b.task("svc-big", 3, execArgs="interval=1ms")
    b.wait_log(task, "JFR_UPLOAD_FILE_TOO_LARGE_ERROR", 20, "i1")
    jvm.wait_log("TERMINATED_BY_OVERSIZE", 10)
    check(not b.uploads(task), "nothing stored")
    wait_for(lambda: not list(Path(td).iterdir()), 5, "taskdir emptied")
    jvm.exited_early()
    jvm.kill()


def check_slow_backend(ctx):
    """A backend that takes 3 s to accept an upload: the upload waits within its deadline and completes."""
    b = ctx.backend("slow", "--slow-collect", "3")
    # the JVM outlives the check (killed at its end): a session start the kernel held up 7 s, then the 2-s task and
    # the 3-s answer, would otherwise meet the JVM's exit (the upload then waits for the next agent, no failure)
    jvm = Jvm(ctx, "slow", agent_opts(b.port, "svc-slow", "i1", ctx.dir("slow-tasks")), ["TaskLoad", 0, 40, 1])
    wait_for(lambda: b.instance_seen("i1"), 20, "the instance's keepAlive")
    task = b.task("svc-slow", 2)
    try:
        b.wait_log(task, "EXECUTION_FINISHED", 25, "i1")
    except CheckFailed as e:  # once in a clean-clone run the client stood still 12 s: what the agent said of it
        raise CheckFailed(f"{e}; the agent said: " + " | ".join(l for l in jvm.log().splitlines()
                                                                 if "WARN" in l or "task " in l)) from None
    check("retrying" not in jvm.log(), "a slow answer is not a failure")
    jvm.kill()


def check_backend_late(ctx):
    """The backend is down when the JVM starts: one log line, bounded retries; it comes up: one line, a task runs."""
    port = free_port()
    jvm = Jvm(ctx, "late", agent_opts(port, "svc-late", "i1", ctx.dir("late-tasks")), ["TaskLoad", 0, 30, 1])
    time.sleep(4)
    one_line(jvm.log(), r"retrying with backoff", "backend absent")
    b = ctx.backend("late", port=port)
    wait_for(lambda: b.instance_seen("i1"), 15, "the instance's keepAlive once the backend is up")
    jvm.wait_log("reachable again", 5)
    task = b.task("svc-late", 2)
    b.wait_log(task, "EXECUTION_FINISHED", 20, "i1")
    one_line(jvm.log(), r"retrying with backoff", "backend absent then up")
    jvm.kill()


def check_killed_mid_upload(ctx):
    """The backend dies in the middle of an upload and comes back: the recording is uploaded once, whole. It dies
    after 4,000 bytes, inside every recording a task makes: the JFR header and metadata alone are over 6 KB. (At
    16,000 bytes a clean-clone run recorded 6,103 bytes, 5 samples of a workload starved by the other checks, and
    uploaded it whole before the backend died; at 40,000 a busy machine's 34,631 bytes did the same.)"""
    port = free_port()
    state = ctx.work / "killed.state.json"
    die_after = 4000
    b = ctx.backend("killed", "--die-after-bytes", str(die_after), port=port, state=state)
    td = ctx.dir("killed-tasks")
    jvm = Jvm(ctx, "killed", agent_opts(port, "svc-kill", "i1", td), ["TaskLoad", 0, 30, 2])
    wait_for(lambda: b.instance_seen("i1"), 20, "the instance's keepAlive")
    task = b.task("svc-kill", 4, execArgs="interval=1ms")
    wait_for(lambda: b.proc.poll() is not None, 30, "the backend to die mid-upload")
    b.stop()
    check(list(Path(td).glob("*.task")), "the recording waits in taskdir while the backend is down")
    b = ctx.backend("killed2", port=port, state=state)
    b.wait_log(task, "EXECUTION_FINISHED", 30, "i1")
    time.sleep(POLL * 2)
    ups = b.uploads(task)
    check(len(ups) == 1, f"uploaded once, got {len(ups)}")
    check(ups[0]["received"] == ups[0]["contentSize"] > die_after, f"whole: {ups[0]}")
    check(jfr_tool_events(ctx.jfr_tool, ups[0]["path"]) > 0, "the JFR parses")
    check(not list(Path(td).iterdir()), "taskdir empty after the upload")
    jvm.kill()
    ctx.note(f"killed-mid-upload: {ups[0]['contentSize']} bytes uploaded once after the backend died at {die_after}")


def check_restart_pending(ctx):
    """The backend is down when a task ends and the JVM exits: the recording stays in taskdir; the next JVM (another
    instance, same taskdir) uploads it under the first instance's name."""
    port = free_port()
    state = ctx.work / "restart.state.json"
    b = ctx.backend("restart", port=port, state=state)
    td = ctx.dir("restart-tasks")
    jvm = Jvm(ctx, "restart1", agent_opts(port, "svc-rs", "first", td), ["TaskLoad", 0, 8, 1])
    wait_for(lambda: b.instance_seen("first"), 20, "the instance's keepAlive")
    # the task names the first instance: a task for the whole service is also, and rightly, run by the second JVM if
    # it is still live when that JVM polls, and its own upload would race the one this check is about
    task = b.task("svc-rs", 3, instances=["first"])
    b.wait_log(task, "NOTIFIED", 10, "first")
    # NOTIFIED is logged as the poll's reply is made: stopped then, the reply may never reach the agent
    jvm.wait_log(rf"task {re.escape(task)}: profiling", 10)
    b.stop()
    check(jvm.wait_exit(30) == 0, "the JVM exits normally with its backend down")
    check(list(Path(td).glob("*.task")) and list(Path(td).glob("*.jfr")), "the recording waits in taskdir")
    b = ctx.backend("restart2", port=port, state=state)
    jvm2 = Jvm(ctx, "restart2", agent_opts(port, "svc-rs", "second", td), ["TaskLoad", 20, 0, 0])
    b.wait_log(task, "EXECUTION_FINISHED", 20, "first")
    check(len(b.uploads(task)) == 1, "uploaded once")
    jvm2.kill()


def sample_span_s(jfr_tool, path):
    """Seconds from the first to the last jdk.ExecutionSample of a recording (wall's too, when it is the only
    execution event), as the JDK's jfr tool prints them."""
    r = subprocess.run([jfr_tool, "print", "--json", "--events", "jdk.ExecutionSample", str(path)],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"the JDK's jfr tool cannot read {path}: {r.stderr[:300]}")
    times = [datetime.datetime.fromisoformat(t[:26]) for t in re.findall(r'"startTime": "([^"]+)"', r.stdout)]
    check(len(times) >= 2, f"{path}: {len(times)} execution samples")
    return (max(times) - min(times)).total_seconds()


def check_held_up(ctx):
    """The backend stops answering (SIGSTOP) while a 3-s task runs, and holds the task client in a call for 9 s, past
    the task's end: the session ends on time all the same (the task's duration is its timeout=), so the recording
    spans 3 s, not the wait; the upload follows once the backend answers again. (Before, a 3-s task ran 7 s.)"""
    b = ctx.backend("heldup")
    td = ctx.dir("heldup-tasks")
    jvm = Jvm(ctx, "heldup", agent_opts(b.port, "svc-held", "i1", td), ["TaskLoad", 0, 40, 1])
    wait_for(lambda: b.instance_seen("i1"), 20, "the instance's keepAlive")
    # wall samples every thread, running or not: a CI lane starved this JVM of CPU once (cpu: 0 samples in 3 s)
    task = b.task("svc-held", 3, execArgs="event=wall,interval=20ms")
    jvm.wait_log(rf"task {re.escape(task)}: profiling", 15)
    b.proc.send_signal(signal.SIGSTOP)
    try:
        time.sleep(9)
    finally:
        b.proc.send_signal(signal.SIGCONT)
    b.wait_log(task, "EXECUTION_FINISHED", 40, "i1")
    up = b.uploads(task)
    check(len(up) == 1 and up[0]["received"] == up[0]["contentSize"], f"uploaded once, whole: {up}")
    # what the agent said of its session goes with a failure: its stop line, and why a session recorded nothing
    said = " | ".join(l for l in jvm.log().splitlines() if "profiling stopped" in l or "no samples" in l)
    try:
        span = sample_span_s(ctx.jfr_tool, up[0]["path"])
    except CheckFailed as e:
        raise CheckFailed(f"{e}; the agent said: {said}") from None
    check(2.0 <= span <= 3.5, f"the samples span {span:.2f} s of a 3-s task (the client was held up 9 s); the agent "
          f"said: {said}")
    check(jvm.proc.poll() is None, "the JVM runs on")
    # the wait is logged where it happened: the call, how long, and that it waited for the backend, not to connect
    slow = re.search(r"WARN: backend call \S+ took (\d+\.\d) s: connected after [0-9.]+ s, ready to send the "
                     r"request after [0-9.]+ s", jvm.log())
    check(slow and float(slow.group(1)) >= 5, f"the held-up call is logged with where it waited: {slow}")
    check(re.search(r"WARN: task client: .* took \d+\.\d s", jvm.log()), "the loop's long step is logged")
    jvm.kill()
    ctx.note(f"held-up: a 3-s task's samples span {span:.2f} s with its client held up 9 s ({slow.group(0)})")


def check_exit_mid_task(ctx):
    """The JVM exits in the middle of a task: what was recorded is kept (the profiler's shutdown writes it) and the
    next agent with the same taskdir uploads it, a whole JFR the JDK reads."""
    b = ctx.backend("exitmid")
    td = ctx.dir("exitmid-tasks")
    jvm = Jvm(ctx, "exitmid1", agent_opts(b.port, "svc-exit", "first", td), ["TaskLoad", 0, 5, 1])
    wait_for(lambda: b.instance_seen("first"), 20, "the instance's keepAlive")
    task = b.task("svc-exit", 30)
    b.wait_log(task, "NOTIFIED", 10, "first")
    check(jvm.wait_exit(30) == 0, "the JVM exits normally during the task")
    check("the JVM exits after" in jvm.log(), "the agent says the recording so far is kept")
    jvm2 = Jvm(ctx, "exitmid2", agent_opts(b.port, "svc-exit", "second", td), ["TaskLoad", 30, 0, 0])
    b.wait_log(task, "EXECUTION_FINISHED", 30, "first")
    up = b.uploads(task)
    check(len(up) == 1 and up[0]["received"] == up[0]["contentSize"], f"uploaded once, whole: {up}")
    check(jfr_tool_events(ctx.jfr_tool, up[0]["path"]) > 0, "the recording cut short parses with the JDK's jfr")
    jvm2.kill()


def good_and_bad(b, service, good, bad, failure, what):
    """good (a JVM the backend accepts) runs a task; bad (one it must not) fails with one log line matching failure,
    never reaches the backend, and runs to its end."""
    wait_for(lambda: b.instance_seen("good"), 20, f"keepAlive ({what}, accepted)")
    task = b.task(service, 2)
    b.wait_log(task, "EXECUTION_FINISHED", 20, "good")
    check(bad.wait_exit(30) == 0, f"the JVM with {what} runs to its end")
    one_line(bad.log(), failure, what)
    check(not b.instance_seen("bad"), f"a client with {what} reached the backend")


def check_token(ctx):
    """A backend that wants a token: configured the SkyWalking way (SW_AGENT_* variables, 'backend' alone) it works; a
    wrong token is refused (PERMISSION_DENIED, logged once), never logged itself, and the JVM runs on."""
    b = ctx.backend("token", "--token", "s3cret-Good")
    env = {"SW_AGENT_NAME": "svc-tok", "SW_AGENT_INSTANCE_NAME": "good",
           "SW_AGENT_COLLECTOR_BACKEND_SERVICES": f"127.0.0.1:{b.port}", "SW_AGENT_AUTHENTICATION": "s3cret-Good"}
    good = Jvm(ctx, "token-good", f"backend,poll={POLL}s,taskdir={ctx.dir('token-tasks')}", ["TaskLoad", 0, 20, 1],
               env=env)
    bad = Jvm(ctx, "token-bad", agent_opts(b.port, "svc-tok", "bad", ctx.dir("token-bad"), "token=Wr0ng-t0ken"),
              ["TaskLoad", 6, 0, 0])
    good_and_bad(b, "svc-tok", good, bad, r"PERMISSION_DENIED", "a wrong token")
    check("s3cret-Good" not in good.log() and "Wr0ng-t0ken" not in bad.log(), "the token is never logged")
    check(b.get("/stats")["denied"] > 0, "the backend denied calls")
    good.kill()


def make_ca(ctx, name):
    """A CA and a server certificate for 127.0.0.1 signed by it (openssl)."""
    d = ctx.dir(f"tls-{name}")
    run = lambda *a: subprocess.run(a, cwd=d, check=True, capture_output=True)
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN=test-ca-{name}",
        "-keyout", "ca.key", "-out", "ca.pem")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "server.key",
        "-out", "server.csr")
    Path(d, "ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "2", "-extfile", "ext", "-out", "server.pem")
    return Path(d)


def check_tls(ctx):
    """TLS with a self-signed CA: the agent trusting that CA runs a task; one trusting another CA fails to connect,
    logs it once, and its JVM runs on."""
    ca = make_ca(ctx, "right")
    other = make_ca(ctx, "other")
    b = ctx.backend("tls", "--tls-cert", str(ca / "server.pem"), "--tls-key", str(ca / "server.key"))
    good = Jvm(ctx, "tls-good", agent_opts(b.port, "svc-tls", "good", ctx.dir("tls-tasks"), f"cafile={ca}/ca.pem"),
               ["TaskLoad", 0, 20, 1])
    bad = Jvm(ctx, "tls-bad", agent_opts(b.port, "svc-tls", "bad", ctx.dir("tls-bad"), f"cafile={other}/ca.pem"),
              ["TaskLoad", 6, 0, 0])
    good_and_bad(b, "svc-tls", good, bad, r"retrying with backoff", "another CA")
    check(re.search(r"SSL|certificate", bad.log()), "the failure says it is the certificate")
    good.kill()


def check_unimplemented_and_http1(ctx):
    """A backend without the async-profiler service: polling off with one line, heartbeats go on. A plain HTTP/1.1
    server on the backend port: one line, the JVM runs on."""
    b = ctx.backend("unimpl", "--unimplemented")
    jvm = Jvm(ctx, "unimpl", agent_opts(b.port, "svc-u", "i1", ctx.dir("unimpl-tasks")), ["TaskLoad", 5, 0, 0])
    check(jvm.wait_exit(30) == 0, "the JVM runs to its end")
    one_line(jvm.log(), r"does not serve async-profiler tasks \(UNIMPLEMENTED\): task polling is off", "UNIMPLEMENTED")
    check(b.instance_seen("i1"), "heartbeats still reach the backend")
    port = free_port()
    http = subprocess.Popen(["/usr/bin/python3", "-m", "http.server", "--bind", "127.0.0.1", str(port)],
                            cwd=ctx.dir("http1"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1)
        jvm = Jvm(ctx, "http1", agent_opts(port, "svc-h", "i1", ctx.dir("http1-tasks")), ["TaskLoad", 5, 0, 0])
        check(jvm.wait_exit(30) == 0, "the JVM runs to its end")
        one_line(jvm.log(), r"retrying with backoff", "HTTP/1.1 server")
    finally:
        http.kill()
        http.wait()


def check_attach_backend(ctx):
    """`jsampler attach-backend PID OPTIONS` starts the task client in a JVM started without the agent."""
    b = ctx.backend("attach")
    jvm = Jvm(ctx, "attach", None, ["TaskLoad", 0, 25, 1])
    time.sleep(1.5)
    r = subprocess.run([str(ROOT / "build/jsampler"), "attach-backend", str(jvm.pid),
                        agent_opts(b.port, "svc-att", "att", ctx.dir("attach-tasks"))], capture_output=True, text=True)
    check(r.returncode == 0 and "task client started" in r.stdout, f"attach-backend: {r.returncode} {r.stdout} {r.stderr}")
    r2 = subprocess.run([str(ROOT / "build/jsampler"), "attach-backend", str(jvm.pid),
                         agent_opts(b.port, "svc-att", "att", ctx.dir("attach-tasks"))], capture_output=True, text=True)
    check(r2.returncode == 0 and "already runs with these options" in r2.stdout,
          f"the same request again is answered, not refused: {r2.returncode} {r2.stdout} {r2.stderr}")
    r3 = subprocess.run([str(ROOT / "build/jsampler"), "attach-backend", str(jvm.pid),
                         agent_opts(b.port, "svc-other", "att", ctx.dir("attach-tasks"))], capture_output=True, text=True)
    check(r3.returncode == 5 and "already runs with other options (service svc-att" in r3.stderr,
          f"a second client with other options is refused, naming the one that runs: {r3.returncode} {r3.stderr}")
    task = b.task("svc-att", 3)
    b.wait_log(task, "EXECUTION_FINISHED", 20, "att")
    (shares, n), a = analysis_shares(b, task)
    check(a["top"][0]["codeSignature"].endswith("CpuSplit.burnA"), f"hot method on top: {a['top'][:3]}")
    st = subprocess.run([str(ROOT / "build/jsampler"), "status", str(jvm.pid)], capture_output=True, text=True)
    check("task client: service svc-att" in st.stdout and "1 uploads" in st.stdout, f"status shows the client: {st.stdout}")
    jvm.kill()


def cli(*args, timeout=60):
    """build/jsampler with args: (exit status, stdout + stderr)."""
    r = subprocess.run([str(ROOT / "build/jsampler")] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def cli_session(ctx, pid, tag):
    """Every attach verb on pid must do its work and exit 0: start, status, dump, stop, collect. Returns status's
    output (taken while the session runs)."""
    out = Path(ctx.dir(f"{tag}-profiles"))
    rc, text = cli("start", "-e", "cpu", "-i", "5ms", pid)
    check(rc == 0 and "started" in text, f"{tag}: start: {rc} {text}")
    rc, status = cli("status", pid)
    check(rc == 0 and "running" in status, f"{tag}: status: {rc} {status}")
    time.sleep(1)  # samples to dump, even on a loaded machine
    rc, text = cli("dump", "-f", out / "dump.collapsed", pid)
    check(rc == 0 and (out / "dump.collapsed").stat().st_size > 0, f"{tag}: dump: {rc} {text}")
    rc, text = cli("stop", "-f", out / "stop.collapsed", pid)
    check(rc == 0 and (out / "stop.collapsed").stat().st_size > 0, f"{tag}: stop: {rc} {text}")
    rc, text = cli("collect", "-d", 1, "-f", out / "collect.collapsed", pid)
    check(rc == 0 and (out / "collect.collapsed").stat().st_size > 0, f"{tag}: collect: {rc} {text}")
    return status


def check_sw_env_cli(ctx):
    """A JVM in a SkyWalking environment (SW_AGENT_NAME and SW_AGENT_COLLECTOR_BACKEND_SERVICES set, the collector a
    port where nothing listens), no agent at start: the CLI's verbs start no task client and are never refused, before
    and after `jsampler attach-backend PID` (no options: the JVM's variables) started one; the same request again is
    answered, not refused."""
    env = skywalking_env()
    jvm = Jvm(ctx, "swcli", None, ["TaskLoad", 0, 60, 1])
    time.sleep(1.5)
    status = cli_session(ctx, jvm.pid, "before")
    check("task client" not in status, f"no task client was asked for, yet: {status}")
    check("task client" not in jvm.log(), f"no task client was asked for, yet the JVM logged one: {jvm.log()[-400:]}")
    rc, text = cli("attach-backend", jvm.pid)
    check(rc == 0 and f"service {env['SW_AGENT_NAME']}" in text and env["SW_AGENT_COLLECTOR_BACKEND_SERVICES"] in text,
          f"attach-backend with the JVM's SW_AGENT_* variables: {rc} {text}")
    status = cli_session(ctx, jvm.pid, "after")
    check(f"task client: service {env['SW_AGENT_NAME']}" in status, f"status shows the task client: {status}")
    rc, text = cli("attach-backend", jvm.pid)
    check(rc == 0 and "already runs with these options" in text, f"attach-backend again: {rc} {text}")
    jvm.kill()


def check_sw_env_agentpath(ctx):
    """-agentpath in SkyWalking environments: with only the collector variable set, a profiling start runs (no client,
    no error); 'backend' alone takes the address and the service from the variables and runs a task; the CLI's verbs
    work beside that client."""
    td = ctx.dir("swagent-profiles")
    jvm = Jvm(ctx, "collector-only", f"start,event=cpu,file={td}/p.collapsed", ["TaskLoad", 0, 2, 1],
              env={"SW_AGENT_NAME": None})
    check(jvm.wait_exit(40) == 0, f"the JVM with only the collector variable ran (see {jvm.err_path})")
    check(Path(td, "p.collapsed").stat().st_size > 0 and "task client" not in jvm.log(),
          f"it profiled and started no task client: {jvm.log()[-400:]}")
    b = ctx.backend("swenv")
    jvm = Jvm(ctx, "sw-backend", f"backend,instance=swi,poll={POLL}s,taskdir={ctx.dir('swenv-tasks')}",
              ["TaskLoad", 0, 40, 1], env={"SW_AGENT_NAME": "svc-swenv",
                                           "SW_AGENT_COLLECTOR_BACKEND_SERVICES": f"127.0.0.1:{b.port}"})
    wait_for(lambda: b.instance_seen("swi"), 20, "the instance's keepAlive")
    status = cli_session(ctx, jvm.pid, "beside-client")
    check("task client: service svc-swenv" in status, f"status shows the task client: {status}")
    task = b.task("svc-swenv", 2)
    b.wait_log(task, "EXECUTION_FINISHED", 30, "swi")
    check(len(b.uploads(task)) == 1, "the task's recording was uploaded")
    jvm.kill()


def check_size_plan(ctx, seconds=20, threads=16, uploadmax="512k"):
    """A task at interval=500us on 16 busy threads with a small uploadmax: the rate is planned down (logged, and in
    the JFR's settings), the upload fits, and the hot method's share is within 2 points of CpuSplit's measured split
    (at 1 ms the plan needed the two CPUs: beside the other JDK's run the JVM got 0.9, 0.4 MB fitted, and nothing was
    planned down; at 500us even one CPU's samples do not fit)
    (about 16,000-20,000 samples: the standard error of a share near 0.5 is about 0.4 points; the 10-minute
    benchmark, make task-size, holds it to 1 point). The split is measured over the whole busy time, which the task
    lies inside: CpuSplit's split is the same in every round, so the task's part has the same truth."""
    b = ctx.backend("plan")
    jvm = Jvm(ctx, "plan", agent_opts(b.port, "svc-plan", "i1", ctx.dir("plan-tasks"), f"uploadmax={uploadmax}"),
              ["TaskLoad", 0, seconds + 6, threads])
    wait_for(lambda: b.instance_seen("i1"), 20, "the instance's keepAlive")
    time.sleep(2)
    task = b.task("svc-plan", seconds, execArgs="interval=500us")
    b.wait_log(task, "EXECUTION_FINISHED", seconds + 30, "i1")
    m = re.search(r"interval ([\d.]+) ms \(raised so the recording fits uploadmax\)", jvm.log())
    check(m, "the plan raised the interval (log line)")
    up = b.uploads(task)[0]
    limit = int(uploadmax[:-1]) << {"k": 10, "m": 20}[uploadmax[-1]]
    check(up["contentSize"] <= limit, f"{up['contentSize']} bytes uploaded, uploadmax {limit}")
    settings = subprocess.run([ctx.jfr_tool, "print", "--events", "jdk.ActiveSetting", up["path"]],
                              capture_output=True, text=True).stdout
    used_ns = round(float(m.group(1)) * 1e6)
    check(re.search(r'name = "interval"\s+value = "' + str(used_ns) + '"', settings),
          f"the interval used ({used_ns} ns) is in the JFR's settings")
    (planned, n1), _ = analysis_shares(b, task)
    check(jvm.wait_exit(seconds + 30) == 0, "the workload ran to its end")
    t = truth(jvm)
    check(n1 >= 10000, f"only {n1} samples in burnA/B/C: the machine was too busy for the check's statistics")
    d = abs(planned["burnA"] - t["burnA"])
    check(d <= 0.02, f"burnA {planned['burnA']:.3f} ({n1} samples) vs {t['burnA']:.3f} measured")
    ctx.note(f"size-plan: interval {m.group(1)} ms, {up['contentSize']} bytes of {limit}; burnA "
             f"{planned['burnA']:.3f} ({n1} samples) vs {t['burnA']:.3f} measured")


def check_size_adapt(ctx):
    """Planned on an idle process, the task's workload starts after it began: the recording grows past the plan,
    the rate is lowered mid-task (logged), the segments join into one JFR both the JDK and the analysis read, and
    it fits uploadmax."""
    b = ctx.backend("adapt")
    go = ctx.work / "adapt.go"  # the workload starts once the task runs, planned on the idle process
    jvm = Jvm(ctx, "adapt", agent_opts(b.port, "svc-adapt", "i1", ctx.dir("adapt-tasks"), "uploadmax=512k"),
              ["TaskLoad", f"@{go}", 30, 2])
    wait_for(lambda: b.instance_seen("i1"), 20, "the instance's keepAlive")
    task = b.task("svc-adapt", 24, execArgs="interval=1ms")
    jvm.wait_log(rf"task {re.escape(task)}: profiling", 30)
    go.touch()
    b.wait_log(task, "EXECUTION_FINISHED", 60, "i1")
    jvm.wait_log(r"grows faster than planned", 1)
    up = b.uploads(task)[0]
    check(up["contentSize"] <= 512 << 10, f"{up['contentSize']} bytes, uploadmax 512k")
    check(jfr_tool_events(ctx.jfr_tool, up["path"]) > 1000, "the joined JFR parses with the JDK's jfr")
    settings = subprocess.run([ctx.jfr_tool, "print", "--events", "jdk.ActiveSetting", up["path"]],
                              capture_output=True, text=True).stdout
    intervals = set(re.findall(r'name = "interval"\s+value = "(\d+)"', settings))
    check("1000000" in intervals and len(intervals) >= 2, f"each segment's interval is in its settings: {intervals}")
    (shares, n), a = analysis_shares(b, task)
    check(a["top"][0]["codeSignature"].endswith("CpuSplit.burnA"), f"hot method on top: {a['top'][:3]}")
    jvm.kill()
    ctx.note(f"size-adapt: {up['contentSize']} bytes of 524288, {n} samples")


def check_fleet(ctx, count=50):
    """50 JVMs polling one backend: a task for all of them, every one uploads, each exactly once. The JVMs start five
    at a time, each five once the backend has their keepAlives: 50 JVM start-ups at once held the machine for
    20 s, and the checks on the other lanes saw their own JVMs start only after it."""
    b = ctx.backend("fleet")
    td = ctx.dir("fleet-tasks")
    jvms = []
    try:
        for i in range(count):
            jvms.append(Jvm(ctx, f"fleet{i}", agent_opts(b.port, "svc-fleet", f"n{i}", td).replace(
                f"poll={POLL}s", "poll=2s"), ["TaskLoad", 90, 0, 0],
                jvm_args=["-Xmx24m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k"]))
            if len(jvms) % 5 == 0 or len(jvms) == count:
                wait_for(lambda: len(b.get("/instances")) >= len(jvms), 60, f"{len(jvms)} instances' keepAlives",
                         step=0.2)
        task = b.task("svc-fleet", 2)
        wait_for(lambda: len(b.progress(task)["successInstances"]) >= count, 90, f"{count} uploads", step=1)
        ups = b.uploads(task)
        check(len(ups) == count and len({u["instance"] for u in ups}) == count, f"{len(ups)} uploads")
        check(all(u["received"] == u["contentSize"] for u in ups), "every upload whole")
        for j in jvms:
            j.exited_early()
    finally:
        for j in jvms:
            j.kill()
    ctx.note(f"fleet: {count} JVMs, {len(ups)} uploads")


def files_holding(root, secret, skip=(".cmd", ".oap.log")):
    """Files under root whose bytes contain secret (the harness's own command lines and the test server's log are
    not ours to judge)."""
    return [str(p) for p in Path(root).rglob("*")
            if p.is_file() and not p.name.endswith(skip) and secret.encode() in p.read_bytes()]


def check_token_hidden(ctx):
    """The token reaches the backend and nothing else: not the log (debug level), not a reply or `jsampler status`,
    not the uploaded recording (its jdk.ActiveSetting events hold the options), not the html, collapsed or JFR
    outputs of a session, not taskdir; not the 'loaded twice' message, not `jsampler attach-backend`'s output."""
    secret = "Tok-" + uuid.uuid4().hex
    b = ctx.backend("tokhide", "--token", secret)
    td, out = ctx.dir("tokhide-tasks"), Path(ctx.dir("tokhide-out"))
    cli = str(ROOT / "build/jsampler")
    jvm = Jvm(ctx, "tokhide", agent_opts(b.port, "svc-th", "i1", td, f"token={secret},loglevel=debug"),
              ["TaskLoad", 0, 40, 1])
    wait_for(lambda: b.instance_seen("i1"), 20, "the instance's keepAlive")
    task = b.task("svc-th", 2)
    b.wait_log(task, "EXECUTION_FINISHED", 30, "i1")
    check(len(b.uploads(task)) == 1, "the task's recording uploaded")

    def run(name, verb, *args):  # with the library the JVMs run (JSAMPLER_AGENT may name another build)
        r = subprocess.run([cli, verb, "--libpath", ctx.agent] + [str(a) for a in args], capture_output=True, text=True)
        (ctx.work / f"{name}.cli.txt").write_text(f"{r.returncode}\n{r.stdout}{r.stderr}")
        return r
    check(run("start", "start", "-i", "1ms", "-f", out / "s.html", jvm.pid, "--", f"jfrfile={out}/s.jfr")
          .returncode == 0, "a session started by hand")
    time.sleep(1.5)
    check(run("dump", "dump", "-f", out / "d.collapsed", jvm.pid).returncode == 0, "dump")
    check("task client" in run("status", "status", jvm.pid).stdout, "status shows the task client")
    check(run("stop", "stop", "-f", out / "s.html", jvm.pid).returncode == 0, "stop")  # without -f: stdout, as asprof
    check((out / "s.html").stat().st_size > 0 and (out / "s.jfr").stat().st_size > 0, "the session's outputs")
    twice = Jvm(ctx, "tokhide-twice", agent_opts(b.port, "svc-th", "i2", td, f"token={secret}"), ["TaskLoad", 0, 0, 0],
                jvm_args=[f"-agentpath:{ctx.agent}=loglevel=info"])
    check(twice.wait_exit(30) != 0 and "loaded twice" in twice.log(), f"the second -agentpath refused: {twice.log()}")
    check("token=***" in twice.log(), f"the message shows the token hidden: {twice.log()}")
    bare = Jvm(ctx, "tokhide-attach", None, ["TaskLoad", 0, 20, 1])
    time.sleep(1.5)
    r = run("attach-backend", "attach-backend", bare.pid, agent_opts(b.port, "svc-th", "i3", ctx.dir("tokhide-t3"),
                                                                     f"token={secret}"))
    check(r.returncode == 0 and "task client started" in r.stdout, f"attach-backend: {r.stdout} {r.stderr}")
    wait_for(lambda: b.instance_seen("i3"), 20, "the attached client's keepAlive (the token was sent)")
    jvm.kill()
    bare.kill()
    twice.kill()
    hits = files_holding(ctx.work, secret)
    check(not hits, f"the token appears in {hits}")
    ctx.note(f"token-hidden: {sum(1 for p in ctx.work.rglob('*') if p.is_file())} files checked")


def check_log_injection(ctx):
    """ExecArgs from the server with a newline and terminal control characters: the task error is logged as one
    line, the server's text escaped, so it can neither forge a log line nor drive a terminal."""
    b = ctx.backend("inject")
    jvm = Jvm(ctx, "inject", agent_opts(b.port, "svc-inj", "i1", ctx.dir("inject-tasks")), ["TaskLoad", 0, 20, 1])
    wait_for(lambda: b.instance_seen("i1"), 20, "the instance's keepAlive")
    forged = "[jsampler] ERROR: forged by the server"
    task = b.task("svc-inj", 2, execArgs=f"interval=5ms,bogus\n{forged}\x1b[2J\r")
    b.wait_log(task, "EXECUTION_TASK_ERROR", 10, "i1")
    time.sleep(0.5)
    log = jvm.log()
    lines = [l for l in log.splitlines() if "forged" in l]
    check(lines and all(re.match(r"\[jsampler\] (WARN|INFO): task ", l) for l in lines),
          f"the server's text stays inside the agent's own lines: {lines}")
    check("\\n" + forged + "\\x1b[2J\\r" in log, f"its newline and controls shown escaped: {lines}")
    check("\x1b" not in log and "\r" not in log, "no control character reaches the log")
    jvm.kill()


def check_garbage_backend(ctx):
    """A server that answers every connection with random bytes: one line, retries with backoff, the JVM runs to
    its end."""
    g = RawServer("garbage")
    try:
        jvm = Jvm(ctx, "garbage", agent_opts(g.port, "svc-g", "i1", ctx.dir("garbage-tasks")), ["TaskLoad", 6, 0, 0])
        check(jvm.wait_exit(30) == 0, "the JVM runs to its end")
        one_line(jvm.log(), r"retrying with backoff", "a garbage-speaking server")
        check(g.connections >= 2, f"the client tried again ({g.connections} connections)")
    finally:
        g.stop()


def check_oversize_answer(ctx):
    """A server answering task polls with a 5 MiB message (the client reads at most 4 MiB): the poll fails with one
    line, heartbeats go on, the JVM runs to its end."""
    b = ctx.backend("hugeanswer", "--huge-commands", str(5 << 20))
    jvm = Jvm(ctx, "hugeanswer", agent_opts(b.port, "svc-huge", "i1", ctx.dir("huge-tasks")), ["TaskLoad", 8, 0, 0])
    check(jvm.wait_exit(40) == 0, "the JVM runs to its end")
    one_line(jvm.log(), r"task poll failed", "an oversized answer")
    check(b.instance_seen("i1"), "heartbeats still reach the backend")
    check(b.get("/stats")["polls"] >= 2, "polls are retried")


def check_flood_answer(ctx):
    """A server answering task polls with empty messages without end (a unary call gets one): each poll fails within
    moments, not at its deadline, with one line (the client keeps no more than the one answer: an empty message costs
    a queued node all the same), heartbeats go on, the JVM runs to its end."""
    b = ctx.backend("flood", "--flood-commands")
    jvm = Jvm(ctx, "flood", agent_opts(b.port, "svc-flood", "i1", ctx.dir("flood-tasks")), ["TaskLoad", 8, 0, 0])
    check(jvm.wait_exit(40) == 0, "the JVM runs to its end")
    one_line(jvm.log(), r"task poll failed.*a second message in answer to a unary call", "a flooded poll")
    check(b.instance_seen("i1"), "heartbeats still reach the backend")
    polls = b.get("/stats")["polls"]
    check(polls >= 3, f"polls fail fast and are retried: {polls} in the JVM's 8 s (a poll's deadline is 30 s)")
    ctx.note("flood-answer: " + re.search(r"[^\n]*task poll failed[^\n]*", jvm.log()).group(0)[:200] + f"; {polls} polls")


def check_reset_mid_upload(ctx):
    """The connection is reset (TCP RST) in the middle of an upload, the server staying up: one line, and the
    recording is uploaded again, once, whole."""
    b = ctx.backend("reset")
    proxy = RawServer("reset", upstream=b.port, reset_after=16000)
    try:
        td = ctx.dir("reset-tasks")
        jvm = Jvm(ctx, "reset", agent_opts(proxy.port, "svc-rst", "i1", td), ["TaskLoad", 0, 40, 2])
        wait_for(lambda: b.instance_seen("i1"), 20, "the instance's keepAlive")
        task = b.task("svc-rst", 4, execArgs="interval=1ms")
        b.wait_log(task, "EXECUTION_FINISHED", 40, "i1")
        check(proxy.resets == 1, f"the upload was reset ({proxy.resets})")
        ups = b.uploads(task)
        check(len(ups) == 1 and ups[0]["received"] == ups[0]["contentSize"] > 16000, f"uploaded once, whole: {ups}")
        check(jfr_tool_events(ctx.jfr_tool, ups[0]["path"]) > 0, "the JFR parses")
        one_line(jvm.log(), r"upload failed", "a reset upload")
        wait_for(lambda: not list(Path(td).iterdir()), 5, "taskdir emptied")
        jvm.kill()
        ctx.note(f"reset-mid-upload: reset after 16000 bytes, then {ups[0]['contentSize']} bytes uploaded once")
    finally:
        proxy.stop()


def check_sigterm_mid_upload(ctx):
    """SIGTERM while an upload waits for the server's go-ahead: the JVM ends promptly with one line saying so, the
    recording stays in taskdir, and the next agent with the same taskdir uploads it once, whole."""
    port = free_port()
    state = ctx.work / "term.state.json"
    b = ctx.backend("term", "--slow-collect", "30", port=port, state=state)
    td = ctx.dir("term-tasks")
    # C1 only: HotSpot's exit waits up to 10 s (longer on a starved machine) for a compiler thread in the middle of a
    # compile (VM_Exit::wait_for_threads_in_native_to_block), which a C2 compile of the 4-s-old workload on a loaded
    # machine made 11.6 and 16.8 s in two clean-clone runs, the agent's part over at 0.6 s; C1's compiles take
    # milliseconds, so what is left to judge is the agent's
    jvm = Jvm(ctx, "term", agent_opts(port, "svc-term", "first", td), ["TaskLoad", 0, 60, 1],
              jvm_args=["-XX:TieredStopAtLevel=1"])
    wait_for(lambda: b.instance_seen("first"), 20, "the instance's keepAlive")
    task = b.task("svc-term", 2)
    wait_for(lambda: b.get("/stats")["collects"] >= 1, 30, "the upload to begin")
    time.sleep(0.5)
    # The JVM's end is timed by a watcher process of its own (the process gone or a zombie, looked at every 20 ms,
    # by the kernel's clock): this harness's thread may wake late beside the other lane's thread and busy JVMs (once
    # 11.6 s were timed here with no stacks taken: the JVM had ended by the thread's first look, whenever that was).
    watch = subprocess.Popen(["sh", "-c", 'while s=$(cut -d" " -f3 /proc/$0/stat 2>/dev/null) && [ "$s" != Z ]; '
                              'do sleep 0.02; done; cat /proc/uptime', str(jvm.pid)],
                             stdout=subprocess.PIPE, text=True)
    up0 = float(Path("/proc/uptime").read_text().split()[0])
    jvm.proc.send_signal(signal.SIGTERM)
    g0 = g1 = up0
    try:
        jvm.proc.wait(3)
    except subprocess.TimeoutExpired:  # slow: where every thread is, for the log (gdb's own time not counted)
        g0 = float(Path("/proc/uptime").read_text().split()[0])
        stacks = subprocess.run(["gdb", "-p", str(jvm.pid), "-batch", "-ex", "thread apply all bt 15"],
                                capture_output=True, text=True, timeout=60).stdout if shutil.which("gdb") else ""
        (ctx.work / "term.slow-exit-stacks.txt").write_text(stacks)
        g1 = float(Path("/proc/uptime").read_text().split()[0])
    jvm.wait_exit(20)
    out, _ = watch.communicate(timeout=30)
    end = float(out.split()[0])
    # gdb held the JVM only for the part of its attempt before the JVM's end (it may have ended as gdb started)
    took = end - up0 - max(0.0, min(end, g1) - g0)
    check(took < 10, f"the JVM took {took:.1f} s to end after SIGTERM (threads 3 s after it: "
                     f"{ctx.work / 'term.slow-exit-stacks.txt'})")
    check("SIGSEGV" not in jvm.log() and "fatal error" not in jvm.log(), "no crash")
    one_line(jvm.log(), r"upload cut short by the JVM's exit; the recording waits in", "an upload cut by SIGTERM")
    check(list(Path(td).glob("*.task")) and list(Path(td).glob("*.jfr")), "the recording waits in taskdir")
    b.stop()
    b = ctx.backend("term2", port=port, state=state)
    jvm2 = Jvm(ctx, "term2", agent_opts(port, "svc-term", "second", td), ["TaskLoad", 30, 0, 0])
    b.wait_log(task, "EXECUTION_FINISHED", 30, "first")
    ups = b.uploads(task)
    check(len(ups) == 1 and ups[0]["received"] == ups[0]["contentSize"], f"uploaded once, whole: {ups}")
    check(jfr_tool_events(ctx.jfr_tool, ups[0]["path"]) > 0, "the JFR parses")
    jvm2.kill()
    ctx.note(f"sigterm-mid-upload: the JVM ended {took:.1f} s after SIGTERM; uploaded later by the next agent")


CHECKS = {
    "basic": check_basic,
    "events": check_events,
    "bad-options": check_bad_options,
    "task-errors": check_task_errors,
    "oversize": check_oversize,
    "slow-backend": check_slow_backend,
    "backend-late": check_backend_late,
    "killed-mid-upload": check_killed_mid_upload,
    "restart-pending": check_restart_pending,
    "exit-mid-task": check_exit_mid_task,
    "held-up": check_held_up,
    "token": check_token,
    "token-hidden": check_token_hidden,
    "log-injection": check_log_injection,
    "tls": check_tls,
    "unimplemented-http1": check_unimplemented_and_http1,
    "garbage-backend": check_garbage_backend,
    "oversize-answer": check_oversize_answer,
    "flood-answer": check_flood_answer,
    "reset-mid-upload": check_reset_mid_upload,
    "sigterm-mid-upload": check_sigterm_mid_upload,
    "attach-backend": check_attach_backend,
    "sw-env-cli": check_sw_env_cli,
    "sw-env-agentpath": check_sw_env_agentpath,
    "size-plan": check_size_plan,
    "size-adapt": check_size_adapt,
    "fleet": check_fleet,
}

#!/usr/bin/python3
"""stress.py: the profiler under stress (make stress, for hours; make stress-smoke, about a minute with the JDKs
side by side, part of make test).

One JVM per JDK runs java-test-harness/Stress.java (waves of short threads, recursion into StackOverflowError,
deoptimisation, classes loaded and unloaded through throw-away loaders, heavy GC, JNI, contended monitors and
locks) with the agent loaded from the start:

  -agentpath:libjsampler.so=start,event=cpu,interval=1ms,wall,alloc,lock,cstack=dwarf,loop=1s,timeout=30s,
                            file=.../p-%n.jfr,backend=127.0.0.1:PORT,service=stress,instance=jdkNN,poll=1s,taskdir=...

(the first session, which ends by itself: timeout=5s in the smoke form) while three drivers start, dump and stop
sessions at once: the workload's Java API (StressApi), `build/jsampler` over attach (AttachDriver, which also stops
other drivers' sessions now and then) and SkyWalking tasks created on the grpcio test backend (BackendDriver); `jcmd
Thread.print` runs now and then (JcmdDriver). See bench/stress_drivers.py for what a refusal is.

Timeline: warm-up; a quiet point (drivers parked, no session, two System.gc()): the baseline of RSS, open files and
threads; the main phase; a quiet point again: the end figures; stop; every output checked (bench/stress_check.py).
RSS, open files, threads and CPU time are sampled all along (resources.csv).

Watchdogs: the workload's own (an activity that stops moving: STRESS_STALL, a Java thread dump, halt) and this
driver's: a JVM that prints no heartbeat for --stall seconds, or runs past its time, gets its native stacks taken
(gdb), its Java stacks (jcmd) and /proc's view of its threads, and is killed: the run fails. So does a driver's
command that does not return within its deadline.

Pass: exit 0 and STRESS_DONE; no hs_err file (a long run lifts the core size limit, so a crash also leaves its core
file in OUT/jdkNN/run for gdb); no stall; no driver failure (every refusal clean); every driver
completed cycles; at the end quiet point RSS within the bound of the baseline, no more open files, no agent
thread but the task client's and the same Java threads; every output valid; the taskdir empty.

The RSS bound is --rss-bound-mib plus what the classes unloaded between the quiet points cost a JVM under any
AsyncGetCallTrace profiler: such a profiler needs a jmethodID for every method a session may sample, and HotSpot
never frees one, not even when its class is unloaded. The cost a class is async-profiler 4.5's, measured on the same
class (PEER_BYTES_PER_CLASS; docs/BENCHMARKS.md, "Class churn beside async-profiler"). With --nmt detail (a run that
names the JVM's malloc call sites, and pays NMT's headers on every block) the allowance is instead what the JVM's
jmethodID call sites grew by. A long run has NMT off by default, as in production; the smoke run has its summary.

--control runs the same workload and jcmd driver without the profiler (the reference for the JVM's own growth).

Usage: /usr/bin/python3 bench/stress.py [--smoke] [--control] [--minutes M] [--cpu-hours H] [--jdks 17,25]
       [--nmt off|summary|detail] [--rss-bound-mib N] [--out DIR]
Results: OUT/jdkNN/summary.txt and summary.json, resources.csv, the JVM's stdout and agent log, the drivers' logs.
"""
import argparse
import concurrent.futures
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "java-test-harness" / "backend"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Backend  # noqa: E402
from stress_check import Checker  # noqa: E402
from stress_drivers import AttachDriver, BackendDriver, JcmdDriver, classify_log  # noqa: E402

JDKS = {"17": os.environ.get("JDK17_HOME", "/usr/lib/jvm/java-17-openjdk-amd64"),
        "25": os.environ.get("JDK25_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")}
SOURCES = ["Stress.java", "StressApi.java", "WalkStress.java", "UnloadChurn.java", "JfrTally.java"]
AGENT = Path(os.environ.get("JSAMPLER_AGENT", ROOT / "build/libjsampler.so"))
CLI = ROOT / "build/jsampler"
JAR = ROOT / "build/jsampler.jar"
# JVM-internal thread pools that HotSpot grows and shrinks by itself with load (compiler and GC workers).
JVM_POOLS = ("C1 CompilerThre", "C2 CompilerThre", "GC Thread#", "G1 Conc#", "G1 Refine#")
# RSS a JVM keeps for each class unloaded while async-profiler 4.5 ran a session (its jmethodIDs; on JDK 25 with the
# JVM's own 133 bytes a class): FastChurn, docs/BENCHMARKS.md "Class churn beside async-profiler".
PEER_BYTES_PER_CLASS = {"17": 88, "25": 214}
# Before JDK 24, G1 throws OutOfMemoryError ("Retried waiting for GCLocker too often") when an allocation finds the GC
# locked by JNI critical sections (the workload's zlib) more than GCLockerRetryAllocationCount (2) times, with the heap
# mostly free: JDK-8192647, gone with G1's GC locker in JDK 24 (JDK-8318706). A control run without any agent met it
# too, and it ended a JDK 17 long run in the churn activity (docs/BENCHMARKS.md); the setting production uses keeps it
# from ending the workload. The JVM's log still shows each time it happens.
GCLOCKER_ARGS = ["-XX:+UnlockDiagnosticVMOptions", "-XX:GCLockerRetryAllocationCount=100"]


def log(msg):
    print(f"stress: {msg}", flush=True)


class Plan:
    """The timings and bounds of a run (smoke or long)."""

    def __init__(self, a):
        self.smoke = a.smoke
        if a.smoke:
            self.warmup_s, self.main_s, self.cpu_s, self.agentpath_s = 12, 26, None, 5
            self.stall_s, self.stall_cpu_s, self.deadline_s, self.jcmd_s = 60, 60, 60, 15
            self.sample_s, self.validate_s, self.jfr_cli_every, self.go_every = 1, None, 10, 5
            self.min_full = {"api": 3, "attach": 1, "backend": 1}
        else:
            self.warmup_s, self.agentpath_s = a.warmup, 30
            self.main_s = a.minutes * 60
            self.cpu_s = a.cpu_hours * 3600 if a.cpu_hours else None
            self.stall_s, self.stall_cpu_s, self.deadline_s, self.jcmd_s = a.stall, 300, 300, 60
            self.sample_s, self.validate_s, self.jfr_cli_every, self.go_every = 5, 300, 50, 20
            self.min_full = None  # one per 2 minutes of main phase and driver, set once the phase is known
        self.rss_bound_kib = a.rss_bound_mib * 1024
        self.nmt = a.nmt or ("summary" if a.smoke else "off")
        self.keep = a.keep or a.smoke
        self.control = a.control


# ------------------------------------------------------------------ the JVM and what /proc says of it


def proc_figures(pid):
    """(RSS KiB, open fds, threads, CPU seconds) of pid, or None once it is gone."""
    try:
        rss = threads = 0
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
        return rss, fds, threads, cpu
    except (OSError, ValueError, IndexError):
        return None


def thread_names(pid):
    names = []
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            names.append(Path(f"/proc/{pid}/task/{t}/comm").read_text().strip())
        except OSError:
            pass
    return sorted(names)


def fd_targets(pid):
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            out.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            pass
    return sorted(out)


class Jvm:
    """The stress JVM: its stdout read line by line (heartbeats, pause acknowledgements, stall reports)."""

    def __init__(self, cmd, cwd, out_dir, core=False):
        self.stdout_path = out_dir / "stdout.txt"
        self.err = open(out_dir / "agent.log", "w")
        (out_dir / "command.txt").write_text(" ".join(cmd) + "\n")
        # a long run lets a crash leave a core file (in cwd, where the kernel's core_pattern allows) for gdb
        unlimit = lambda: resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        self.proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=self.err, text=True, bufsize=1,
                                     preexec_fn=unlimit if core else None)
        self.pid = self.proc.pid
        self.last_beat = time.monotonic()
        self.beats = []
        self.lines = {}   # first word -> last such line
        self.events = {w: threading.Event() for w in ("STRESS_STARTED", "STRESS_PAUSED", "STRESS_RESUMED",
                                                      "STRESS_DONE", "STRESS_STALL", "STRESS_FAIL")}
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        with open(self.stdout_path, "w") as f:
            for line in self.proc.stdout:
                f.write(line)
                f.flush()
                word = line.split(" ", 1)[0].strip()
                if word == "STRESS_BEAT":
                    self.last_beat = time.monotonic()
                    self.beats.append(line.strip())
                if word in self.events:
                    self.lines[word] = line.strip()
                    self.events[word].set()

    def expect(self, word, timeout):
        """Waits for a line starting with word; False on timeout or exit."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.events[word].wait(0.5):
                self.events[word].clear()
                return True
            if self.proc.poll() is not None:
                return False
        return False


def diagnose(jvm, out_dir, why):
    """Native and Java stacks of a JVM that stopped making progress, then kill it."""
    log(f"STALL: {why}; taking stacks of pid {jvm.pid}")
    d = out_dir / "stall"
    d.mkdir(exist_ok=True)
    (d / "why.txt").write_text(why + "\n")
    with open(d / "proc.txt", "w") as f:
        for t in sorted(os.listdir(f"/proc/{jvm.pid}/task")) if Path(f"/proc/{jvm.pid}").exists() else []:
            base = f"/proc/{jvm.pid}/task/{t}"
            parts = []
            for name in ("comm", "wchan", "stat", "stack"):
                try:
                    parts.append(Path(f"{base}/{name}").read_text().strip().replace("\n", " | "))
                except OSError as e:
                    parts.append(f"({name}: {e.strerror})")
            f.write(f"{t}: " + " :: ".join(parts) + "\n")
    for name, cmd, timeout in (("gdb.txt", ["gdb", "-p", str(jvm.pid), "-batch", "-ex", "set pagination off",
                                            "-ex", "thread apply all bt"], 300),
                               ("jcmd.txt", [jcmd_of(jvm), str(jvm.pid), "Thread.print"], 60)):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            (d / name).write_text(r.stdout + r.stderr)
        except (OSError, subprocess.TimeoutExpired) as e:
            (d / name).write_text(f"{cmd[0]}: {e}\n")
    jvm.proc.kill()
    jvm.proc.wait()


# NMT's call sites that make jmethodIDs (Method::make_jmethod_id, Method::ensure_jmethod_ids,
# InstanceKlass::get_jmethod_id): HotSpot never frees what they allocate.
JMETHOD_SITE = re.compile(r"jmethod_id")


def nmt_sites(text):
    """NMT detail's malloc call sites: {(category, 'f1 < f2 < f3 < f4'): KiB}."""
    out = {}
    for b in re.finditer(r"((?:\[0x[0-9a-f]+\][^\n]*\n)+)\s*\(+malloc=(\d+)KB (?:type|tag)=(\w+)", text):
        frames = [re.sub(r"^\[0x[0-9a-f]+\]\s*", "", f).split("(")[0] for f in b.group(1).strip().split("\n")]
        key = (b.group(3), " < ".join(frames[:4]))
        out[key] = out.get(key, 0) + int(b.group(2))
    return out


def nmt_summary(jcmd, pid, path, detail):
    """The JVM's own memory by category (Native Memory Tracking), committed KiB: {'Total': n, 'Class': n, ...};
    with detail, also 'jmethodIDs': the KiB its call sites that make jmethodIDs hold. The text kept in path."""
    try:
        r = subprocess.run([jcmd, str(pid), "VM.native_memory", "detail" if detail else "summary"],
                           capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return {}
    path.write_text(r.stdout + r.stderr)
    out = {}
    for m in re.finditer(r"(?m)^(?:-\s+)?(\S[^(\n]*?)\s*\(reserved=(\d+)KB, committed=(\d+)KB\)", r.stdout):
        out[m.group(1).strip()] = int(m.group(3))
    m = re.search(r"Total: reserved=(\d+)KB, committed=(\d+)KB", r.stdout)
    if m:
        out["Total"] = int(m.group(2))
    summary = r.stdout.split("Details:")[0]
    out["malloc"] = sum(int(x) for x in re.findall(r"\(malloc=(\d+)KB", summary))  # the JVM's own malloc in use
    if detail:  # a site: its stack lines, then "(malloc=NKB type=X #n)" ("tag=" on newer JDKs)
        out["jmethodIDs"] = sum(kib for (_, frames), kib in nmt_sites(r.stdout).items() if JMETHOD_SITE.search(frames))
    return out


def workload_count(fig, key):
    """A counter of the workload's STRESS_PAUSED line at a quiet point (0 when absent)."""
    m = re.search(rf"\b{key}=(\d+)", fig.get("workload", ""))
    return int(m.group(1)) if m else 0


def jcmd_of(jvm):
    return str(Path(jvm.proc.args[0]).parent / "jcmd")


# ------------------------------------------------------------------ one JDK


class Run:
    def __init__(self, label, home, plan, out):
        self.label, self.home, self.plan, self.out = label, home, plan, out
        self.run_dir = out / "run"
        self.checks = []       # (name, ok, detail)
        self.figures = {}
        self.samples = []      # (t, rss, fds, threads, cpu, phase)
        self.phase = "warm-up"
        self.checked = {}      # path -> None or the reason it is invalid
        self.kept = 0
        self.stalled = None

    def check(self, name, ok, detail):
        self.checks.append((name, bool(ok), detail))
        log(f"jdk{self.label} {'PASS' if ok else 'FAIL'} {name}: {detail}")

    # ---- sampling and validation while the JVM runs

    def sampler(self, jvm, t0):
        with open(self.out / "resources.csv", "w") as f:
            f.write("t_s,rss_kib,fds,threads,cpu_s,phase\n")
            while jvm.proc.poll() is None:
                fig = proc_figures(jvm.pid)
                if fig:
                    row = (round(time.monotonic() - t0, 1),) + fig + (self.phase,)
                    self.samples.append(row)
                    f.write(",".join(str(x) for x in row) + "\n")
                    f.flush()
                time.sleep(self.plan.sample_s)

    def output_files(self, older_than=None):
        """Every output file not yet checked (older_than: only those not written for that many seconds)."""
        now = time.time()
        for source, d in (("api", self.run_dir / "api"), ("attach", self.out / "attach"),
                          ("agentpath", self.out / "agentpath"), ("uploads", self.out / "oap-store")):
            for p in sorted(d.rglob("*")) if d.exists() else []:
                if not p.is_file() or str(p) in self.checked:
                    continue
                if older_than is not None and now - p.stat().st_mtime < older_than:
                    continue
                yield source, p

    def validate(self, checker, older_than=None):
        for source, p in self.output_files(older_than):
            why = checker.check(p, source)
            self.checked[str(p)] = why
            if why:
                log(f"jdk{self.label} invalid output {p}: {why}")
            elif not self.plan.keep and source != "uploads" and len(self.checked) % 100:
                p.unlink()  # a long run keeps every 100th valid file, and every invalid one
            else:
                self.kept += 1

    # ---- quiet points

    def quiet(self, tag, jvm, drivers, attach):
        """Parks every driver and activity, stops any session, and measures. Returns the figures or None."""
        self.phase = f"quiet-{tag}"
        for d in drivers:
            d.pause()
        for d in drivers:
            if not d.wait_idle(self.plan.deadline_s + 60):
                d.fail(f"{d.name}: did not finish its cycle within {self.plan.deadline_s + 60} s of a pause")
        (self.run_dir / "control").write_text("pause\n")
        if not jvm.expect("STRESS_PAUSED", self.plan.stall_s):
            return None
        stopped = attach.stop_any() if attach else None
        r = subprocess.run([str(CLI), "status", str(jvm.pid)] if attach else ["true"], capture_output=True, text=True,
                           timeout=120)
        state = r.stdout.split(" ", 1)[0] if attach else "no agent"
        held = re.search(r"perf_counters_open=(\d+)", r.stdout)
        named = re.search(r"names_cached=(\d+)", r.stdout)
        heap = re.search(r"heap_used_kib=(\d+) heap_free_kib=(\d+)", r.stdout)
        time.sleep(3)  # the session's threads end after stop returns
        # NMT first: its detail report names call sites through HotSpot's ELF decoder, which keeps the libraries it
        # read open (files, memory); taken before the figures, that is in the baseline, not in the growth
        nmt = {} if self.plan.nmt == "off" else \
            nmt_summary(jcmd_of(jvm), jvm.pid, self.out / f"nmt-{tag}.txt", self.plan.nmt == "detail")
        rows = []
        for _ in range(6):
            rows.append(proc_figures(jvm.pid))
            time.sleep(0.5)
        rows = [r_ for r_ in rows if r_]
        fig = {"rss_kib": int(statistics.median(r_[0] for r_ in rows)), "fds_min": min(r_[1] for r_ in rows),
               "fds_max": max(r_[1] for r_ in rows), "threads": min(r_[2] for r_ in rows),
               "cpu_s": rows[-1][3], "thread_names": thread_names(jvm.pid), "fd_targets": fd_targets(jvm.pid),
               "stopped_session": stopped, "state": state, "workload": jvm.lines.get("STRESS_PAUSED", ""),
               "agent_counters": int(held.group(1)) if held else None,
               "names_cached": int(named.group(1)) if named else None,
               "heap_used_kib": int(heap.group(1)) if heap else None,
               "heap_free_kib": int(heap.group(2)) if heap else None,
               "nmt_committed_kib": nmt}
        log(f"jdk{self.label} quiet point {tag}: RSS {fig['rss_kib']} KiB, fds {fig['fds_min']}..{fig['fds_max']}, "
            f"threads {fig['threads']}, CPU {fig['cpu_s']:.0f} s, session stopped: {stopped}, {state}")
        (self.run_dir / "control").write_text("run\n")
        if not jvm.expect("STRESS_RESUMED", self.plan.stall_s):
            return None
        self.phase = "main" if tag == "warm" else "end"
        for d in drivers:
            d.resume()
        return fig

    # ---- the run

    def go(self):
        p = self.plan
        shutil.rmtree(self.out, ignore_errors=True)
        for d in (self.run_dir / "api", self.out / "attach", self.out / "agentpath"):
            d.mkdir(parents=True)
        taskdir = self.out / "tasks"
        taskdir.mkdir(mode=0o700)
        classes = self.out / "classes"
        subprocess.run([f"{self.home}/bin/javac", "--release", "17", "-cp", str(JAR), "-d", str(classes)] +
                       [str(ROOT / "java-test-harness" / s) for s in SOURCES], check=True)
        backend = Backend(self.out, "oap")
        instance = f"stress-jdk{self.label}"
        opts = (f"start,event=cpu,interval=1ms,wall,alloc,lock,cstack=dwarf,loop=1s,timeout={p.agentpath_s}s,"
                f"file={self.out}/agentpath/p-%n.jfr,backend=127.0.0.1:{backend.port},service=stress,"
                f"instance={instance},poll=1s,taskdir={taskdir}")
        cmd = [f"{self.home}/bin/java", "-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch"] + (
               GCLOCKER_ARGS if int(self.label) < 24 else []) + [
               f"-XX:NativeMemoryTracking={p.nmt}",
               f"-XX:ErrorFile={self.out}/hs_err_pid%p.log"] + (
               ["-Dstress.control=true"] if p.control else [f"-agentpath:{AGENT}={opts}"]) + [
               "-cp", f"{JAR}:{classes}", "Stress", str(self.run_dir), str(int(p.stall_s)), str(int(p.stall_cpu_s))]
        (self.run_dir / "control").write_text("run\n")
        t0 = time.monotonic()
        jvm = Jvm(cmd, self.run_dir, self.out, core=not p.smoke)
        checker = Checker(self.home, CLI, classes, p.jfr_cli_every, p.go_every)
        drivers = []
        try:
            return self._go(jvm, backend, checker, drivers, taskdir, instance, t0)
        finally:
            for d in drivers:
                d.finish()
            if jvm.proc.poll() is None:
                jvm.proc.kill()
                jvm.proc.wait()
            checker.close()
            backend.stop()

    def _go(self, jvm, backend, checker, drivers, taskdir, instance, t0):
        p = self.plan
        threading.Thread(target=self.sampler, args=(jvm, t0), daemon=True).start()
        if not jvm.expect("STRESS_STARTED", 120):
            self.check("start", False, f"the JVM did not start (exit {jvm.proc.poll()}; see {self.out}/agent.log)")
            return self.finish(jvm, backend, taskdir, checker)
        turn = threading.Event()  # the backend driver's turn (stress_drivers.BackendDriver.BUSY_TURN)
        attach = None if p.control else AttachDriver(CLI, jvm.pid, self.out / "attach", p.deadline_s,
                                                     self.out / "attach.log", turn=turn)
        if p.control:  # the JVM's attach listener (its thread and socket) up before the baseline, as attach has it
            subprocess.run([jcmd_of(jvm), str(jvm.pid), "VM.version"], capture_output=True, timeout=120)
        else:
            drivers += [attach, BackendDriver(backend, "stress", instance, p.deadline_s, self.out / "backend.log",
                                              turn=turn)]
        drivers.append(JcmdDriver(jcmd_of(jvm), jvm.pid, p.jcmd_s, p.deadline_s))
        for d in drivers:
            d.start()
        # warm-up, the first quiet point, the main phase, the last quiet point
        if not self.watch(jvm, t0, t0 + p.warmup_s, checker, None):
            return self.finish(jvm, backend, taskdir, checker)
        self.figures["base"] = self.quiet("warm", jvm, drivers, attach)
        main0 = time.monotonic()
        cpu0 = (proc_figures(jvm.pid) or (0, 0, 0, 0))[3]
        if self.figures["base"] is None or not self.watch(jvm, t0, main0 + p.main_s, checker, cpu0):
            return self.finish(jvm, backend, taskdir, checker)
        self.figures["main_s"] = round(time.monotonic() - main0)
        self.figures["end"] = self.quiet("end", jvm, drivers, attach)
        for d in drivers:
            d.pause()
        for d in drivers:
            d.wait_idle(p.deadline_s + 60)
        (self.run_dir / "control").write_text("stop\n")
        try:
            jvm.proc.wait(max(120, p.stall_s))
        except subprocess.TimeoutExpired:
            diagnose(jvm, self.out, "the JVM did not exit after stop")
            self.stalled = "did not exit"
        self.figures["drivers"] = {d.name: dict(d.counts) for d in drivers}
        self.figures["failures"] = {d.name: list(d.failures) for d in drivers}
        return self.finish(jvm, backend, taskdir, checker)

    def watch(self, jvm, t0, until, checker, cpu0):
        """Runs the external watchdog until time until (or, with --cpu-hours, until the JVM used that much CPU in the
        main phase); validates old outputs meanwhile. False if the JVM stalled or ended."""
        p = self.plan
        next_validate = time.monotonic() + (p.validate_s or 1e12)
        while True:
            now = time.monotonic()
            if jvm.proc.poll() is not None:
                self.stalled = f"the JVM exited early with {jvm.proc.returncode}"
                return False
            if jvm.events["STRESS_STALL"].is_set():
                time.sleep(2)  # the rest of its thread dump
                diagnose(jvm, self.out, "the workload's watchdog: " + jvm.lines.get("STRESS_STALL", ""))
                self.stalled = jvm.lines.get("STRESS_STALL")
                return False
            if now - jvm.last_beat > p.stall_s:
                diagnose(jvm, self.out, f"no heartbeat for {now - jvm.last_beat:.0f} s")
                self.stalled = "no heartbeat"
                return False
            if cpu0 is not None and p.cpu_s:
                fig = proc_figures(jvm.pid)
                if fig and fig[3] - cpu0 >= p.cpu_s:
                    return True
            if now >= until:
                return True
            if now >= next_validate:
                self.validate(checker, older_than=300)
                next_validate = time.monotonic() + p.validate_s
            time.sleep(1)

    # ---- the verdict

    def finish(self, jvm, backend, taskdir, checker):
        p = self.plan
        rc = jvm.proc.poll()
        done = jvm.lines.get("STRESS_DONE", "")
        self.check("exit", rc == 0 and done, f"exit status {rc}; {done or 'no STRESS_DONE line'}")
        errs = list(self.out.glob("hs_err*")) + list(self.run_dir.glob("hs_err*"))
        cores = [str(c) for c in self.run_dir.glob("core*")]
        self.check("no-hs_err", not errs and not cores, f"{[str(e) for e in errs] or 'none'}"
                   + (f"; core files {cores}" if cores else ""))
        self.check("no-stall", not self.stalled, self.stalled or "none (heartbeats every 5 s, no activity stalled)")
        fails = [l for l in Path(jvm.stdout_path).read_text(errors="replace").splitlines()
                 if l.startswith("STRESS_FAIL")]
        failures = self.figures.get("failures", {})
        flat = [f for fs in failures.values() for f in fs] + fails
        self.check("drivers-clean", not flat and "failures" in self.figures,
                   f"{len(flat)} failures" + ("".join("\n    " + f for f in flat[:20])))
        api = dict(kv.split("=", 1) for kv in done.split()[1:] if "=" in kv)
        self.figures["api"] = api
        drv = self.figures.get("drivers", {})
        full = {"api": int(api.get("api_full", 0)), "attach": drv.get("attach", {}).get("full", 0),
                "backend": drv.get("backend", {}).get("task_ok", 0)}
        mins = p.min_full or {k: max(1, self.figures.get("main_s", 0) // 120) for k in full}
        if not p.control:
            self.check("cycles", all(full[k] >= mins[k] for k in full) and "failures" in self.figures,
                       f"full cycles {full} (at least {mins}); refusals: api start busy {api.get('api_start_busy')}, "
                       f"dump/stop idle {api.get('api_dump_idle')}/{api.get('api_stop_idle')}; attach "
                       f"{ {k: v for k, v in drv.get('attach', {}).items() if not k.endswith('_s')} }; backend "
                       f"{drv.get('backend', {})}; jcmd {drv.get('jcmd', {})}")
        self.resources()
        if p.control:  # the reference run: no profiler, so nothing of its own to check
            self.figures["wall_s"] = round(time.monotonic() - self.started)
            return self.summary()
        # every task uploaded and the taskdir emptied
        try:
            ups = backend.get("/uploads")
        except Exception as e:  # the backend itself failed
            ups = [{"received": -1, "contentSize": 0, "error": str(e)}]
        bad = [u for u in ups if u["received"] != u["contentSize"]]
        left = sorted(x.name for x in taskdir.iterdir())
        self.check("uploads", not bad and not left, f"{len(ups)} uploads, {len(bad)} not whole; taskdir {left or 'empty'}")
        self.validate(checker)
        invalid = {k: v for k, v in self.checked.items() if v}
        self.figures["outputs"] = {"checked": len(self.checked), "by_kind": checker.counts, "by_source": checker.seen,
                                   "jfr_summary_runs": checker.jfr_cli_runs, "go_pprof_runs": checker.go_runs,
                                   "jfr_totals": checker.samples, "kept": self.kept}
        self.check("outputs", not invalid and self.checked,
                   f"{len(self.checked)} files checked {checker.counts} from {checker.seen}; jfr summary on "
                   f"{checker.jfr_cli_runs}, go tool pprof on {checker.go_runs}; totals agreed {checker.samples}"
                   + "".join(f"\n    {k}: {v}" for k, v in list(invalid.items())[:20]))
        missing = self.cycle_outputs()
        self.check("cycle-outputs", not missing, f"{len(missing)} accepted commands without their output"
                   + "".join(f"\n    {m}" for m in missing[:20]))
        levels = classify_log((self.out / "agent.log").read_text(errors="replace"))
        self.figures["log"] = {k: len(v) for k, v in levels.items()}
        self.figures["log_errors"] = levels["ERROR"][:50]
        self.figures["log_warn_sample"] = sorted(set(l.split(": ", 1)[-1][:120] for l in levels["WARN"]))[:50]
        escaped = [l for l in levels["WARN"] if "held by no thread slot" in l]
        self.check("no-escaped-counters", not escaped, f"{len(escaped)} stops found perf_events counters no thread slot "
                   "held (closed then; a defect all the same)" + "".join(f"\n    {l[:200]}" for l in escaped[:10]))
        self.figures["wall_s"] = round(time.monotonic() - self.started)
        return self.summary()

    def cycle_outputs(self):
        """Every accepted dump left a file, every accepted start of a JFR configuration its recording (the
        cycles of api.log and attach.log); the names of what is missing."""
        names = set(self.checked)
        missing = []
        for logf, jfr_cfgs in ((self.run_dir / "api.log", ("full-jfr", "loop-jfr", "jfrfile")),
                               (self.out / "attach.log", ("full-jfr", "loop-jfr"))):
            if not logf.exists():
                continue
            for line in logf.read_text().splitlines():
                f = dict(kv.split("=", 1) for kv in line.split()[3:] if "=" in kv)
                base, cfg = f.get("base", ""), line.split()[2]
                if f.get("dump") == "ok" and not any(n.startswith(base + "-dump") for n in names):
                    missing.append(f"{base}: dump accepted, no file")
                if f.get("start") == "ok" and cfg in jfr_cfgs and \
                        not any(n.startswith(base) and n.endswith(".jfr") for n in names):
                    missing.append(f"{base}: start accepted, no recording")
        return missing

    def resources(self):
        p = self.plan
        base, end = self.figures.get("base"), self.figures.get("end")
        if not base or not end:
            self.check("resources", False, "no quiet point measured")
            return
        grow = end["rss_kib"] - base["rss_kib"]
        nb, ne = base.get("nmt_committed_kib") or {}, end.get("nmt_committed_kib") or {}
        # jmethodIDs of classes unloaded since the baseline: AsyncGetCallTrace needs an id for every method a session
        # may sample, and HotSpot keeps them for good (docs/BENCHMARKS.md); the bound is for the rest. Measured by
        # NMT detail where it runs, else allowed for at async-profiler's cost a class unloaded
        ids = ne.get("jmethodIDs", 0) - nb.get("jmethodIDs", 0) if "jmethodIDs" in nb and "jmethodIDs" in ne else 0
        unloaded = workload_count(end, "unloaded_classes") - workload_count(base, "unloaded_classes")
        per_class = PEER_BYTES_PER_CLASS.get(self.label, max(PEER_BYTES_PER_CLASS.values()))
        allowed = max(ids, 0) if "jmethodIDs" in ne else unloaded * per_class // 1024
        judged = grow - allowed
        agent = lambda f: sorted(n for n in f["thread_names"] if n.startswith("jsampler"))
        java = lambda f: sorted(n for n in f["thread_names"] if not n.startswith(JVM_POOLS))
        pools = lambda f: len([n for n in f["thread_names"] if n.startswith(JVM_POOLS)])
        new_fds = sorted(set(end["fd_targets"]) - set(base["fd_targets"]))
        rest = [] if p.control else ["jsampler-tasks"]
        ok = (judged <= p.rss_bound_kib and end["fds_min"] <= base["fds_min"] and agent(end) == rest
              and agent(base) == rest and java(end) == java(base))
        run = [s for s in self.samples if s[5] in ("main", "quiet-end")]
        peak = lambda i: max((s[i] for s in run), default=0)
        nmt_delta = sorted(((ne.get(k, 0) - nb.get(k, 0), k) for k in set(nb) | set(ne)
                            if k not in ("Total", "jmethodIDs", "malloc")),
                           reverse=True)
        untracked = lambda f, n: f["rss_kib"] - n.get("Total", 0)
        self.figures["nmt"] = {"base": nb, "end": ne}
        try:  # a long run: the malloc call sites that grew most between the quiet points
            a, b = (nmt_sites((self.out / f"nmt-{t}.txt").read_text()) for t in ("warm", "end"))
            grown = sorted(((b.get(k, 0) - a.get(k, 0), k) for k in set(a) | set(b)), reverse=True)[:8]
            self.figures["nmt"]["sites_grown_kib"] = [[d, c, f] for d, (c, f) in grown if d > 0]
        except OSError:
            pass
        self.figures["resources"] = {
            "rss_base_kib": base["rss_kib"], "rss_end_kib": end["rss_kib"], "rss_growth_kib": grow,
            "rss_bound_kib": p.rss_bound_kib, "rss_peak_kib": peak(1), "jmethodid_growth_kib": ids,
            "classes_unloaded": unloaded, "peer_bytes_per_class": per_class, "rss_allowed_for_classes_kib": allowed,
            "rss_growth_judged_kib": judged, "fds_base": base["fds_min"],
            "fds_end": end["fds_min"], "fds_peak": peak(2), "threads_base": base["threads"],
            "threads_end": end["threads"], "threads_peak": peak(3), "jvm_pool_threads_base": pools(base),
            "jvm_pool_threads_end": pools(end), "cpu_s_end": end["cpu_s"], "new_fds": new_fds,
            "nmt_total_base_kib": nb.get("Total"), "nmt_total_end_kib": ne.get("Total"),
            "rss_minus_nmt_base_kib": untracked(base, nb), "rss_minus_nmt_end_kib": untracked(end, ne),
            "nmt_growth_kib": dict((k, d) for d, k in nmt_delta[:6]),
            "names_cached_base": base.get("names_cached"), "names_cached_end": end.get("names_cached")}
        # RSS beyond NMT, split: malloc in use that NMT does not track (the agent's, the C library's, JNI libraries'),
        # malloc the allocator keeps free, and the rest (stacks, mappings)
        heap = ""
        if None not in (base.get("heap_used_kib"), end.get("heap_used_kib")):
            r = self.figures["resources"]
            r.update({"heap_used_base_kib": base["heap_used_kib"], "heap_used_end_kib": end["heap_used_kib"],
                      "heap_free_base_kib": base["heap_free_kib"], "heap_free_end_kib": end["heap_free_kib"]})
            heap = f"; malloc in use {base['heap_used_kib']} -> {end['heap_used_kib']} KiB"
            if "malloc" in nb and "malloc" in ne:
                untracked_malloc = lambda f, n: f["heap_used_kib"] - n["malloc"]
                r.update({"nmt_malloc_base_kib": nb["malloc"], "nmt_malloc_end_kib": ne["malloc"],
                          "malloc_untracked_base_kib": untracked_malloc(base, nb),
                          "malloc_untracked_end_kib": untracked_malloc(end, ne)})
                heap += (f", of which NMT tracks {nb['malloc']} -> {ne['malloc']} (untracked "
                         f"{untracked_malloc(base, nb)} -> {untracked_malloc(end, ne)})")
            heap += f", free in the allocator {base['heap_free_kib']} -> {end['heap_free_kib']}"
        nmt_text = "NMT off" if "Total" not in ne else (
            f"the JVM's own memory (NMT) {nb.get('Total')} -> {ne.get('Total')} KiB committed (most grown: "
            f"{', '.join(f'{k} {d:+d}' for d, k in nmt_delta[:3])}), RSS beyond it "
            f"{untracked(base, nb)} -> {untracked(end, ne)} KiB")
        self.check("resources", ok or p.control,  # the reference run's figures are for comparison, not judged
                   ("reference, not judged: " if p.control else "") + f"RSS {base['rss_kib']} -> {end['rss_kib']} KiB ({grow:+d}; "
                   + (f"less the JVM's jmethodIDs {ids:+d} KiB (NMT detail): {judged:+d}, " if "jmethodIDs" in ne else
                      f"less {unloaded} classes unloaded at {per_class} bytes (async-profiler's cost): {judged:+d}, ")
                   + f"bound {p.rss_bound_kib}; peak {peak(1)}); fds {base['fds_min']} -> {end['fds_min']} (peak {peak(2)}){' new: ' + str(new_fds) if new_fds else ''}"
                   f"{'; counters the agent holds: ' + str(end.get('agent_counters')) if new_fds else ''}; "
                   f"threads {base['threads']} -> {end['threads']} (peak {peak(3)}; JVM pools {pools(base)} -> "
                   f"{pools(end)}); agent threads at rest {agent(base)} / {agent(end)}; {nmt_text}; method names cached "
                   f"{base.get('names_cached')} -> {end.get('names_cached')}" + heap
                   + ("" if java(end) == java(base) else
                      f"; other threads differ: +{sorted(set(java(end)) - set(java(base)))} "
                      f"-{sorted(set(java(base)) - set(java(end)))}"))

    def summary(self):
        ok = all(c[1] for c in self.checks)
        res = {"jdk": self.label, "home": self.home, "ok": ok, "smoke": self.plan.smoke,
               "checks": [{"name": n, "ok": o, "detail": d} for n, o, d in self.checks], "figures": self.figures}
        (self.out / "summary.json").write_text(json.dumps(res, indent=1, default=str) + "\n")
        with open(self.out / "summary.txt", "w") as f:
            f.write(f"stress jdk{self.label} ({self.home}): {'PASS' if ok else 'FAIL'}\n")
            for n, o, d in self.checks:
                f.write(f"  {'PASS' if o else 'FAIL'} {n}: {d}\n")
        return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="the short form of make test: about a minute per JDK")
    ap.add_argument("--minutes", type=float, default=float(os.environ.get("STRESS_MINUTES", 60)),
                    help="main phase, wall minutes (with --cpu-hours: the cap)")
    ap.add_argument("--cpu-hours", type=float, default=float(os.environ.get("STRESS_CPU_HOURS", 0)),
                    help="end the main phase once the JVM used this much CPU time")
    ap.add_argument("--warmup", type=float, default=300, help="seconds before the baseline quiet point")
    ap.add_argument("--stall", type=float, default=900, help="seconds without a heartbeat that make a stall")
    ap.add_argument("--rss-bound-mib", type=int, default=int(os.environ.get("STRESS_RSS_BOUND_MIB", 64)),
                    help="RSS growth allowed besides the classes unloaded (see above)")
    ap.add_argument("--nmt", choices=("off", "summary", "detail"),
                    help="the JVM's Native Memory Tracking (default: off for a long run, summary for the smoke)")
    ap.add_argument("--jdks", default=os.environ.get("STRESS_JDKS", "17,25").replace(" ", ","))
    ap.add_argument("--out", default=os.environ.get("STRESS_OUT", str(ROOT / "build/stress")))
    ap.add_argument("--side-by-side", action="store_true",
                    help="run the JDKs at once, each with half the machine (make test's smoke form)")
    ap.add_argument("--keep", action="store_true", help="keep every valid output file (a long run keeps 1 in 100)")
    ap.add_argument("--control", action="store_true",
                    help="the reference run: the same workload and jcmd driver without the profiler (no library, no "
                         "API, attach or task driver), for the JVM's own growth; its resources are reported, not judged")
    a = ap.parse_args()
    if a.smoke:
        a.out = os.environ.get("STRESS_OUT", str(ROOT / "build/stress-smoke"))
    for p in (AGENT, CLI, JAR):
        if not p.is_file():
            sys.exit(f"stress: {p} is not built (run make)")
    plan = Plan(a)
    results, runs = {}, []
    for label in [j for j in a.jdks.replace(" ", ",").split(",") if j]:
        home = JDKS.get(label)
        if not home or not os.access(f"{home}/bin/java", os.X_OK):
            log(f"SKIP: no JDK {label} at {home}")
            continue
        runs.append(Run(label, home, plan, Path(a.out).resolve() / f"jdk{label}"))  # the JVM runs in OUT/jdkNN/run

    def go(r):
        r.started = time.monotonic()
        log(f"jdk{r.label}: {'smoke' if a.smoke else 'long'} run into {r.out}")
        results[r.label] = r.go()
        return r

    if a.side_by_side:  # each run has its own JVM, backend, ports and directory
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(runs) or 1) as pool:
            done = list(pool.map(go, runs))
    else:
        done = [go(r) for r in runs]
    for r in done:
        sys.stdout.write((r.out / "summary.txt").read_text())
    ran = len(done)
    if not ran:
        log("no JDK found")
        return 1
    log(("passed" if all(results.values()) else "FAILED") + f" ({', '.join(f'jdk{k}' for k in results)})")
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())

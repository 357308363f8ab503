"""Shared pieces of the benchmark harness: paths, the machine, child processes, agent log lines, statistics.

Everything here is Python 3 standard library; the harness is run with the Debian python, /usr/bin/python3.
"""
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / "java-test-harness"
OUT = ROOT / "build" / "bench"
RUNS = OUT / "runs"
CLASSES = OUT / "classes"

JDK_DEFAULTS = {17: "/usr/lib/jvm/java-17-openjdk-amd64", 25: "/usr/lib/jvm/temurin-25-jdk-amd64"}
WORKLOADS = ["BenchOps.java", "BenchDeep.java", "BenchHello.java", "CpuSplit.java", "Churn.java"]


def log(msg):
    """Progress goes to stderr, the table to stdout."""
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- environment


@dataclass
class Env:
    agent: Path
    cli: Path
    jdks: dict            # major version -> JDK home (Path), only the JDKs found
    jdk_versions: dict    # major version -> first line of `java -version`
    sigbench: Path = None
    node: str = None
    notes: list = field(default_factory=list)

    def java(self, jdk):
        return str(self.jdks[jdk] / "bin" / "java")

    def jfr(self, jdk):
        return str(self.jdks[jdk] / "bin" / "jfr")


def find_env():
    agent = Path(os.environ.get("JSAMPLER_AGENT", ROOT / "build" / "libjsampler.so")).resolve()
    cli = Path(os.environ.get("JSAMPLER_CLI", ROOT / "build" / "jsampler")).resolve()
    for p, what in ((agent, "agent"), (cli, "CLI")):
        if not p.is_file():
            sys.exit(f"bench: the {what} {p} is not built (run make all)")
    jdks, versions = {}, {}
    for major, default in JDK_DEFAULTS.items():
        home = Path(os.environ.get(f"JDK{major}_HOME", default))
        if (home / "bin" / "java").is_file():
            jdks[major] = home
            versions[major] = run_text([str(home / "bin" / "java"), "-version"]).splitlines()[0]
        else:
            log(f"note: JDK {major} not found at {home} (set JDK{major}_HOME); its variants are skipped")
    if 17 not in jdks:
        sys.exit("bench: JDK 17 is required (set JDK17_HOME)")
    return Env(agent=agent, cli=cli, jdks=jdks, jdk_versions=versions, node=shutil.which("node"))


def run_text(cmd, **kw):
    """stdout+stderr of a short command, as text ('' if it cannot run)."""
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120, **kw)
        return r.stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def machine_info():
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_kib = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    return {
        "kernel": platform.release(),
        "kernel_version": platform.version(),
        "os": _os_release(),
        "cpu_model": cpu,
        "cpus": os.cpu_count(),
        "mem_total_mib": mem_kib // 1024,
        "virtualized": "hypervisor" in open("/proc/cpuinfo").read(),
        "python": sys.version.split()[0],
    }


def _os_release():
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def compile_workloads(env):
    """javac --release 17 the workloads once (JDK 17's javac); both JDKs run the same class files."""
    shutil.rmtree(CLASSES, ignore_errors=True)
    CLASSES.mkdir(parents=True)
    javac = str(env.jdks[17] / "bin" / "javac")
    srcs = [str(HARNESS / w) for w in WORKLOADS]
    r = subprocess.run([javac, "--release", "17", "-d", str(CLASSES)] + srcs, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit("bench: javac failed:\n" + r.stdout)


def build_sigbench(env):
    exe = OUT / "sigbench"
    cc = os.environ.get("CC", "cc")
    r = subprocess.run([cc, "-O2", "-Wall", "-Wextra", "-std=gnu11", "-o", str(exe), str(ROOT / "bench" / "sigbench.c"),
                        "-lrt"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        env.notes.append("sigbench did not build: " + r.stdout.strip().splitlines()[-1])
        return
    env.sigbench = exe


# ---------------------------------------------------------------- child processes


def cpu_busy_seconds():
    """Non-idle CPU time of the whole machine so far (all CPUs), from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return (sum(v[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def read_status(pid):
    """VmHWM, VmRSS, VmSize (KiB) and Threads from /proc/PID/status; {} once the process is gone."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS", "VmSize", "Threads"):
                    out[key] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        return {}
    return out


def read_smaps(pid):
    """Mappings of /proc/PID/smaps as dicts: range, path, size_kib, rss_kib."""
    maps = []
    cur = None
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                parts = line.split()
                if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                    cur = {"range": parts[0], "path": parts[5] if len(parts) > 5 else "", "size_kib": 0, "rss_kib": 0}
                    maps.append(cur)
                elif cur is not None and parts[0] == "Size:":
                    cur["size_kib"] = int(parts[1])
                elif cur is not None and parts[0] == "Rss:":
                    cur["rss_kib"] = int(parts[1])
    except OSError:
        return []
    return maps


@dataclass
class Proc:
    cmd: list
    dir: Path
    rc: int
    timed_out: bool
    spawn_ns: int          # CLOCK_REALTIME just before the child was started
    end_ns: int            # CLOCK_REALTIME when the harness saw it end
    wall_s: float
    cpu_s: float           # user + system CPU of the child (all its threads), from wait4
    other_cpu_s: float     # CPU the rest of the machine used meanwhile (noise indicator)
    stdout: str
    stderr: str
    status: dict           # last /proc/PID/status reading (when polled)
    smaps: list            # one /proc/PID/smaps reading (when asked for)
    sys_s: float = 0.0     # the system (kernel) part of cpu_s

    def to_json(self):
        return {"cmd": " ".join(shlex.quote(c) for c in self.cmd), "dir": str(self.dir.relative_to(ROOT)),
                "rc": self.rc, "timed_out": self.timed_out, "wall_s": round(self.wall_s, 4),
                "cpu_s": round(self.cpu_s, 4), "sys_s": round(self.sys_s, 4), "other_cpu_s": round(self.other_cpu_s, 3), "status_kib": self.status}


def run(cmd, name, timeout=300, poll=False, smaps_after=None, env_extra=None):
    """Run cmd in a fresh directory build/bench/runs/NAME, stdout/stderr to files there.

    poll: read /proc/PID/status every 0.25 s and keep the last reading (VmHWM only grows, so the last reading is
    the peak seen); smaps_after: read /proc/PID/smaps once, that many seconds after the start. Without polling the
    harness blocks in wait4, so end_ns is the moment the process ended (start-up/exit timing).
    """
    d = RUNS / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    (d / "command.txt").write_text(" ".join(shlex.quote(c) for c in cmd) + "\n")
    env = dict(os.environ, **(env_extra or {}))
    with open(d / "stdout.txt", "wb") as so, open(d / "stderr.txt", "wb") as se:
        busy0 = cpu_busy_seconds()
        t0 = time.monotonic()
        spawn_ns = time.time_ns()
        p = subprocess.Popen(cmd, cwd=d, stdout=so, stderr=se, env=env)
        status, smaps, timed_out = {}, [], False
        if poll or smaps_after is not None:
            while True:
                pid, wstatus, ru = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    break
                elapsed = time.monotonic() - t0
                s = read_status(p.pid)
                if "VmRSS" in s:  # a process that has exited but is not reaped yet has no Vm* lines
                    status = s
                if smaps_after is not None and not smaps and elapsed >= smaps_after:
                    smaps = read_smaps(p.pid)
                if elapsed > timeout and not timed_out:
                    p.kill()
                    timed_out = True
                time.sleep(0.25)
        else:
            fired = []
            killer = threading.Timer(timeout, lambda: (fired.append(1), p.kill()))
            killer.start()
            _, wstatus, ru = os.wait4(p.pid, 0)
            killer.cancel()
            timed_out = bool(fired)
        end_ns = time.time_ns()
        wall = time.monotonic() - t0
        busy1 = cpu_busy_seconds()
        p.returncode = os.waitstatus_to_exitcode(wstatus)
    cpu = ru.ru_utime + ru.ru_stime
    return Proc(cmd=cmd, dir=d, rc=p.returncode, timed_out=timed_out, spawn_ns=spawn_ns, end_ns=end_ns, wall_s=wall,
                cpu_s=cpu, other_cpu_s=max(0.0, busy1 - busy0 - cpu), stdout=(d / "stdout.txt").read_text(errors="replace"),
                stderr=(d / "stderr.txt").read_text(errors="replace"), status=status, smaps=smaps,
                sys_s=ru.ru_stime)


# ---------------------------------------------------------------- agent log lines

_KV = re.compile(r"(\w+)=([0-9]+)")


def parse_agent(stderr):
    """The agent's start and stop lines: engine, samples, weight, dropped, handler_ns min/median/p99/max, ...

    Returns {} if there is no stop line; 'errors' lists the agent's ERROR lines either way.
    """
    out = {"errors": [l for l in stderr.splitlines() if l.startswith("[jsampler] ERROR")]}
    for line in stderr.splitlines():
        if not line.startswith("[jsampler] "):
            continue
        if "profiling started:" in line:
            m = re.search(r"engine=(\w+)", line)
            out["engine"] = m.group(1) if m else "?"
            out["start_line"] = line
        elif "profiling stopped:" in line:
            out["stop_line"] = line
            head, _, rest = line.partition("handler_ns:")
            for k, v in _KV.findall(head):
                out[k] = int(v)
            hpart, _, rest = rest.partition("walk_errors:")
            for k, v in _KV.findall(hpart):
                out["handler_" + k] = int(v)
            out["walk_errors"] = {k: int(v) for k, v in re.findall(r"(\[\w+\])=(\d+)", rest)}
            m = re.search(r"traces=(\d+)", rest)
            if m:
                out["traces"] = int(m.group(1))
    return out


def stdout_value(text, key):
    """'OPS 123.4' -> 123.4 for key 'OPS'; None if absent."""
    m = re.search(r"^" + re.escape(key) + r" ([-0-9.eE]+)", text, re.M)
    return float(m.group(1)) if m else None


def stdout_fields(text, prefix):
    """'CPU a=1 b=2' -> {'a': 1.0, 'b': 2.0} for prefix 'CPU'."""
    m = re.search(r"^" + re.escape(prefix) + r" (.*)$", text, re.M)
    if not m:
        return {}
    out = {}
    for k, v in re.findall(r"(\w+)=([-0-9.]+)", m.group(1)):
        out[k] = float(v)
    return out


# ---------------------------------------------------------------- collapsed profiles


def read_collapsed(path):
    """[(frames list, weight)] from a collapsed file."""
    stacks = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            stack, _, w = line.rpartition(" ")
            if stack and w.isdigit():
                stacks.append((stack.split(";"), int(w)))
    return stacks


# ---------------------------------------------------------------- statistics and scheduling


def summary(values):
    """median / min / max / n of the non-None values; None if there are none."""
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)}


superseded_runs = []        # runs made again because the machine was busy meanwhile (kept for results.json)
retry_budget = [0.0]         # seconds left for making busy runs again; once spent, busy runs are kept (marked)


def other_load(rec):
    """CPUs the rest of the machine used on average during the run (None if unknown)."""
    r = rec.get("run") if rec else None
    return r["other_cpu_s"] / r["wall_s"] if r and r.get("wall_s") else None


def interleave(variants, rounds, run_one, max_other=None, retries=2):
    """Run every variant once per round, A B C, B C A, C A B, ... (the order rotates each round).

    run_one(variant, round_index, slot) returns a record (dict) or None; records are returned in run order. With
    max_other, a run during which other processes used more than max_other CPUs on average is made again (up to
    `retries` times, after a pause, while retry_budget lasts); the earlier attempt goes to superseded_runs, a last
    busy one is kept and marked "busy".
    """
    records = []
    n = len(variants)
    for r in range(rounds):
        k = r % n if n else 0
        order = variants[k:] + variants[:k]
        for slot, v in enumerate(order):
            for attempt in range(retries + 1):
                rec = run_one(v, r, slot)
                load = other_load(rec)
                if rec is None or max_other is None or load is None or load <= max_other:
                    break
                if attempt == retries or retry_budget[0] <= 0:
                    rec["busy"] = round(load, 3)
                    break
                rec["superseded"] = f"other processes used {load:.2f} CPUs during the run (limit {max_other})"
                superseded_runs.append(rec)
                retry_budget[0] -= rec["run"]["wall_s"] + 3
                log(f"    other processes used {load:.2f} CPUs during that run: running it again "
                    f"({max(0, retry_budget[0]):.0f} s left for that)")
                time.sleep(3)
            if rec is not None:
                rec.setdefault("round", r)
                rec.setdefault("slot", slot)
                rec["attempts"] = attempt + 1
                records.append(rec)
    return records


def slug(text):
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()

"""stress_drivers.py: the outside drivers of the stress run (bench/stress.py), each a thread that drives the
profiler of one JVM while the workload's Java API driver does the same from inside:

  AttachDriver    start/dump/status/stop cycles through `build/jsampler` (HotSpot's attach protocol)
  BackendDriver   SkyWalking tasks created one after the other on the grpcio test backend (oap.py), which the
                  agent's task client polls, records and uploads
  JcmdDriver      `jcmd PID Thread.print` now and then: the JDK's own attach client and a safepoint stack walk

One session runs at a time: a command may be refused because another entry point's session runs (start: busy) or
because another entry point stopped ours (dump, stop: idle). Those are counted apart and must be clean: one line,
exit status 5, one of the dispatcher's refusals. Anything else (another exit status, a message that is not a refusal,
a command that does not return within its deadline) is a failure, kept with its text."""
import random
import re
import subprocess
import threading
import time
from pathlib import Path

BUSY = "profiler already running (stop it first)"
DUMP_IDLE = "dump: profiler is not running"
STOP_IDLE = "stop: profiler is not running"


class Driver(threading.Thread):
    """A thread with a pause switch (the run's quiet points) and counters; failures kept as text."""

    def __init__(self, name):
        super().__init__(name=name, daemon=True)
        self.counts = {}
        self.failures = []
        self.lock = threading.Lock()
        self.running = threading.Event()
        self.running.set()
        self.idle = threading.Event()   # set while parked at a pause (or finished)
        self.done = False

    def count(self, key, n=1):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + n

    def fail(self, what):
        with self.lock:
            self.failures.append(what)
            self.counts["fail"] = self.counts.get("fail", 0) + 1

    def gate(self):
        """Between two cycles: parks while paused; False once finished."""
        if not self.running.is_set():
            self.idle.set()
            while not self.running.wait(0.2):
                if self.done:
                    return False
            self.idle.clear()
        return not self.done

    def pause(self):
        self.running.clear()

    def resume(self):
        self.idle.clear()
        self.running.set()

    def finish(self):
        self.done = True
        self.running.set()

    def wait_idle(self, timeout):
        return self.idle.wait(timeout) or not self.is_alive()

    def run(self):
        try:
            while self.gate():
                self.cycle()
        except Exception as e:  # a driver that dies would make the rest of the run show nothing
            self.fail(f"{self.name} died: {e!r}")
        finally:
            self.idle.set()


class AttachDriver(Driver):
    """Cycles through `jsampler start|dump|status|stop PID`, configurations in turn; outputs under out_dir. A start
    refused because another session runs is followed, one time in ten (foreign_stop), by a stop of that session."""

    # name, start arguments, dump arguments, stop arguments; {B} is the cycle's path prefix.
    CONFIGS = [
        ("full-jfr", ["--", "event=cpu,interval=1ms,wall,alloc,lock,cstack=dwarf,file={B}.jfr"],
         ["-f", "{B}-dump-%e.collapsed"], []),
        ("loop-jfr", ["--", "event=cpu,interval=1ms,wall,alloc,lock,cstack=dwarf,loop=1s,file={B}-%n.jfr"],
         ["-f", "{B}-dump-%e.txt"], []),
        ("flags-html", ["-e", "cpu", "-i", "1ms", "-f", "{B}.html"], ["-f", "{B}-dump-%e.collapsed"],
         ["-f", "{B}-stop-%e.tree"]),
        ("wall-pprof", ["--", "event=wall,interval=5ms,alloc,file={B}-%e.pb.gz"], ["-f", "{B}-dump-%e.collapsed"], []),
        ("ctimer-threads", ["-e", "ctimer", "-i", "1ms", "-t", "-f", "{B}.collapsed", "--", "cstack=dwarf"],
         ["-f", "{B}-dump-%e.html"], []),
    ]

    def __init__(self, cli, pid, out_dir, deadline_s, log_path, foreign_stop=0.1, turn=None):
        super().__init__("attach")
        self.foreign_stop = foreign_stop
        self.turn = turn  # set while the backend driver waits for a turn: no session of ours meanwhile
        self.cli, self.pid, self.out_dir, self.deadline_s = str(cli), str(pid), Path(out_dir), deadline_s
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.log = open(log_path, "a")
        self.n = 0
        self.rng = random.Random(17)

    def command(self, verb, args, refusal=None, refused_as=None):
        """One CLI command: 'ok', the refusal's name, or 'FAIL' (kept). Also returns stdout."""
        # the pid goes before '--' (which must be last, followed by one argument)
        if "--" in args:
            i = args.index("--")
            cmd = [self.cli, verb, "--timeout", "60000"] + args[:i] + [self.pid, "--"] + args[i + 1:]
        else:
            cmd = [self.cli, verb, "--timeout", "60000"] + args + [self.pid]
        t0 = time.monotonic()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                               timeout=self.deadline_s)  # a stop of a pprof session without -f prints gzip
        except subprocess.TimeoutExpired:
            self.fail(f"attach: '{' '.join(cmd)}' did not return within {self.deadline_s} s")
            return "FAIL", ""
        took = time.monotonic() - t0
        self.count(f"{verb}_s", took)
        err = r.stderr.strip()
        if r.returncode == 0:
            return "ok", r.stdout
        lines = err.splitlines()
        if r.returncode == 5 and refusal and len(lines) == 1 and lines[0].endswith(refusal):
            return refused_as, r.stdout
        self.fail(f"attach: '{' '.join(cmd)}' exit {r.returncode}: {err[:500]!r}")
        return "FAIL", r.stdout

    def cycle(self):
        if self.turn is not None and self.turn.is_set():
            self.count("yielded")
            time.sleep(0.5)
            return
        n = self.n
        self.n += 1
        name, start, dump, stop = self.CONFIGS[n % len(self.CONFIGS)]
        base = str(self.out_dir / f"{n:06d}-{name}")
        fill = lambda args: [a.replace("{B}", base) for a in args]
        s, _ = self.command("start", fill(start), BUSY, "busy")
        d = st = "skip"
        if s == "busy" and self.rng.random() < self.foreign_stop:
            # now and then, stop another entry point's session (the next command of its driver is refused)
            st, _ = self.command("stop", [], STOP_IDLE, "idle")
            self.count(f"foreign_stop_{st}")
        if s == "ok":
            time.sleep(self.rng.uniform(0.2, 1.5))
            d, _ = self.command("dump", fill(dump), DUMP_IDLE, "idle")
            status, text = self.command("status", [])
            if status == "ok" and not text.startswith("state="):
                self.fail(f"attach: status answered {text[:200]!r}")
            time.sleep(self.rng.uniform(0.05, 0.5))
            st, _ = self.command("stop", fill(stop), STOP_IDLE, "idle")
            self.count("full", d == "ok" and st == "ok")
        self.count("cycles")
        self.count(f"start_{s}")
        if s == "ok":
            self.count(f"dump_{d}")
            self.count(f"stop_{st}")
        self.log.write(f"CYCLE {n} {name} start={s} dump={d} stop={st} base={base}\n")
        self.log.flush()
        time.sleep(self.rng.uniform(0.05, 1.0))

    def stop_any(self):
        """Stops whatever session runs (for a quiet point), writing it where it was to go: 'ok' or 'idle'."""
        s, _ = self.command("stop", [], STOP_IDLE, "idle")
        return s


class BackendDriver(Driver):
    """Creates a task, waits for its outcome (uploaded, or reported as an error), creates the next. Outcomes:
    ok (EXECUTION_FINISHED: uploaded), busy (the profiler refused to start: another session ran), idle (the task's
    session was stopped by another entry point: its stop was refused), FAIL (anything else, or no outcome within
    the task's duration plus deadline_s)."""

    TASKS = [
        ({"events": ["CPU", "ALLOC", "LOCK", "WALL"], "execArgs": "interval=1ms,cstack=dwarf"}, 2),
        ({"events": ["CPU"], "execArgs": "interval=1ms"}, 1),
        ({"events": ["CTIMER", "ALLOC"], "execArgs": "interval=1ms,threads"}, 1),
        ({"events": ["CPU", "LOCK"], "execArgs": "interval=2ms,cstack=fp"}, 2),
    ]

    # After this many tasks in a row found another session running, the attach driver starts no session while the
    # next task runs (one task: a turn, not a lock-out): the Java API and attach drivers kept the profiler busy for all
    # 22 tasks of one smoke run, which then had no full backend cycle to judge.
    BUSY_TURN = 2

    def __init__(self, backend, service, instance, deadline_s, log_path, turn=None):
        super().__init__("backend")
        self.b, self.service, self.instance, self.deadline_s = backend, service, instance, deadline_s
        self.turn = turn
        self.busy_streak = 0
        self.log = open(log_path, "a")
        self.n = 0
        self.rng = random.Random(25)

    def outcome(self, task):
        for e in self.b.progress(task)["logs"]:
            if e["instance"] != self.instance:
                continue
            if e["operationType"] == "EXECUTION_FINISHED":
                return "ok", ""
            if e["operationType"] in ("EXECUTION_TASK_ERROR", "JFR_UPLOAD_FILE_TOO_LARGE_ERROR"):
                m = e.get("message") or ""
                if "\n" not in m and m.endswith("the profiler refused to start: " + BUSY):
                    return "busy", m
                if "\n" not in m and m.endswith(STOP_IDLE):
                    return "idle", m
                return "FAIL", f"{e['operationType']}: {m}"
        return None

    def cycle(self):
        n = self.n
        self.n += 1
        kw, duration = self.TASKS[n % len(self.TASKS)]
        task = self.b.task(self.service, duration, **kw)
        end = time.monotonic() + duration + self.deadline_s
        got = None
        while time.monotonic() < end:
            got = self.outcome(task)
            if got:
                break
            time.sleep(0.25)
        if not got:
            got = ("FAIL", f"no outcome within {duration + self.deadline_s} s")
        kind, msg = got
        self.busy_streak = self.busy_streak + 1 if kind == "busy" else 0
        if self.turn is not None:
            if self.turn.is_set():  # the turn lasts one task: the attach driver needs its cycles too
                self.turn.clear()
                self.busy_streak = 0
            elif self.busy_streak >= self.BUSY_TURN:
                self.turn.set()
        if kind == "FAIL":
            self.fail(f"backend: task {task} ({kw}): {msg}")
        self.count("cycles")
        self.count(f"task_{kind}")
        self.log.write(f"TASK {n} {task} {kw['events']} {kw.get('execArgs', '')} -> {kind} {msg}\n")
        self.log.flush()
        time.sleep(self.rng.uniform(0.1, 1.0))


class JcmdDriver(Driver):
    """`jcmd PID Thread.print` every period_s: exit 0 within the deadline, the stress threads in its output."""

    def __init__(self, jcmd, pid, period_s, deadline_s):
        super().__init__("jcmd")
        self.jcmd, self.pid, self.period_s, self.deadline_s = jcmd, str(pid), period_s, deadline_s

    def cycle(self):
        end = time.monotonic() + self.period_s
        while time.monotonic() < end and self.running.is_set() and not self.done:
            time.sleep(0.5)
        if not self.running.is_set() or self.done:
            return
        try:
            r = subprocess.run([self.jcmd, self.pid, "Thread.print"], capture_output=True, text=True,
                               timeout=self.deadline_s)
        except subprocess.TimeoutExpired:
            self.fail(f"jcmd Thread.print did not return within {self.deadline_s} s")
            return
        if r.returncode != 0 or "\"stress-soe\"" not in r.stdout:
            self.fail(f"jcmd Thread.print: exit {r.returncode} {r.stderr[:300]!r}")
        else:
            self.count("cycles")


def classify_log(text):
    """The agent log's lines by level: {'WARN': [...], 'ERROR': [...]} (lines of the form 'jsampler: LEVEL ...'
    or '[jsampler] LEVEL'), for the summary."""
    out = {"WARN": [], "ERROR": []}
    for line in text.splitlines():
        m = re.search(r"\b(WARN|ERROR)\b", line)
        if m and "jsampler" in line:
            out[m.group(1)].append(line)
    return out

"""What is measured: profiler variants (one line each in the tables below) and how one run of a variant is made.

A variant is a JDK plus a profiler setting: none (the baseline), jsampler (engine, interval, output format) or the
JDK's own JFR (event, period). A variant that cannot run here (the JDK is missing, the JDK has no such event, the
agent refuses the output format at start-up) is kept in the results as skipped, with the reason.
"""
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import jfrtools
from lib import CLASSES, OUT, RUNS, log, parse_agent, read_collapsed, run, run_text, slug

INTERVAL_MS = {"100us": 0.1, "1ms": 1.0, "4ms": 4.0, "10ms": 10.0, "20ms": 20.0}


@dataclass(frozen=True)
class Variant:
    name: str
    jdk: int
    profiler: str = "none"        # none | jsampler | jfr
    event: str = ""               # jsampler: cpu, ctimer, itimer; jfr: jdk.ExecutionSample, jdk.CPUTimeSample
    interval: str = ""            # 10ms, 1ms, 100us
    output: str = "collapsed"     # jsampler output: collapsed (with threads roots) | jfr | html
    smoke: bool = False           # also part of make bench-smoke
    jvm: tuple = field(default=())  # extra JVM options

    @property
    def interval_ms(self):
        return INTERVAL_MS.get(self.interval)


def V(name, jdk, profiler="none", event="", interval="", output="collapsed", smoke=False, jvm=()):
    return Variant(name, jdk, profiler, event, interval, output, smoke, tuple(jvm))


# ---- Figure 1: throughput (BenchOps, 2 CPU-bound threads). Each JDK has its own baseline. ----
# Adding a variant is one line; the agent's JFR output runs as soon as the agent accepts file=*.jfr.
THROUGHPUT = [
    V("JDK 17 baseline",                    17, smoke=True),
    V("JDK 17 baseline again (A/A)",        17),     # the noise floor of a ratio: baseline against itself
    V("jsampler cpu 10ms",                  17, "jsampler", "cpu", "10ms", smoke=True),
    V("jsampler cpu 1ms",                   17, "jsampler", "cpu", "1ms", smoke=True),
    V("jsampler cpu 100us",                 17, "jsampler", "cpu", "100us"),
    V("jsampler ctimer 10ms",               17, "jsampler", "ctimer", "10ms"),
    V("jsampler ctimer 1ms",                17, "jsampler", "ctimer", "1ms", smoke=True),
    V("jsampler itimer 10ms",               17, "jsampler", "itimer", "10ms"),
    V("jsampler itimer 1ms",                17, "jsampler", "itimer", "1ms"),
    V("jsampler cpu 1ms, JFR output",       17, "jsampler", "cpu", "1ms", output="jfr", smoke=True),
    V("JDK 17 JFR ExecutionSample 10ms",    17, "jfr", "jdk.ExecutionSample", "10ms", smoke=True),
    V("JDK 17 JFR ExecutionSample 1ms",     17, "jfr", "jdk.ExecutionSample", "1ms"),
    V("JDK 25 baseline",                    25, smoke=True),
    V("JDK 25 baseline again (A/A)",        25),
    V("jsampler cpu 10ms (JDK 25)",         25, "jsampler", "cpu", "10ms"),
    V("jsampler cpu 1ms (JDK 25)",          25, "jsampler", "cpu", "1ms"),
    V("jsampler ctimer 10ms (JDK 25)",      25, "jsampler", "ctimer", "10ms"),
    V("jsampler ctimer 1ms (JDK 25)",       25, "jsampler", "ctimer", "1ms"),
    V("JDK 25 JFR ExecutionSample 10ms",    25, "jfr", "jdk.ExecutionSample", "10ms"),
    V("JDK 25 JFR ExecutionSample 1ms",     25, "jfr", "jdk.ExecutionSample", "1ms"),
    V("JDK 25 JFR CPUTimeSample 10ms",      25, "jfr", "jdk.CPUTimeSample", "10ms"),
    V("JDK 25 JFR CPUTimeSample 1ms",       25, "jfr", "jdk.CPUTimeSample", "1ms", smoke=True),
]

# ---- Figure 1b: thread churn (Churn: waves of short-lived threads); throughput = threads started. ----
CHURN = [
    V("JDK 17 baseline",                    17, smoke=True),
    V("jsampler cpu 1ms",                   17, "jsampler", "cpu", "1ms", smoke=True),
    V("jsampler ctimer 1ms",                17, "jsampler", "ctimer", "1ms"),
    V("jsampler itimer 1ms",                17, "jsampler", "itimer", "1ms"),
    V("JDK 17 JFR ExecutionSample 1ms",     17, "jfr", "jdk.ExecutionSample", "1ms"),
]

# ---- Figure 2: handler cost against stack depth (BenchDeep, one thread), next to sigbench. ----
DEPTHS = [6, 46, 196]   # recursion depth; the sampled stacks are about 4 frames deeper
DEEP = V("jsampler cpu 1ms", 17, "jsampler", "cpu", "1ms", smoke=True)

# ---- Figure 3: accuracy on CpuSplit (sampled share against the workload's measured CPU split). ----
ACCURACY = [
    V("jsampler cpu 1ms",                   17, "jsampler", "cpu", "1ms", smoke=True),
    V("jsampler ctimer 1ms",                17, "jsampler", "ctimer", "1ms", smoke=True),
    V("jsampler itimer 1ms",                17, "jsampler", "itimer", "1ms"),
    V("jsampler cpu 1ms, JFR output",       17, "jsampler", "cpu", "1ms", output="jfr", smoke=True),
    V("JDK 17 JFR ExecutionSample 1ms",     17, "jfr", "jdk.ExecutionSample", "1ms", smoke=True),
    V("JDK 25 JFR ExecutionSample 1ms",     25, "jfr", "jdk.ExecutionSample", "1ms"),
    V("JDK 25 JFR CPUTimeSample 1ms",       25, "jfr", "jdk.CPUTimeSample", "1ms"),
]

# ---- Figure 4: memory (BenchOps for 60 s, fixed pre-touched heap so that the heap does not blur the delta). ----
MEMORY_JVM = ("-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch")
MEMORY = [
    V("JDK 17 baseline",                    17, smoke=True, jvm=MEMORY_JVM),
    V("jsampler cpu 1ms",                   17, "jsampler", "cpu", "1ms", smoke=True, jvm=MEMORY_JVM),
]

# ---- Figure 6: start-up and exit (BenchHello). ----
STARTUP = [
    V("JDK 17 baseline",                    17, smoke=True),
    V("jsampler cpu 1ms",                   17, "jsampler", "cpu", "1ms", smoke=True),
    V("JDK 25 baseline",                    25),
    V("jsampler cpu 1ms (JDK 25)",          25, "jsampler", "cpu", "1ms"),
]


# ---------------------------------------------------------------- availability

_agent_formats = {}


def agent_accepts(env, fmt):
    """None if the agent starts with file=probe.FMT, else why not (its ERROR line)."""
    if fmt not in _agent_formats:
        probe = OUT / "probe"
        probe.mkdir(parents=True, exist_ok=True)
        target = probe / f"probe.{fmt}"
        target.unlink(missing_ok=True)
        p = run([env.java(17), f"-agentpath:{env.agent}=start,interval=10ms,file={target}", "-cp", str(CLASSES),
                 "BenchHello"], f"probe-{fmt}", timeout=60)
        if p.rc == 0 and target.is_file() and target.stat().st_size > 0:
            _agent_formats[fmt] = None
        else:
            errs = parse_agent(p.stderr)["errors"]
            _agent_formats[fmt] = errs[0].replace("[jsampler] ERROR: ", "") if errs else f"exit code {p.rc}"
    return _agent_formats[fmt]


def skip_reason(env, v):
    """None if the variant can run here, else the reason it is skipped."""
    if v.jdk not in env.jdks:
        return f"JDK {v.jdk} not found"
    if v.profiler == "jfr" and not jfrtools.offers(env, v.jdk, v.event):
        return f"JDK {v.jdk} does not offer {v.event}"
    if v.profiler == "jsampler" and v.output == "jfr":
        why = agent_accepts(env, "jfr")
        if why:
            return f"agent JFR output not available ({why})"
    return None


def selected(table, smoke):
    return [v for v in table if v.smoke or not smoke]


# ---------------------------------------------------------------- one run


def launch(env, v, main, args, name, extra_agent="threads", **run_kw):
    """Run `main args` under variant v; returns a record with the process, the agent's numbers, the profile."""
    d = RUNS / name
    cmd = [env.java(v.jdk), f"-XX:ErrorFile={d}/hs_err_%p.log"] + list(v.jvm)
    profile = None
    if v.profiler == "jsampler":
        profile = d / f"profile.{v.output}"
        opts = f"start,event={v.event},interval={v.interval}" + (f",{extra_agent}" if extra_agent else "")
        cmd.append(f"-agentpath:{env.agent}={opts},file={profile}")
    elif v.profiler == "jfr":
        profile = d / "recording.jfr"
        cmd.append(jfrtools.recording_option(v.event, v.interval, profile))
    cmd += ["-cp", str(CLASSES), main] + [str(a) for a in args]
    p = run(cmd, name, **run_kw)
    rec = {"variant": v.name, "jdk": v.jdk, "profiler": v.profiler, "event": v.event, "interval": v.interval,
           "output": v.output, "workload": main + " " + " ".join(str(a) for a in args), "run": p.to_json(),
           "ok": p.rc == 0 and not p.timed_out}
    if p.rc != 0 or p.timed_out:
        tail = [l for l in p.stderr.splitlines() if l.strip()][-3:]
        log(f"  ! {name}: exit {p.rc}{' (timed out)' if p.timed_out else ''}: {' | '.join(tail)}")
    if v.profiler == "jsampler":
        rec["agent"] = parse_agent(p.stderr)
    if profile is not None and profile.is_file():
        rec["profile_bytes"] = profile.stat().st_size
        rec["profile"] = str(profile)
        if profile.suffix == ".jfr":
            rec["jfr_summary"] = {k: list(c) for k, c in jfrtools.summary(env, v.jdk, profile).items()}
    return rec, p


_cli_jfr = {}


def cli_reads_jfr(env):
    """Whether `jsampler convert --help` says it reads JFR recordings (checked once per run of the harness)."""
    if "v" not in _cli_jfr:
        _cli_jfr["v"] = "jfr" in run_text([str(env.cli), "convert", "--help"]).lower()
    return _cli_jfr["v"]


def sample_stacks(env, v, rec):
    """The run's samples as [(frames, weight)]: the collapsed file; a recording through `jsampler convert` when
    the CLI reads JFR (it reads only the agent's own jdk.ExecutionSample events), else `jfr print --json`."""
    path = rec.get("profile")
    if not path:
        return None
    if path.endswith(".collapsed"):
        rec["stacks_via"] = "collapsed"
        return read_collapsed(path)
    if path.endswith(".jfr"):
        if v.profiler == "jsampler" and cli_reads_jfr(env):
            out = Path(path).with_suffix(".converted.collapsed")
            r = subprocess.run([str(env.cli), "convert", path, str(out)], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            if r.returncode == 0 and out.is_file():
                rec["stacks_via"] = "jsampler convert"
                return read_collapsed(out)
            log(f"  note: jsampler convert could not read {path}: {r.stdout.strip()[:200]}; using jfr print")
        rec["stacks_via"] = "jfr print --json"
        events = [v.event] if v.profiler == "jfr" else ["jdk.ExecutionSample"]
        return jfrtools.stacks(env, v.jdk, path, events)
    return None


def jfr_samples(rec, v):
    """Sample events in a recording, from `jfr summary` (None if there is no recording)."""
    s = rec.get("jfr_summary")
    if s is None:
        return None
    event = v.event if v.profiler == "jfr" else "jdk.ExecutionSample"
    return (s.get(event) or [0, 0])[0]


def run_name(figure, v, round_index, extra=""):
    return slug(f"{figure}-{v.name}{'-' + extra if extra else ''}-r{round_index}")


def profile_path(rec):
    return Path(rec["profile"]) if rec.get("profile") else None

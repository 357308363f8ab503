#!/usr/bin/python3
"""sample_cost.py - what one sample costs, side by side with the JDK's JFR and async-profiler (make sample-cost).

    /usr/bin/python3 bench/sample_cost.py [--only depth,jfr,alias] [--rounds N] [--seconds S]
                                          [--alias-rounds N] [--alias-seconds S] [--smoke]

Sections (all by default; interleaved rounds, medians with min..max):
  depth  BenchDeep at 6/46/196/1996 recursion levels (stacks of about 10/50/200/2000 frames), 1 worker, 1 ms: no
         profiler, jsampler cpu (random periods, the default), cpu nojitter, ctimer, the JDK's JFR ExecutionSample
         at 1 ms and async-profiler cpu at 1 ms. At 46 levels also the library built with other JS_JITTER_RUN
         values; at 1996 levels also jsampler cpu with 2 workers (the throttle check).
  jfr    JFR output of jsampler, the JDK and async-profiler on a deep (DeepChurn, 2 workers, 30 s) and a shallow
         (BenchOps, 2 workers) workload: bytes per sample, CPU and system time, jsampler's handler time, throttled.
  alias  Alias (2 threads, a rotation repeating every 10 ms of CPU), cpu at the default 10 ms interval, 60 s, for
         each JS_JITTER_RUN build and nojitter: the largest error of the a, b, c shares against the measured truth.

Cost per sample (depth): each run is paired with the same round's run without a profiler at the same depth, and
everything is CPU time. In the sampled thread: (the workers' CPU time - visits x the unprofiled run's CPU time per
visit) / samples - the signal, the handler, the timer's kernel work, caches. On other threads (the JDK's sampler
thread, writers, housekeeping): (process CPU - workers' CPU) - the same of the unprofiled run, / samples. Their sum
is the cost per sample, measured the same way for every profiler.

The JS_JITTER_RUN variants are built by this script (make BUILD=build/bench/lib/runN CFLAGS=-DJS_JITTER_RUN=N).
ASPROF_LIB: async-profiler's libasyncProfiler.so (its columns are skipped when unset). JSAMPLER_BASELINE: another
build of libjsampler.so (an earlier commit's, say), run as "jsampler cpu (baseline)" at every depth beside this one. BENCH_LOCK: a lock file;
when set, each section (BENCH_LOCK_SCOPE=round: each round) holds an exclusive flock on it while its JVMs run
(machines shared with other benchmarks). JDK17_HOME,
JSAMPLER_AGENT as for bench.py. The `make test` line is read from build/test-times.txt (make test writes it). Writes build/bench/sample-cost.json (sections merged with those of earlier runs,
each with its date) and build/bench/sample-cost.txt; every run keeps its files in build/bench/runs/sc-*.
"""
import argparse
import contextlib
import datetime
import fcntl
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jfrtools  # noqa: E402
import lib  # noqa: E402
import sample_cost_report as report  # noqa: E402
from lib import OUT, ROOT, find_env, interleave, log, machine_info, read_collapsed, run, stdout_value  # noqa: E402

CLASSES = OUT / "sample-cost-classes"
RESULTS = OUT / "sample-cost.json"
WORKLOADS = ["BenchDeep.java", "BenchOps.java", "DeepChurn.java", "Alias.java"]
DEPTHS = [6, 46, 196, 1996]
RUNS_OF = [1, 4, 8, 16, 32, 100000]     # JS_JITTER_RUN values; 8 is the default build
DEFAULT_RUN = 8


def build_variant(n):
    """The agent built with -DJS_JITTER_RUN=n (the default build for the default value)."""
    if n == DEFAULT_RUN:
        return None
    b = f"build/bench/lib/run{n}"
    so = ROOT / b / "libjsampler.so"
    r = subprocess.run(["make", "-s", "-j2", f"BUILD={b}", f"CFLAGS=-O2 -DJS_JITTER_RUN={n}", f"{b}/libjsampler.so"],
                       cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0 or not so.is_file():
        sys.exit(f"sample-cost: building {b} failed:\n{r.stdout[-2000:]}")
    return so


@contextlib.contextmanager
def jvm_lock():
    path = os.environ.get("BENCH_LOCK")
    if not path:
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def rounds_locked(items, rounds, one, max_other=None):
    """lib.interleave with BENCH_LOCK held for the section (BENCH_LOCK_SCOPE=section, the default) or for each round
    (BENCH_LOCK_SCOPE=round); the order rotates each round."""
    per_round = os.environ.get("BENCH_LOCK_SCOPE", "section") == "round"
    records = []
    with (contextlib.nullcontext() if per_round else jvm_lock()):
        for r in range(rounds):
            k = r % len(items)
            with (jvm_lock() if per_round else contextlib.nullcontext()):
                got = interleave(items[k:] + items[:k], 1, lambda v, _r, slot, r=r: one(v, r, slot),
                                 max_other=max_other)
            for g in got:
                g["round"] = r
            records += got
    return records


# ---------------------------------------------------------------- variants and one run

def variants(env, aslib):
    """name -> (kind, agent library or None, extra options). kind: none | js | jfr | ap."""
    v = {"no profiler": ("none", None, ""),
         "jsampler cpu": ("js", env.agent, "event=cpu"),
         "jsampler cpu nojitter": ("js", env.agent, "event=cpu,nojitter"),
         "jsampler ctimer": ("js", env.agent, "event=ctimer"),
         "JDK JFR ExecutionSample": ("jfr", None, ""),
         "async-profiler cpu": ("ap", aslib, "event=cpu")}
    if not aslib:
        del v["async-profiler cpu"]
    base = os.environ.get("JSAMPLER_BASELINE")
    if base:
        v[report.BASELINE] = ("js", base, "event=cpu")
    return v


def command(env, spec, d, out_ext, interval="1ms"):
    """JVM options for a variant writing its profile to d/profile.EXT; (options, profile path or None)."""
    kind, libpath, extra = spec
    if kind == "none":
        return [], None
    if kind == "jfr":
        prof = d / "recording.jfr"
        return [jfrtools.recording_option("jdk.ExecutionSample", interval, prof)], prof
    prof = d / f"profile.{out_ext}"
    opts = "start," + ",".join(x for x in (extra, f"interval={interval}" if interval else "") if x)
    return [f"-agentpath:{libpath}={opts},file={prof}"], prof


_STOP_HANDLER = re.compile(r"handler_ns: min=(\d+) median=(>?)(\d+) p99=(>?)(\d+) max=(\d+)")


def agent_numbers(stderr):
    """jsampler's stop line: samples, weight, throttled, handler median/p99 (a '>' marks a histogram overflow)."""
    a = lib.parse_agent(stderr)
    out = {k: a.get(k) for k in ("samples", "weight", "throttled", "dropped")}
    m = _STOP_HANDLER.search(a.get("stop_line", ""))
    if m:
        out.update(handler_median=int(m.group(3)), handler_median_over=bool(m.group(2)),
                   handler_p99=int(m.group(5)), handler_p99_over=bool(m.group(4)))
    out["errors"] = a.get("errors", [])
    return out


def count_samples(env, kind, prof):
    """Samples in a profile: the collapsed counts, or the jdk.ExecutionSample events of a recording."""
    if prof is None or not prof.is_file():
        return None
    if prof.suffix == ".jfr":
        return (jfrtools.summary(env, 17, prof).get("jdk.ExecutionSample") or [None])[0]
    return sum(w for _, w in read_collapsed(prof))


def launch(env, name, spec, main, args, out_ext="collapsed", interval="1ms", timeout=300):
    d = lib.RUNS / name
    opts, prof = command(env, spec, d, out_ext, interval)
    cmd = [env.java(17), f"-XX:ErrorFile={d}/hs_err_%p.log"] + opts + ["-cp", str(CLASSES), main] + \
        [str(a) for a in args]
    p = run(cmd, name, timeout=timeout)
    rec = {"name": name, "kind": spec[0], "run": p.to_json(), "ok": p.rc == 0 and not p.timed_out,
           "stdout": p.stdout[-2000:]}
    if p.rc != 0 or p.timed_out:
        tail = [x for x in p.stderr.splitlines() if x.strip()][-3:]
        log(f"  ! {name}: exit {p.rc}{' (timed out)' if p.timed_out else ''}: {' | '.join(tail)}")
    if spec[0] == "js":
        rec["agent"] = agent_numbers(p.stderr)
    if prof is not None and prof.is_file():
        rec["profile"] = str(prof)
        rec["profile_bytes"] = prof.stat().st_size
        rec["samples"] = count_samples(env, spec[0], prof)
    return rec, p


# ---------------------------------------------------------------- section: cost against depth

def depth_section(env, cfg, aslib):
    vmap = variants(env, aslib)
    items = [(d, n, 1) for d in DEPTHS for n in vmap]
    for k in RUNS_OF:
        if k != DEFAULT_RUN:
            so = build_variant(k)
            vmap[f"jsampler cpu JS_JITTER_RUN={k}"] = ("js", so, "event=cpu")
            items.append((46, f"jsampler cpu JS_JITTER_RUN={k}", 1))
    items.append((1996, "jsampler cpu", 2))
    items.append((1996, "no profiler", 2))

    def one(item, r, slot):
        depth, vname, threads = item
        name = lib.slug(f"sc-depth-{depth}x{threads}-{vname}-r{r}")
        rec, p = launch(env, name, vmap[vname], "BenchDeep", [cfg.seconds, depth, threads],
                        timeout=cfg.seconds + 120)
        rec.update(variant=vname, depth=depth, threads=threads, ops=stdout_value(p.stdout, "OPS"),
                   visits=stdout_value(p.stdout, "VISITS"), worker_ms=lib.stdout_fields(p.stdout, "CPU").get("worker_ms"),
                   seconds=cfg.seconds, other_load=lib.other_load(rec))
        a = rec.get("agent") or {}
        log(f"  [depth r{r}] {depth:5d}x{threads} {vname:36s} visits/CPU-s={1e3 * (rec['visits'] or 0) / (rec['worker_ms'] or 1):7.1f} "
            f"samples={rec.get('samples')} other load={rec['other_load'] or 0:.2f}"
            + (f" handler median={a.get('handler_median')} p99={a.get('handler_p99')} throttled={a.get('throttled')}"
               if a else ""))
        return rec

    records = rounds_locked(items, cfg.rounds, one)
    for rec in records:
        rec["item"] = [rec["depth"], rec["variant"], rec["threads"]]
    derive_costs(records)
    return {"records": records, "rows": depth_rows(records, items),
            "variants": {k: [v[0], str(v[1]) if v[1] else None, v[2]] for k, v in vmap.items()}}


def derive_costs(records):
    """Per run: cost per sample against the same round's run without a profiler at the same depth and threads.

    in thread: the workers' CPU time minus what the same visits took without a profiler; other threads: the rest of
    the process's CPU time (user + system) minus the same without a profiler. Both in CPU time, so a run is not
    disturbed by other processes taking CPUs away (they may still pollute caches)."""
    base = {(r["round"], r["depth"], r["threads"]): r for r in records if r["variant"] == "no profiler" and r["ok"]}
    for r in records:
        b = base.get((r["round"], r["depth"], r["threads"]))
        n = r.get("samples")
        if r["variant"] == "no profiler" or not b or not n or not r["ok"] or not r.get("visits") or \
                not b.get("visits") or r.get("worker_ms") is None or b.get("worker_ms") is None:
            continue
        in_thread = r["worker_ms"] - r["visits"] * b["worker_ms"] / b["visits"]
        other = (1000 * r["run"]["cpu_s"] - r["worker_ms"]) - (1000 * b["run"]["cpu_s"] - b["worker_ms"])
        r.update(in_thread_us=1e3 * in_thread / n, other_threads_us=1e3 * other / n,
                 cost_us=1e3 * (in_thread + other) / n, sys_us=1e6 * (r["run"]["sys_s"] - b["run"]["sys_s"]) / n,
                 rate=1e3 * n / r["worker_ms"] if r["worker_ms"] else None,
                 ratio=(r["visits"] / r["worker_ms"]) / (b["visits"] / b["worker_ms"]))


def _s(values):
    return lib.summary(values)


def depth_rows(records, items):
    rows = []
    seen = []
    for it in items:
        if it not in seen:
            seen.append(it)
    used = [r for r in records if not r.get("busy")] or records
    for depth, vname, threads in seen:
        mine = [r for r in used if r["depth"] == depth and r["variant"] == vname and r["threads"] == threads]
        a = [r.get("agent") or {} for r in mine]
        rows.append({"depth": depth, "threads": threads, "variant": vname, "n": len(mine),
                     "ops": _s([r.get("ops") for r in mine]), "samples": _s([r.get("samples") for r in mine]),
                     "visits_per_cpu_s": _s([1e3 * r["visits"] / r["worker_ms"] for r in mine
                                             if r.get("visits") and r.get("worker_ms")]),
                     "rate": _s([r.get("rate") for r in mine]),
                     "cost_us": _s([r.get("cost_us") for r in mine]),
                     "in_thread_us": _s([r.get("in_thread_us") for r in mine]),
                     "other_threads_us": _s([r.get("other_threads_us") for r in mine]),
                     "sys_us": _s([r.get("sys_us") for r in mine]),
                     "sys_s": _s([r["run"]["sys_s"] for r in mine]),
                     "handler_median_ns": _s([x.get("handler_median") for x in a]),
                     "handler_p99_ns": _s([x.get("handler_p99") for x in a]),
                     "handler_p99_over": any(x.get("handler_p99_over") for x in a),
                     "throttled": _s([x.get("throttled") for x in a]),
                     "throttled_pct": _s([100 * x["throttled"] / x["weight"] for x in a
                                          if x.get("weight") and x.get("throttled") is not None])})
    return rows


# ---------------------------------------------------------------- section: JFR bytes per sample

def jfr_section(env, cfg, aslib):
    vmap = variants(env, aslib)
    names = ["no profiler", "jsampler cpu", "JDK JFR ExecutionSample"] + (["async-profiler cpu"] if aslib else [])
    items = [("deep", n) for n in names] + [("shallow", n) for n in names if n != "no profiler"]

    def one(item, r, slot):
        wl, vname = item
        name = lib.slug(f"sc-jfr-{wl}-{vname}-r{r}")
        if wl == "deep":
            main, args, secs = "DeepChurn", [cfg.deep_seconds, 2], cfg.deep_seconds
        else:
            main, args, secs = "BenchOps", [3, cfg.shallow_seconds, 2], 3 + cfg.shallow_seconds
        rec, p = launch(env, name, vmap[vname], main, args, out_ext="jfr", timeout=secs + 180)
        rec.update(workload=wl, variant=vname, other_load=lib.other_load(rec))
        if rec.get("samples"):
            rec["bytes_per_sample"] = rec["profile_bytes"] / rec["samples"]
        if wl == "deep":
            m = re.search(r"DEEPCHURN_DONE visits=(\d+) threads=(\d+)", p.stdout)
            rec["visits"] = int(m.group(1)) if m else None
        else:
            rec["ops"] = stdout_value(p.stdout, "OPS")
        a = rec.get("agent") or {}
        log(f"  [jfr r{r}] {wl:7s} {vname:26s} bytes={rec.get('profile_bytes')} samples={rec.get('samples')} "
            f"cpu={rec['run']['cpu_s']:.1f}s sys={rec['run']['sys_s']:.1f}s other load={rec['other_load'] or 0:.2f}"
            + (f" handler median={a.get('handler_median')} p99={a.get('handler_p99')} throttled={a.get('throttled')}"
               if a else ""))
        return rec

    records = rounds_locked(items, cfg.jfr_rounds, one)
    used = [r for r in records if not r.get("busy")] or records
    rows = []
    for wl, vname in items:
        mine = [r for r in used if r["workload"] == wl and r["variant"] == vname]
        a = [r.get("agent") or {} for r in mine]
        rows.append({"workload": wl, "variant": vname, "n": len(mine),
                     "bytes": _s([r.get("profile_bytes") for r in mine]),
                     "samples": _s([r.get("samples") for r in mine]),
                     "bytes_per_sample": _s([r.get("bytes_per_sample") for r in mine]),
                     "cpu_s": _s([r["run"]["cpu_s"] for r in mine]), "sys_s": _s([r["run"]["sys_s"] for r in mine]),
                     "visits": _s([r.get("visits") for r in mine]), "ops": _s([r.get("ops") for r in mine]),
                     "handler_median_ns": _s([x.get("handler_median") for x in a]),
                     "handler_p99_ns": _s([x.get("handler_p99") for x in a]),
                     "handler_p99_over": any(x.get("handler_p99_over") for x in a),
                     "throttled_pct": _s([100 * x["throttled"] / x["weight"] for x in a
                                          if x.get("weight") and x.get("throttled") is not None])})
    return {"records": records, "rows": rows}


# ---------------------------------------------------------------- section: aliasing

ALIAS_TRUTH = re.compile(r"TRUTH a=([0-9.]+) b=([0-9.]+) c=([0-9.]+) d=([0-9.]+)")


def alias_error(prof, stdout):
    """(max error of a, b, c in points, of all four, samples) as the alias-cpu check computes them."""
    m = ALIAS_TRUTH.search(stdout)
    if not m or prof is None or not prof.is_file():
        return None
    counts = [0, 0, 0, 0]
    for frames, w in read_collapsed(prof):
        for i, meth in enumerate("abcd"):
            if "Alias." + meth in frames:
                counts[i] += w
    n = sum(counts)
    if not n:
        return None
    err = [abs(100 * c / n - 100 * float(m.group(i + 1))) for i, c in enumerate(counts)]
    return max(err[:3]), max(err), n


def alias_section(env, cfg):
    vmap = {}
    for k in RUNS_OF:
        so = build_variant(k) or env.agent
        vmap[f"JS_JITTER_RUN={k}" + (" (default)" if k == DEFAULT_RUN else "")] = ("js", so, "event=cpu")
    vmap["nojitter"] = ("js", env.agent, "event=cpu,nojitter")
    items = list(vmap)

    def one(vname, r, slot):
        name = lib.slug(f"sc-alias-{vname}-r{r}")
        rec, p = launch(env, name, vmap[vname], "Alias", [cfg.alias_seconds, 2], interval="",
                        timeout=cfg.alias_seconds + 120)
        rec.update(variant=vname, other_load=lib.other_load(rec))
        e = alias_error(lib.RUNS / name / "profile.collapsed", p.stdout)
        if e:
            rec.update(abc_error=e[0], max_error=e[1], alias_samples=e[2])
        log(f"  [alias r{r}] {vname:28s} a,b,c error={rec.get('abc_error', float('nan')):.2f} pt "
            f"all four={rec.get('max_error', float('nan')):.2f} pt samples={rec.get('alias_samples')} "
            f"other load={rec['other_load'] or 0:.2f}")
        return rec

    records = rounds_locked(items, cfg.alias_rounds, one)
    used = [r for r in records if not r.get("busy")] or records
    rows = []
    for vname in items:
        mine = [r for r in used if r["variant"] == vname]
        rows.append({"variant": vname, "n": len(mine), "abc_error": _s([r.get("abc_error") for r in mine]),
                     "max_error": _s([r.get("max_error") for r in mine]),
                     "abc_errors": [round(r["abc_error"], 2) for r in mine if r.get("abc_error") is not None],
                     "samples": _s([r.get("alias_samples") for r in mine])})
    return {"records": records, "rows": rows}


# ---------------------------------------------------------------- main

def compile_classes(env):
    CLASSES.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([str(env.jdks[17] / "bin" / "javac"), "--release", "17", "-d", str(CLASSES)] +
                       [str(lib.HARNESS / w) for w in WORKLOADS], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode != 0:
        sys.exit("sample-cost: javac failed:\n" + r.stdout)


def test_time():
    """The last `make test` time from build/test-times.txt (per group "NAME SECONDS cpu CPU_SECONDS", then `total N`
    when every group passed); None if there is no passing run to read."""
    p = ROOT / "build" / "test-times.txt"
    if not p.is_file():
        return None
    phases = [line.split() for line in p.read_text().splitlines() if line.strip()]
    total = [x for x in phases if x[0] == "total"]
    if not total or any("failed" in x for x in phases):
        return None
    when = datetime.datetime.fromtimestamp(p.stat().st_mtime, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rest = ", ".join(f"{x[0]} {x[1]} s" + (f" ({x[3]} s of CPU)" if len(x) >= 4 else "")
                     for x in phases if x[0] != "total")
    return f"{total[0][-1]} s ({rest}; passed, {when})"


class Cfg:
    def __init__(self, a):
        smoke = a.smoke
        self.rounds = a.rounds or (1 if smoke else 3)
        self.seconds = a.seconds or (2 if smoke else 8)
        self.jfr_rounds = a.jfr_rounds or (1 if smoke else 2)
        self.deep_seconds = 5 if smoke else 30
        self.shallow_seconds = 2 if smoke else 10
        self.alias_rounds = a.alias_rounds or (1 if smoke else 3)
        self.alias_seconds = a.alias_seconds or (8 if smoke else 60)


SECTIONS = ["depth", "jfr", "alias"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated sections: " + ",".join(SECTIONS))
    ap.add_argument("--rounds", type=int, help="rounds of the depth section (3)")
    ap.add_argument("--seconds", type=float, help="seconds of each depth run (8)")
    ap.add_argument("--jfr-rounds", type=int, help="rounds of the jfr section (2)")
    ap.add_argument("--alias-rounds", type=int, help="rounds of the alias section (3)")
    ap.add_argument("--alias-seconds", type=float, help="seconds of each alias run (60)")
    ap.add_argument("--smoke", action="store_true", help="short runs, one round: checks the script, not a figure")
    ap.add_argument("--report", action="store_true", help="only print the table of the saved results")
    a = ap.parse_args()
    only = a.only.split(",") if a.only else SECTIONS
    if set(only) - set(SECTIONS):
        ap.error("unknown section(s): " + ", ".join(sorted(set(only) - set(SECTIONS))))
    results = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {"sections": {}}
    if not a.report:
        cfg = Cfg(a)
        env = find_env()
        aslib = os.environ.get("ASPROF_LIB")
        if aslib and not os.path.isfile(aslib):
            sys.exit(f"sample-cost: ASPROF_LIB={aslib} is not a file")
        if not aslib:
            log("note: ASPROF_LIB is not set: the async-profiler columns are skipped")
        base = os.environ.get("JSAMPLER_BASELINE")
        if base and not os.path.isfile(base):
            sys.exit(f"sample-cost: JSAMPLER_BASELINE={base} is not a file")
        OUT.mkdir(parents=True, exist_ok=True)
        compile_classes(env)
        lib.retry_budget[0] = 120
        for sec in only:
            t0, busy0 = time.monotonic(), lib.cpu_busy_seconds()
            log(f"== {sec}")
            data = {"depth": lambda: depth_section(env, cfg, aslib), "jfr": lambda: jfr_section(env, cfg, aslib),
                    "alias": lambda: alias_section(env, cfg)}[sec]()
            el = time.monotonic() - t0
            own = sum(r["run"]["cpu_s"] for r in data["records"])
            data["meta"] = {
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "command": " ".join(shlex.quote(x) for x in [sys.executable] + sys.argv),
                "config": vars(cfg), "seconds": round(el, 1), "machine": machine_info(),
                "jdk": env.jdk_versions.get(17), "asprof": bool(aslib), "lock": bool(os.environ.get("BENCH_LOCK")),
                "other_load": round(max(0.0, lib.cpu_busy_seconds() - busy0 - own) / el, 2),
                "busy_kept": sum(1 for r in data["records"] if r.get("busy")),
                "made_again": len(lib.superseded_runs)}
            results["sections"][sec] = data
            with open(RESULTS, "w") as f:
                json.dump(results, f, indent=1, default=str)
    results["make_test"] = test_time()
    text = report.render(results)
    print(text)
    (OUT / "sample-cost.txt").write_text(text + "\n")


if __name__ == "__main__":
    main()

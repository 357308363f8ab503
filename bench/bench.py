#!/usr/bin/python3
"""jsampler benchmarks: make bench (full, ~25 min) and make bench-smoke (~2 min).

    /usr/bin/python3 bench/bench.py [--smoke] [--only FIGURE,...] [--rounds N]

Figures: throughput (1), churn (1b), cost (2), accuracy (3), memory (4), output (5), startup (6); see
docs/BENCHMARKS.md for what each measures. Prints a table to stdout (progress to stderr) and writes
build/bench/results.json (every single run, machine, JDKs, date, command line), build/bench/table.txt and
build/bench/throughput.svg (with --smoke: results-smoke.json, table-smoke.txt, throughput-smoke.svg). JDK17_HOME / JDK25_HOME, JSAMPLER_AGENT / JSAMPLER_CLI override the defaults.
"""
import argparse
import datetime
import json
import os
import shlex
import sys
import time
from dataclasses import asdict, dataclass

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import figures  # noqa: E402
import lib  # noqa: E402
import figures_io  # noqa: E402
import report  # noqa: E402
import svgplot  # noqa: E402
from lib import OUT, ROOT, build_sigbench, compile_workloads, cpu_busy_seconds, find_env, log, machine_info  # noqa


@dataclass
class Config:
    smoke: bool
    rounds: int                 # figure 1: rounds over all throughput variants
    warmup: float               # BenchOps warm-up, s
    window: float               # BenchOps measuring window, s
    churn_rounds: int
    churn_seconds: float
    cost_rounds: int
    deep_seconds: float
    sig_seconds: float
    accuracy_rounds: int
    accuracy_args: tuple        # CpuSplit seconds, minimum CPU seconds in the burn methods
    memory_rounds: int
    memory_seconds: tuple       # BenchOps warm-up, window
    out_reps: int
    browser_loads: int
    startup_rounds: int
    retry_budget: float         # seconds that may be spent making runs again because the machine was busy


FULL = Config(smoke=False, rounds=5, warmup=3, window=3, churn_rounds=5, churn_seconds=3, cost_rounds=3,
              deep_seconds=4, sig_seconds=3, accuracy_rounds=3, accuracy_args=(10, 21), memory_rounds=2,
              memory_seconds=(2, 58), out_reps=3, browser_loads=3, startup_rounds=10, retry_budget=300)
SMOKE = Config(smoke=True, rounds=2, warmup=1, window=1, churn_rounds=1, churn_seconds=1, cost_rounds=1,
               deep_seconds=1.5, sig_seconds=1, accuracy_rounds=1, accuracy_args=(2, 0), memory_rounds=1,
               memory_seconds=(1, 4), out_reps=1, browser_loads=1, startup_rounds=3, retry_budget=20)
FIGURES = ["throughput", "churn", "cost", "accuracy", "memory", "output", "startup"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="short runs, fewer variants (make bench-smoke)")
    ap.add_argument("--only", help="comma-separated figures: " + ",".join(FIGURES))
    ap.add_argument("--rounds", type=int, help="override the repetitions of figure 1")
    args = ap.parse_args()
    cfg = SMOKE if args.smoke else FULL
    if args.rounds:
        cfg.rounds = args.rounds
    only = args.only.split(",") if args.only else FIGURES
    unknown = set(only) - set(FIGURES)
    if unknown:
        ap.error("unknown figure(s): " + ", ".join(sorted(unknown)))

    t0 = time.monotonic()
    OUT.mkdir(parents=True, exist_ok=True)
    env = find_env()
    compile_workloads(env)
    build_sigbench(env)
    load0, busy0 = os.getloadavg(), cpu_busy_seconds()
    meta = {
        "smoke": cfg.smoke,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(shlex.quote(a) for a in [sys.executable] + sys.argv),
        "make_target": os.environ.get("BENCH_MAKE_TARGET") or None,
        "cwd_relative": os.path.relpath(os.getcwd(), ROOT),
        "env_overrides": {k: os.environ[k] for k in ("JDK17_HOME", "JDK25_HOME", "JSAMPLER_AGENT", "JSAMPLER_CLI")
                          if k in os.environ},
        "machine": machine_info(),
        "jdks": {str(k): v for k, v in env.jdk_versions.items()},
        "jdk_homes": {str(k): str(v) for k, v in env.jdks.items()},
        "agent": str(env.agent.relative_to(ROOT)) if env.agent.is_relative_to(ROOT) else str(env.agent),
        "git": _git_state(),
        "config": asdict(cfg),
        "loadavg_start": load0,
        "notes": env.notes,
    }
    log(f"jsampler bench ({'smoke' if cfg.smoke else 'full'}): figures {', '.join(only)}")

    figs = {}
    steps = [("throughput", lambda: figures.throughput(env, cfg)), ("churn", lambda: figures.churn(env, cfg)),
             ("cost", lambda: figures.cost(env, cfg)), ("accuracy", lambda: figures.accuracy(env, cfg)),
             ("memory", lambda: figures.memory(env, cfg)),
             ("output", lambda: figures_io.output(env, cfg, figs.get("throughput", {}).get("rows", []))),
             ("startup", lambda: figures_io.startup(env, cfg))]
    lib.retry_budget[0] = cfg.retry_budget
    for name, fn in steps:
        if name in only:
            s, before = time.monotonic(), len(lib.superseded_runs)
            log(f"== {name}")
            figs[name] = fn()
            figs[name]["seconds"] = round(time.monotonic() - s, 1)
            for r in lib.superseded_runs[before:]:
                r["figure"] = name
            figs[name]["reruns"] = len(lib.superseded_runs) - before
            figs[name]["busy_kept"] = sum(1 for r in figs[name].get("records", []) if r.get("busy"))

    elapsed = time.monotonic() - t0
    own_cpu = sum(r["run"]["cpu_s"] for f in figs.values() for r in f.get("records", []) if "run" in r)
    other = max(0.0, cpu_busy_seconds() - busy0 - own_cpu)
    meta.update({"loadavg_end": os.getloadavg(), "seconds": round(elapsed, 1),
                 "other_load": f"{other / elapsed:.2f} CPUs on average (machine busy time minus the benchmark's "
                               f"child processes)"})
    results = {"meta": meta, "figures": figs}
    results["goals"] = report.evaluate(figs, cfg.smoke)
    results["runs"] = [dict(r, figure=name) for name, f in figs.items() for r in f.get("records", [])] + \
        lib.superseded_runs
    for f in figs.values():
        f.pop("records", None)

    text = report.render(results)
    print(text)
    sfx = "-smoke" if cfg.smoke else ""  # a smoke run does not overwrite the full run's results
    (OUT / f"table{sfx}.txt").write_text(text + "\n")
    with open(OUT / f"results{sfx}.json", "w") as f:
        json.dump(results, f, indent=1, default=str)
    if "throughput" in figs:
        series = svgplot.series_from_rows(figs["throughput"]["rows"])
        svgplot.plot(series, OUT / f"throughput{sfx}.svg", "Throughput with profiler / without (BenchOps, 2 threads)",
                     f"{meta['machine']['cpu_model']}, {meta['machine']['cpus']} CPUs; {meta['date']}; "
                     f"median of {cfg.rounds} interleaved rounds, bars = min..max",
                     goals=[(10.0, 0.995, "goal 10ms: -0.5%"), (1.0, 0.98, "goal 1ms: -2%")])
    log(f"wrote {OUT.relative_to(ROOT)}/results{sfx}.json, table{sfx}.txt, throughput{sfx}.svg "
        f"({elapsed / 60:.1f} min)")


def _git_state():
    from lib import run_text
    head = run_text(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]).strip()
    dirty = run_text(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"]).strip()
    return {"head": head, "modified_files": len(dirty.splitlines()) if dirty else 0}


if __name__ == "__main__":
    main()

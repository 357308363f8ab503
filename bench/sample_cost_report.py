"""The table of bench/sample_cost.py (make sample-cost): from its saved results to text, with the targets judged."""
import statistics

import lib

FRAMES = {6: "~10", 46: "~50", 196: "~200", 1996: "~2000"}


BASELINE = "jsampler cpu (baseline)"  # the library of JSAMPLER_BASELINE (sample_cost.py)


def fmt(s, unit="", digits=1, scale=1.0):
    """'median [min..max] N=n' of a summary, or '-'."""
    if not s:
        return "-"
    f = f"{{:,.{digits}f}}"
    m, lo, hi = (f.format(s[k] * scale) for k in ("median", "min", "max"))
    return f"{m}{unit} [{lo}..{hi}] N={s['n']}"


def med(s):
    return s["median"] if s else None


def _row(rows, **kw):
    for r in rows:
        if all(r.get(k) == v for k, v in kw.items()):
            return r
    return None


def _paired(records, depth, a, b, key="cost_us", threads=1):
    """Per round: key(variant a) - key(variant b) at one depth."""
    by = {}
    for r in records:
        if r.get("depth") == depth and r.get("threads") == threads and r.get(key) is not None and not r.get("busy"):
            by[(r["round"], r["variant"])] = r[key]
    return [by[(k, a)] - by[(k, b)] for (k, v) in list(by) if v == a and (k, b) in by]


def render(results):
    secs = results.get("sections", {})
    out = ["jsampler cost per sample (make sample-cost)"]
    for name, s in secs.items():
        m = s["meta"]
        out.append(f"  {name}: {m['date']}, {m['seconds'] / 60:.1f} min, {m['command']}; other processes used "
                   f"{m['other_load']} CPUs on average; runs kept although the machine was busy: {m['busy_kept']}")
    if secs:
        mach = next(iter(secs.values()))["meta"]["machine"]
        out.append(f"  machine: {mach['cpu_model']}, {mach['cpus']} CPUs, kernel {mach['kernel']}; "
                   f"JDK: {next(iter(secs.values()))['meta']['jdk']}")
    out.append("  each figure: median [min..max] N=rounds, variants interleaved")
    goals = []
    if "depth" in secs:
        out += depth_table(secs["depth"], goals)
    if "jfr" in secs:
        out += jfr_table(secs["jfr"], goals)
    if "alias" in secs:
        out += alias_table(secs["alias"], secs.get("depth"), goals)
    out.append("")
    out.append(f"make test: {results.get('make_test') or 'not recorded'}")
    if goals:
        out.append("")
        out.append("Targets")
        for verdict, what, detail in goals:
            out.append(f"  {verdict:5s} {what:62s} {detail}")
    return "\n".join(out)


def depth_table(sec, goals):
    rows, recs = sec["rows"], sec["records"]
    out = ["", "1. Cost per sample against stack depth (BenchDeep, 1 worker, 1 ms), paired with the same round's run "
               "without a profiler",
           "   cost = (workers' extra CPU for the same visits + other threads' extra CPU) / samples, all CPU time; "
           "handler = jsampler's stop line (clock time)"]
    for r in rows:
        if r["variant"] == "no profiler":
            out.append(f"  {FRAMES[r['depth']]:>5} frames x{r['threads']} {'no profiler':34s} visits/CPU-s {fmt(r['visits_per_cpu_s'])}  "
                       f"sys {fmt(r['sys_s'], ' s', 2)}")
            continue
        line = (f"  {FRAMES[r['depth']]:>5} frames x{r['threads']} {r['variant']:34s} cost {fmt(r['cost_us'], ' us')}"
                f"  in thread {fmt(r['in_thread_us'], ' us')}  other threads {fmt(r['other_threads_us'], ' us')}"
                f"  sys {fmt(r['sys_us'], ' us')}  samples/s {fmt(r['rate'], '', 0)}")
        if r["handler_median_ns"]:
            line += (f"  handler median {fmt(r['handler_median_ns'], ' ns', 0)} p99 "
                     f"{'>' if r['handler_p99_over'] else ''}{fmt(r['handler_p99_ns'], ' ns', 0)}"
                     f"  throttled {fmt(r['throttled_pct'], '%', 2)}")
        out.append(line)

    names = ["jsampler cpu", "jsampler cpu nojitter", "jsampler ctimer", "JDK JFR ExecutionSample",
             "async-profiler cpu"]
    if any(r["variant"] == BASELINE for r in rows):
        names.insert(1, BASELINE)
    out += ["", "1a. Side by side: cost per sample, us (jsampler: handler median, us, in parentheses)"]
    out.append("  " + f"{'frames':8s}" + "".join(f"{n:>28s}" for n in names))
    for d in FRAMES:
        cells = []
        for n in names:
            r = _row(rows, depth=d, variant=n, threads=1)
            if not r:
                cells.append("skipped")
                continue
            c = med(r["cost_us"])
            h = med(r["handler_median_ns"])
            cells.append(("-" if c is None else f"{c:.1f}") + (f" ({h / 1000:.1f})" if h else ""))
        out.append("  " + f"{FRAMES[d]:8s}" + "".join(f"{c:>28s}" for c in cells))

    out += ["", "1b. Cost per frame: (cost at ~2000 frames - cost at ~10 frames) / 1990 frames, per round"]
    per_frame = {}
    for n in names:
        hi = {r["round"]: r.get("cost_us") for r in recs if r["variant"] == n and r["depth"] == 1996
              and r["threads"] == 1}
        lo = {r["round"]: r.get("cost_us") for r in recs if r["variant"] == n and r["depth"] == 6}
        v = [1000 * (hi[k] - lo[k]) / 1990 for k in hi if hi[k] is not None and lo.get(k) is not None]
        per_frame[n] = lib.summary(v)
        if v:
            out.append(f"  {n:34s} {fmt(per_frame[n], ' ns/frame', 2)}")
    js, ap = med(per_frame.get("jsampler cpu")), med(per_frame.get("async-profiler cpu"))
    if js is not None and ap:
        ratio = js / ap
        goals.append(("PASS" if ratio <= 1.5 else "MISS", "deep stacks: cost per frame <= 1.5x async-profiler's",
                      f"{js:.2f} vs {ap:.2f} ns/frame: x{ratio:.2f}"))
    elif js is not None:
        goals.append(("n/a", "deep stacks: cost per frame <= 1.5x async-profiler's",
                      f"{js:.2f} ns/frame; async-profiler not measured (ASPROF_LIB unset)"))

    out += ["", "1c. Random periods: cost(cpu) - cost(cpu nojitter), paired per round, us per sample"]
    for d in FRAMES:
        v = _paired(recs, d, "jsampler cpu", "jsampler cpu nojitter")
        out.append(f"  {FRAMES[d]:>5} frames  {fmt(lib.summary(v), ' us', 2)}")
    allv = [x for d in FRAMES for x in _paired(recs, d, "jsampler cpu", "jsampler cpu nojitter")]
    out.append(f"  all depths   {fmt(lib.summary(allv), ' us', 2)}")
    r1 = _row(rows, depth=46, variant="jsampler cpu JS_JITTER_RUN=1")
    r0 = _row(rows, depth=46, variant="jsampler cpu nojitter")
    if r1 and r0 and med(r1["handler_median_ns"]) and med(r0["handler_median_ns"]):
        draw = (med(r1["handler_median_ns"]) - med(r0["handler_median_ns"])) / 1000
        out.append(f"  one draw (handler median JS_JITTER_RUN=1 - nojitter, ~50 frames): {draw:.1f} us; "
                   f"per sample at JS_JITTER_RUN=8: {draw / 8:.2f} us")

    cpu50 = _row(rows, depth=46, variant="jsampler cpu", threads=1)
    if cpu50 and cpu50["handler_median_ns"]:
        h = med(cpu50["handler_median_ns"]) / 1000
        goals.append(("PASS" if h <= 5 else "MISS", "cpu handler median <= 5 us at ~50 frames, 1 ms, random periods",
                      f"{h:.2f} us (handler median; cost per sample {med(cpu50['cost_us']) or 0:.1f} us)"))
    t2 = _row(rows, depth=1996, variant="jsampler cpu", threads=2)
    if t2 and t2["throttled_pct"]:
        th = t2["throttled_pct"]["max"]
        goals.append(("PASS" if th == 0 else "MISS", "no throttling at 1 ms, ~2000 frames, 2 workers (BenchDeep)",
                      f"throttled {fmt(t2['throttled_pct'], '%', 2)}"))
    return out


def jfr_table(sec, goals):
    rows = sec["rows"]
    out = ["", "2. JFR output at 1 ms: bytes per sample, CPU and system time of the process (deep: DeepChurn, 2 workers "
               "+ churn; shallow: BenchOps, 2 workers)"]
    for r in rows:
        line = f"  {r['workload']:7s} {r['variant']:26s}"
        if r["variant"] != "no profiler":
            line += (f" bytes/sample {fmt(r['bytes_per_sample'], ' B', 1)}  file {fmt(r['bytes'], ' MB', 1, 1e-6)}"
                     f"  samples {fmt(r['samples'], '', 0)}")
        line += f"  CPU {fmt(r['cpu_s'], ' s', 1)}  sys {fmt(r['sys_s'], ' s', 2)}"
        if r["handler_median_ns"]:
            line += (f"  handler median {fmt(r['handler_median_ns'], ' ns', 0)} p99 "
                     f"{'>' if r['handler_p99_over'] else ''}{fmt(r['handler_p99_ns'], ' ns', 0)}"
                     f"  throttled {fmt(r['throttled_pct'], '%', 2)}")
        out.append(line)
    d = _row(rows, workload="deep", variant="jsampler cpu")
    if d and d["throttled_pct"]:
        goals.append(("PASS" if d["throttled_pct"]["max"] == 0 else "MISS",
                      "no throttling at 1 ms on Deep (DeepChurn, 2 workers, JFR)",
                      f"throttled {fmt(d['throttled_pct'], '%', 2)}"))
    return out


def alias_table(sec, depth, goals):
    rows = sec["rows"]
    out = ["", "3. Random-period options: aliasing (Alias, 2 threads, cpu 10 ms, max error of a, b, c against the "
               "measured truth) and cost at ~50 frames (section 1)"]
    for r in rows:
        line = (f"  {r['variant']:28s} a,b,c error {fmt(r['abc_error'], ' pt', 2)} (runs: "
                f"{', '.join(str(x) for x in r['abc_errors'])})  all four {fmt(r['max_error'], ' pt', 2)}"
                f"  samples {fmt(r['samples'], '', 0)}")
        if depth:
            n = r["variant"].replace(" (default)", "")
            vn = "jsampler cpu nojitter" if n == "nojitter" else (
                "jsampler cpu" if n == "JS_JITTER_RUN=8" else f"jsampler cpu {n}")
            c = _row(depth["rows"], depth=46, variant=vn, threads=1)
            if c:
                line += (f"  cost {fmt(c['cost_us'], ' us')}  handler median {fmt(c['handler_median_ns'], ' ns', 0)}"
                         f" p99 {fmt(c['handler_p99_ns'], ' ns', 0)}")
        out.append(line)
    dflt = _row(rows, variant="JS_JITTER_RUN=8 (default)")
    if dflt and dflt["abc_error"]:
        worst = dflt["abc_error"]["max"]
        goals.append(("PASS" if worst <= 1.0 else "MISS", "alias-cpu: <= 1 point at 10 ms with random periods",
                      f"max error of a, b, c {fmt(dflt['abc_error'], ' pt', 2)}"))
    return out


def median_of(values):
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None

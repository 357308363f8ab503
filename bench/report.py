"""The printed table and the goals (PASS / MISS / PENDING / n/a per goal)."""

LABEL = 40


def cell(s, fmt="{:.0f}", unit=""):
    """'median [min..max] N=n' of a summary dict, '-' if missing."""
    if not s:
        return "-"
    f = (lambda v: fmt.format(v)) if isinstance(fmt, str) else fmt
    if s["n"] == 1:
        return f"{f(s['median'])}{unit} N=1"
    return f"{f(s['median'])}{unit} [{f(s['min'])}..{f(s['max'])}] N={s['n']}"


def pct(v):
    return f"{100 * v:.1f}%"


def line(label, *parts):
    return f"  {label:<{LABEL}} " + "  ".join(p for p in parts if p)


def _rows(fig):
    return (fig or {}).get("rows", [])


def _skipped(row):
    return line(row["variant"], row["status"]) if row.get("status", "ok") != "ok" else None


def render(results):
    meta, figs = results["meta"], results["figures"]
    out = [f"jsampler benchmarks ({'smoke' if meta['smoke'] else 'full'}) - {meta['date']}",
           f"machine: {meta['machine']['cpu_model']}, {meta['machine']['cpus']} CPUs, kernel "
           f"{meta['machine']['kernel']}; " + "; ".join(f"JDK {k}: {v}" for k, v in meta["jdks"].items()),
           f"other load during the runs (CPU-seconds per second not used by the benchmark): "
           f"{meta.get('other_load', '-')}",
           "each figure: median [min..max] N=repetitions, variants interleaved (order rotated each round)"]

    if "throughput" in figs:
        c = meta["config"]
        out += ["", f"1. Throughput ratio, with profiler / without (BenchOps, 2 threads, ops/s over {c['window']} s "
                    f"after {c['warmup']} s warm-up; paired with the same JDK's baseline of the same round)"]
        for row in _rows(figs["throughput"]):
            out.append(_skipped(row) or _throughput_line(row))
    if "churn" in figs:
        out += ["", "1b. Thread churn (Churn: waves of 8 short-lived threads): threads started per second, ratio"]
        for row in _rows(figs["churn"]):
            if _skipped(row):
                out.append(_skipped(row))
            elif row.get("ratio"):
                out.append(line(row["variant"], "ratio " + cell(row["ratio"], "{:.4f}"),
                                "delivered (process) " + cell(row.get("delivered_process"), pct)))
            else:
                out.append(line(row["variant"], "threads/s " + cell(row["threads_per_s"], "{:,.0f}")))
    if "cost" in figs:
        out += ["", "2. Cost per sample: the agent's handler time (stop line) against stack depth (BenchDeep, "
                    "cpu 1ms), and a bare SIGPROF round trip (bench/sigbench.c) in the same run"]
        for row in _rows(figs["cost"]):
            if _skipped(row):
                out.append(_skipped(row))
            elif "handler_median_ns" in row:
                out.append(line(row["variant"], "median " + cell(row["handler_median_ns"], "{:,.0f}", " ns"),
                                "p99 " + cell(row["handler_p99_ns"], _hist_ns, " ns"),
                                "x tgkill " + cell(row["vs_tgkill"], "{:.2f}")))
            else:
                extra = ("interrupt alone " + cell(row["tick_median_ns"], "{:,.0f}", " ns")) if "tick_median_ns" in \
                    row else ("empty syscall " + cell(row.get("syscall_median_ns"), "{:,.0f}", " ns"))
                out.append(line(row["variant"], "median " + cell(row["median_ns"], "{:,.0f}", " ns"), extra))
        if "throughput" in figs:
            out += ["", "2b. Samples delivered / expected (worker threads' CPU time x rate; the figure 1 runs)"]
            for row in _rows(figs["throughput"]):
                if row.get("status") == "ok" and row.get("profiler") != "none":
                    out.append(line(row["variant"], "workers " + cell(row.get("delivered"), pct),
                                    "process " + cell(row.get("delivered_process"), pct),
                                    "measured interval " + cell(row.get("effective_interval_ms"), "{:.2f}", " ms")))
    if "accuracy" in figs:
        out += ["", "3. Accuracy on CpuSplit: max |sampled share - measured CPU share| over burnA/B/C, in points"]
        for row in _rows(figs["accuracy"]):
            out.append(_skipped(row) or line(row["variant"], "error " + cell(row["error_pts"], "{:.2f}", " pt"),
                                             "samples " + cell(row["burn_samples"], "{:,.0f}"),
                                             "CPU share got " + cell(row.get("utilization"), pct)))
    if "memory" in figs:
        c = meta["config"]
        out += ["", f"4. Memory (BenchOps for {sum(c['memory_seconds'])} s, fixed pre-touched 256 MiB heap), "
                    "MiB, read from /proc near the end of the run"]
        for row in _rows(figs["memory"]):
            if _skipped(row):
                out.append(_skipped(row))
                continue
            out.append(line(row["variant"], "VmHWM " + cell(row["vmhwm_mib"], "{:.1f}"),
                            "VmRSS " + cell(row["vmrss_mib"], "{:.1f}")))
            if "vmhwm_delta_mib" in row:
                out.append(line("  with - without", "VmHWM " + cell(row["vmhwm_delta_mib"], "{:+.1f}"),
                                "VmRSS " + cell(row["vmrss_delta_mib"], "{:+.1f}"),
                                "VmSize " + cell(row["vmsize_delta_mib"], "{:+.1f}")))
                out.append(line("  agent-only anon mappings (by size)",
                                "reserved " + cell(row["agent_only_reserved_mib"], "{:.1f}"),
                                "resident " + cell(row["agent_only_resident_mib"], "{:.1f}"),
                                "libjsampler.so resident " + cell(row["agent_library_rss_mib"], "{:.1f}")))
    if "output" in figs:
        out += ["", "5. Output: time to write 1M samples (jsampler convert of a synthetic 50k-stack profile), "
                    "JFR bytes per sample, flame graph in headless Chromium"]
        for row in _rows(figs["output"]):
            if _skipped(row):
                out.append(_skipped(row))
            elif "wall_ms" in row:
                out.append(line(row["variant"], cell(row["wall_ms"], "{:,.0f}", " ms"),
                                "output " + cell(row["bytes"], lambda v: f"{v / 1e6:.1f}", " MB")))
            elif "bytes_per_sample" in row:
                out.append(line(row["variant"], "file " + cell(row["bytes_per_sample"], "{:.1f}", " B"),
                                "events only " + cell(row["event_bytes_per_sample"], "{:.1f}", " B")))
            elif "html_bytes" in row:
                out.append(line(row["variant"], f"{row['html_bytes'] / 1e6:.1f} MB, {row.get('nodes')} nodes",
                                "ready " + cell(row["ready_ms"], "{:,.0f}", " ms"),
                                "load event " + cell(row["load_event_ms"], "{:,.0f}", " ms")))
    if "startup" in figs:
        out += ["", "6. Start-up and exit (BenchHello): JVM spawn to main, end of main to process exit, ms"]
        for row in _rows(figs["startup"]):
            parts = ["to main " + cell(row["start_to_main_ms"], "{:.0f}"), "exit " + cell(row["exit_ms"], "{:.0f}")]
            if "start_to_main_ms_delta" in row:
                parts += ["delta " + cell(row["start_to_main_ms_delta"], "{:+.0f}") + " / " +
                          cell(row["exit_ms_delta"], "{:+.0f}")]
            out.append(line(row["variant"], *parts))

    notes = [f"{name}: {f['reruns']} run(s) made again, {f['busy_kept']} kept although busy"
             for name, f in figs.items() if f.get("reruns") or f.get("busy_kept")]
    out += ["", "Runs made again because other processes used the CPUs meanwhile: " + ("; ".join(notes) or "none")]
    out += ["", "Goals"]
    width = max((len(g["goal"]) for g in results["goals"]), default=0)
    for g in results["goals"]:
        out.append(f"  {g['status']:<8} {g['goal']:<{width}}  {g['measured']}")
    return "\n".join(out)


def _hist_ns(v):
    """The agent's handler histogram has 25 ns buckets up to 20 us and one overflow bucket above."""
    return ">=20,000" if v >= 20000 else f"{v:,.0f}"


def _throughput_line(row):
    if row.get("profiler") == "none" and not row.get("ratio"):
        return line(row["variant"], "ops/s " + cell(row["ops"], "{:,.0f}"),
                    f"spread {row['noise_pct']:.1f}%" if row.get("noise_pct") is not None else "")
    r = row.get("ratio")
    loss = f"loss {100 * (1 - r['median']):+.2f}%" if r else ""
    eff, cr, h = row.get("effective_interval_ms"), row.get("cpu_ratio"), row.get("handler_median_ns")
    return line(row["variant"], "ratio " + cell(r, "{:.4f}"), loss,
                f"per-CPU-s {cr['median']:.4f}" if cr else "",
                f"interval {eff['median']:.2f} ms" if eff else "",
                f"handler {h['median']:,.0f} ns" if h else "")


# ---------------------------------------------------------------- goals


def _by_name(fig):
    return {r["variant"]: r for r in _rows(fig)}


def _goal(goal, status, measured):
    return {"goal": goal, "status": status, "measured": measured}


def _med(row, key):
    s = (row or {}).get(key)
    return s["median"] if s else None


def evaluate(figs, smoke):
    goals = []
    T = _by_name(figs.get("throughput"))

    def loss(name):
        m = _med(T.get(name), "ratio")
        return None if m is None else 100 * (1 - m)

    for jdk in (17, 25):
        suffix = "" if jdk == 17 else " (JDK 25)"
        aa = T.get(f"JDK {jdk} baseline again (A/A)", {}).get("ratio")
        noise = f"; A/A ratio {cell(aa, '{:.4f}')}" if aa else ""
        for iv, limit in (("10ms", 0.5), ("1ms", 2.0)):
            name = f"jsampler cpu {iv}{suffix}"
            v = loss(name)
            if v is None and jdk != 17:
                continue
            goals.append(_goal(f"throughput loss <= {limit}% at {iv} (cpu engine, JDK {jdk})",
                               "n/a" if v is None else ("PASS" if v <= limit else "MISS"),
                               "-" if v is None else f"{v:.2f}% (ratio {cell(T[name]['ratio'], '{:.4f}')}{noise})"))
    pairs = [("jsampler cpu 10ms", "JDK 17 JFR ExecutionSample 10ms"),
             ("jsampler cpu 1ms", "JDK 17 JFR ExecutionSample 1ms"),
             ("jsampler cpu 10ms (JDK 25)", "JDK 25 JFR ExecutionSample 10ms"),
             ("jsampler cpu 1ms (JDK 25)", "JDK 25 JFR ExecutionSample 1ms"),
             ("jsampler cpu 10ms (JDK 25)", "JDK 25 JFR CPUTimeSample 10ms"),
             ("jsampler cpu 1ms (JDK 25)", "JDK 25 JFR CPUTimeSample 1ms"),
             ("jsampler ctimer 10ms (JDK 25)", "JDK 25 JFR CPUTimeSample 10ms"),
             ("jsampler ctimer 1ms (JDK 25)", "JDK 25 JFR CPUTimeSample 1ms")]
    for ours, theirs in pairs:
        a, b = loss(ours), loss(theirs)
        if a is None or b is None:
            continue
        mine, eff = _med(T.get(ours), "effective_interval_ms"), _med(T.get(theirs), "effective_interval_ms")
        measured = f"{a:.2f}% vs {b:.2f}%"
        if eff and mine:
            measured += f" (measured interval {mine:.2f} vs {eff:.2f} ms)"
        if a < b:
            status = "PASS"
        elif eff and mine and eff > 1.2 * mine:
            status = "n/a"
            measured += ": JFR sampled less often, not the same rate"
        else:
            status = "MISS"
        goals.append(_goal(f"loss below the JDK's JFR: {ours} vs "
                           f"{theirs.replace('JDK 25 ', '').replace('JDK 17 ', '')}", status, measured))

    C = _rows(figs.get("cost"))
    near50 = next((r for r in C if r.get("depth_param") == 46), None)
    tg = next((r for r in C if r.get("mode") == "tgkill"), None)
    if near50 and tg:
        ratio = _med(near50, "vs_tgkill")
        goals.append(_goal("handler median <= 1.5x bare signal round trip at ~50 frames",
                           "n/a" if ratio is None else ("PASS" if ratio <= 1.5 else "MISS"),
                           f"{_med(near50, 'handler_median_ns'):,.0f} ns at {_med(near50, 'frames'):.0f} frames vs "
                           f"{_med(tg, 'median_ns'):,.0f} ns tgkill round trip: x{ratio:.2f}" if ratio else "-"))

    for name in ("jsampler cpu 1ms", "jsampler ctimer 1ms"):
        d = _med(T.get(name), "delivered")
        goals.append(_goal(f">= 98% of expected samples delivered ({name})",
                           "n/a" if d is None else ("PASS" if d >= 0.98 else "MISS"),
                           "-" if d is None else f"{100 * d:.1f}% of worker CPU time / interval"))

    A = _by_name(figs.get("accuracy"))
    for name in ("jsampler cpu 1ms", "jsampler ctimer 1ms"):
        row = A.get(name)
        e, n = _med(row, "error_pts"), _med(row, "burn_samples")
        if e is None:
            goals.append(_goal(f"accuracy error <= 1 point at 1ms, 20k+ samples ({name})", "n/a", "-"))
            continue
        status = ("PASS" if e <= 1.0 else "MISS") if n >= 20000 else "n/a"
        goals.append(_goal(f"accuracy error <= 1 point at 1ms, 20k+ samples ({name})", status,
                           f"{e:.2f} pt with {n:,.0f} samples" + ("" if n >= 20000 else " (too few samples)")))

    M = _by_name(figs.get("memory"))
    row = M.get("jsampler cpu 1ms")
    d = _med(row, "vmhwm_delta_mib")
    if d is not None:
        goals.append(_goal("RSS overhead <= 20 MiB (VmHWM with - without, cpu 1ms)",
                           "PASS" if d <= 20 else "MISS", f"{d:+.1f} MiB (VmRSS {_med(row, 'vmrss_delta_mib'):+.1f})"))

    jfr_row = T.get("jsampler cpu 1ms, JFR output")
    if jfr_row is None or jfr_row.get("status") != "ok":
        goals.append(_goal("agent JFR <= 20 bytes/sample", "PENDING",
                           (jfr_row or {}).get("status", "variant not run")))
    else:
        b = _med(jfr_row, "jfr_bytes_per_sample")
        goals.append(_goal("agent JFR <= 20 bytes/sample", "n/a" if b is None else ("PASS" if b <= 20 else "MISS"),
                           "-" if b is None else f"{b:.1f} bytes/sample (whole file)"))
    if smoke:
        for g in goals:
            g["measured"] += "  [smoke: short runs, indicative only]"
    return goals

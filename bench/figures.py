"""Figures 1-4: throughput, cost per sample (with samples delivered), accuracy, memory.

Each figure function runs its variants interleaved (A B C, B C A, ...), returns {"rows": [...], "records": [...]}:
records are the single runs (all kept in results.json), rows the per-variant summaries the table shows.
"""
import statistics
import subprocess

import variants as vs
from lib import (RUNS, interleave, log, read_collapsed, stdout_fields, stdout_value, summary)


# A run is made again when other processes used more than this many CPUs on average meanwhile (2 CPUs here):
BUSY_2_THREADS = 0.1    # two busy workers: any other load takes CPU from them
BUSY_1_THREAD = 1.0     # one worker: the other CPU may be used without competing with it
BUSY_ACCURACY = 0.2     # shares are robust to mild load; CPU timers are not robust to heavy load


def _split(env, table, smoke):
    """(variants to run, rows for the skipped ones)."""
    active, skipped = [], []
    for v in vs.selected(table, smoke):
        why = vs.skip_reason(env, v)
        if why:
            skipped.append({"variant": v.name, "jdk": v.jdk, "status": "skipped: " + why})
            log(f"  skip {v.name}: {why}")
        else:
            active.append(v)
    return active, skipped


def usable(records):
    """The runs the summaries use: not those kept although other processes were busy meanwhile, unless a variant
    has nothing else (all runs stay in results.json either way, the busy ones marked)."""
    def key(r):
        return r.get("variant"), r.get("jdk"), r.get("depth_param"), r.get("mode")
    clean = {key(r) for r in records if not r.get("busy")}
    return [r for r in records if not r.get("busy") or key(r) not in clean]


def _paired_ratios(records, metric, v, baseline_of):
    """Per round: metric(v) / metric(baseline of the same JDK, same round)."""
    base = {r["round"]: r.get(metric) for r in records if r["variant"] == baseline_of(v) and r["jdk"] == v.jdk}
    out = []
    for r in records:
        if r["variant"] == v.name and r["jdk"] == v.jdk and r.get(metric) and base.get(r["round"]):
            out.append(r[metric] / base[r["round"]])
    return out


def _baseline(v):
    return f"JDK {v.jdk} baseline"


def _samples(env, v, rec, worker_prefix):
    """Samples of the run: all of them, and those of the worker threads (from the threads roots, when known)."""
    total = worker = None
    if v.profiler == "jsampler":
        total = (rec.get("agent") or {}).get("weight")
        if rec.get("profile", "").endswith(".collapsed"):
            stacks = read_collapsed(rec["profile"])
            worker = sum(w for f, w in stacks if f and f[0].startswith("[" + worker_prefix))
    elif v.profiler == "jfr":
        # The JDK samples Java threads only; here those are the workers (main sleeps), so all = workers.
        total = worker = vs.jfr_samples(rec, v)
    return total, worker


# ---------------------------------------------------------------- figure 1: throughput


def throughput(env, cfg):
    active, skipped = _split(env, vs.THROUGHPUT, cfg.smoke)

    def one(v, r, slot):
        rec, p = vs.launch(env, v, "BenchOps", [cfg.warmup, cfg.window, 2], vs.run_name("tput", v, r),
                           timeout=cfg.warmup + cfg.window + 120)
        rec["ops"] = stdout_value(p.stdout, "OPS")
        rec["cpuops"] = stdout_value(p.stdout, "CPUOPS")
        rec["worker"] = stdout_fields(p.stdout, "CPU")
        _delivery(env, v, rec, "bench-worker-", rec["worker"].get("worker_ms"))
        log(f"  [tput r{r}] {v.name:36s} ops/s={rec['ops'] or 0:>12,.0f}"
            + (f"  delivered={100 * rec['delivered']:.1f}%" if rec.get("delivered") else ""))
        return rec

    records = interleave(active, cfg.rounds, one, max_other=BUSY_2_THREADS)
    used = usable(records)
    rows = []
    for v in active:
        mine = [r for r in used if r["variant"] == v.name and r["jdk"] == v.jdk]
        row = {"variant": v.name, "jdk": v.jdk, "profiler": v.profiler, "event": v.event, "interval": v.interval,
               "output": v.output, "status": "ok", "ops": summary([r.get("ops") for r in mine]),
               "cpu_ops": summary([r.get("cpuops") for r in mine])}
        if v.name != _baseline(v):
            row["ratio"] = summary(_paired_ratios(used, "ops", v, _baseline))
            row["cpu_ratio"] = summary(_paired_ratios(used, "cpuops", v, _baseline))
        if v.profiler != "none":
            row.update(_delivery_rows(mine))
        if v.profiler == "jsampler":
            row["handler_median_ns"] = summary([(r.get("agent") or {}).get("handler_median") for r in mine])
            row["handler_p99_ns"] = summary([(r.get("agent") or {}).get("handler_p99") for r in mine])
        if v.output == "jfr" or v.profiler == "jfr":
            row["jfr_bytes_per_sample"] = summary([_bytes_per_sample(r, v) for r in mine])
            row["jfr_event_bytes_per_sample"] = summary([_bytes_per_sample(r, v, events_only=True) for r in mine])
        if v.name == _baseline(v):
            ops = row["ops"]
            row["noise_pct"] = 100 * (ops["max"] - ops["min"]) / ops["median"] if ops else None
        rows.append(row)
    return {"rows": rows + skipped, "records": records}


def _delivery(env, v, rec, worker_prefix, worker_ms):
    """Samples delivered against expected (CPU time x rate): worker threads and whole process."""
    if v.profiler == "none" or not v.interval_ms:
        return
    total, worker = _samples(env, v, rec, worker_prefix)
    rec["samples"], rec["worker_samples"] = total, worker
    if worker is not None and worker_ms:
        rec["expected_worker_samples"] = worker_ms / v.interval_ms
        rec["delivered"] = worker / rec["expected_worker_samples"]
        rec["effective_interval_ms"] = worker_ms / worker if worker else None
    cpu_ms = rec["run"]["cpu_s"] * 1000
    if total is not None and cpu_ms:
        rec["delivered_process"] = total / (cpu_ms / v.interval_ms)


def _delivery_rows(mine):
    return {"delivered": summary([r.get("delivered") for r in mine]),
            "delivered_process": summary([r.get("delivered_process") for r in mine]),
            "effective_interval_ms": summary([r.get("effective_interval_ms") for r in mine]),
            "samples": summary([r.get("samples") for r in mine])}


def _bytes_per_sample(rec, v, events_only=False):
    s = rec.get("jfr_summary")
    n = vs.jfr_samples(rec, v)
    if not s or not n:
        return None
    if events_only:
        event = v.event if v.profiler == "jfr" else "jdk.ExecutionSample"
        return s[event][1] / n
    return rec["profile_bytes"] / n


# ---------------------------------------------------------------- figure 1b: thread churn


def churn(env, cfg):
    active, skipped = _split(env, vs.CHURN, cfg.smoke)

    def one(v, r, slot):
        rec, p = vs.launch(env, v, "Churn", [cfg.churn_seconds, 8], vs.run_name("churn", v, r),
                           timeout=cfg.churn_seconds * 3 + 120)
        done = stdout_value(p.stdout, "Churn done")
        rec["threads_per_s"] = done / cfg.churn_seconds if done else None
        _delivery(env, v, rec, "churn-", None)
        log(f"  [churn r{r}] {v.name:36s} threads/s={rec['threads_per_s'] or 0:>8,.0f}")
        return rec

    records = interleave(active, cfg.churn_rounds, one, max_other=BUSY_2_THREADS)
    used = usable(records)
    rows = []
    for v in active:
        mine = [r for r in used if r["variant"] == v.name]
        row = {"variant": v.name, "jdk": v.jdk, "status": "ok", "threads_per_s": summary([r.get("threads_per_s")
                                                                                          for r in mine])}
        if v.profiler != "none":
            row["ratio"] = summary(_paired_ratios(used, "threads_per_s", v, _baseline))
            row.update(_delivery_rows(mine))
        if v.profiler == "jsampler":
            row["errors"] = sum(len((r.get("agent") or {}).get("errors", [])) for r in mine)
        rows.append(row)
    return {"rows": rows + skipped, "records": records}


# ---------------------------------------------------------------- figure 2: cost per sample


def cost(env, cfg):
    items = [("deep", d) for d in vs.DEPTHS]
    if env.sigbench:
        items += [("sig", "timer"), ("sig", "tgkill")]

    def one(item, r, slot):
        kind, arg = item
        if kind == "sig":
            name = f"cost-sigbench-{arg}-r{r}"
            d = RUNS / name
            d.mkdir(parents=True, exist_ok=True)
            out = subprocess.run([str(env.sigbench), arg, str(cfg.sig_seconds), "1000"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True).stdout
            (d / "stdout.txt").write_text(out)
            f = stdout_fields(out, "SIGBENCH")
            log(f"  [cost r{r}] sigbench {arg:6s} median={f.get('median_ns', 0):.0f} ns")
            return {"variant": f"sigbench {arg}", "kind": "sigbench", "mode": arg, "sigbench": f,
                    "cmd": f"{env.sigbench} {arg} {cfg.sig_seconds} 1000"}
        v = vs.DEEP
        rec, p = vs.launch(env, v, "BenchDeep", [cfg.deep_seconds, arg, 1], vs.run_name("cost", v, r, f"d{arg}"),
                           timeout=cfg.deep_seconds + 120)
        rec.update({"kind": "deep", "depth_param": arg, "frames": _deep_frames(rec)})
        a = rec.get("agent") or {}
        log(f"  [cost r{r}] depth {rec['frames']} frames: handler median={a.get('handler_median')} ns "
            f"p99={a.get('handler_p99')} ns")
        return rec

    records = interleave(items, cfg.cost_rounds, one, max_other=BUSY_1_THREAD)
    used = usable(records)
    rows = []
    tg = {r["round"]: r["sigbench"].get("median_ns") for r in used if r.get("mode") == "tgkill"}
    tm = {r["round"]: r["sigbench"].get("median_ns") for r in used if r.get("mode") == "timer"}
    for d in vs.DEPTHS:
        mine = [r for r in used if r.get("depth_param") == d]
        med = [(r.get("agent") or {}).get("handler_median") for r in mine]
        rows.append({"variant": f"handler, {statistics.median([r['frames'] or 0 for r in mine]):.0f} frames",
                     "depth_param": d, "frames": summary([r["frames"] for r in mine]), "status": "ok",
                     "handler_median_ns": summary(med),
                     "handler_p99_ns": summary([(r.get("agent") or {}).get("handler_p99") for r in mine]),
                     "vs_tgkill": summary([m / tg[r["round"]] for m, r in zip(med, mine) if m and tg.get(r["round"])]),
                     "vs_timer": summary([m / tm[r["round"]] for m, r in zip(med, mine) if m and tm.get(r["round"])])})
    for mode in ("timer", "tgkill"):
        mine = [r["sigbench"] for r in used if r.get("mode") == mode]
        if mine:
            row = {"variant": f"bare signal round trip ({mode})", "mode": mode, "status": "ok",
                   "median_ns": summary([m.get("median_ns") for m in mine])}
            if mode == "timer":
                row["tick_median_ns"] = summary([m.get("tick_median_ns") for m in mine])
            else:
                row["syscall_median_ns"] = summary([m.get("syscall_median_ns") for m in mine])
            rows.append(row)
    if not env.sigbench:
        rows.append({"variant": "bare signal round trip", "status": "skipped: sigbench did not build"})
    return {"rows": rows, "records": records}


def _deep_frames(rec):
    """Median Java frames (weighted) of the samples that reached BenchDeep.bottom."""
    if not rec.get("profile"):
        return None
    depths = []
    for frames, w in read_collapsed(rec["profile"]):
        if "BenchDeep.bottom" in frames:
            java = [f for f in frames if not f.startswith("[")]
            depths.append((len(java), w))
    if not depths:
        return None
    depths.sort()
    half, acc = sum(w for _, w in depths) / 2, 0
    for n, w in depths:
        acc += w
        if acc >= half:
            return n
    return depths[-1][0]


# ---------------------------------------------------------------- figure 3: accuracy

BURN = ["CpuSplit.burnA", "CpuSplit.burnB", "CpuSplit.burnC"]


def accuracy(env, cfg):
    active, skipped = _split(env, vs.ACCURACY, cfg.smoke)
    secs, min_cpu = cfg.accuracy_args

    def one(v, r, slot):
        rec, p = vs.launch(env, v, "CpuSplit", [secs, 2, min_cpu], vs.run_name("acc", v, r),
                           timeout=3 * secs + 120)
        truth = stdout_fields(p.stdout, "TRUTH")
        rec["truth"] = truth
        try:
            stacks = vs.sample_stacks(env, v, rec)
        except RuntimeError as e:
            log(f"  ! {v.name}: {e}")
            stacks = None
        if not stacks or not truth:
            return rec
        counts = [0, 0, 0]
        for frames, w in stacks:
            for i, m in enumerate(BURN):
                if m in frames:
                    counts[i] += w
                    break
        n = sum(counts)
        rec["burn_samples"] = n
        if n:
            rec["sampled_pct"] = {m: 100 * c / n for m, c in zip(BURN, counts)}
            rec["truth_pct"] = {m: 100 * truth[m.split(".")[1]] for m in BURN}
            rec["error_pts"] = max(abs(rec["sampled_pct"][m] - rec["truth_pct"][m]) for m in BURN)
            rec["utilization"] = truth["cpu_ms"] / (truth["threads"] * truth["wall_ms"])
            if v.interval_ms:
                rec["delivered"] = n / (truth["cpu_ms"] / v.interval_ms)
        log(f"  [acc r{r}] {v.name:36s} error={rec.get('error_pts', float('nan')):.2f} pt  samples={n}")
        return rec

    records = interleave(active, cfg.accuracy_rounds, one, max_other=BUSY_ACCURACY)
    used = usable(records)
    rows = []
    for v in active:
        mine = [r for r in used if r["variant"] == v.name and r["jdk"] == v.jdk]
        rows.append({"variant": v.name, "jdk": v.jdk, "profiler": v.profiler, "event": v.event, "status": "ok",
                     "error_pts": summary([r.get("error_pts") for r in mine]),
                     "burn_samples": summary([r.get("burn_samples") for r in mine]),
                     "delivered": summary([r.get("delivered") for r in mine]),
                     "utilization": summary([r.get("utilization") for r in mine])})
    return {"rows": rows + skipped, "records": records}


# ---------------------------------------------------------------- figure 4: memory


def memory(env, cfg):
    active, skipped = _split(env, vs.MEMORY, cfg.smoke)
    warm, window = cfg.memory_seconds

    def one(v, r, slot):
        rec, p = vs.launch(env, v, "BenchOps", [warm, window, 2], vs.run_name("mem", v, r),
                           timeout=warm + window + 120, poll=True, smaps_after=warm + window - 2)
        rec["status_kib"] = p.status
        rec["smaps"] = _smaps_digest(p.smaps, env.agent.name)
        log(f"  [mem r{r}] {v.name:36s} VmHWM={p.status.get('VmHWM', 0) / 1024:.1f} MiB "
            f"VmRSS={p.status.get('VmRSS', 0) / 1024:.1f} MiB")
        return rec

    records = interleave(active, cfg.memory_rounds, one)
    rows = []
    base = {r["round"]: r for r in records if r["profiler"] == "none"}
    for v in active:
        mine = [r for r in records if r["variant"] == v.name]
        row = {"variant": v.name, "jdk": v.jdk, "status": "ok",
               "vmhwm_mib": summary([r["status_kib"].get("VmHWM", 0) / 1024 for r in mine]),
               "vmrss_mib": summary([r["status_kib"].get("VmRSS", 0) / 1024 for r in mine]),
               "vmsize_mib": summary([r["status_kib"].get("VmSize", 0) / 1024 for r in mine])}
        if v.profiler != "none":
            pairs = [(r, base[r["round"]]) for r in mine if r["round"] in base]
            for key in ("VmHWM", "VmRSS", "VmSize"):
                row[key.lower() + "_delta_mib"] = summary([(a["status_kib"].get(key, 0) - b["status_kib"].get(key, 0))
                                                           / 1024 for a, b in pairs])
            extra = [_agent_only_mappings(a["smaps"], b["smaps"]) for a, b in pairs]
            row["agent_only_mappings"] = extra[0] if extra else None
            row["agent_only_reserved_mib"] = summary([e["size_kib"] / 1024 for e in extra])
            row["agent_only_resident_mib"] = summary([e["rss_kib"] / 1024 for e in extra])
            row["agent_library_rss_mib"] = summary([r["smaps"]["lib_rss_kib"] / 1024 for r in mine])
        rows.append(row)
    return {"rows": rows + skipped, "records": records}


def _smaps_digest(maps, libname):
    """What the memory figure needs from one smaps reading: the agent library, and the anonymous mappings."""
    lib = [m for m in maps if m["path"].endswith("/" + libname)]
    anon = [[m["size_kib"], m["rss_kib"]] for m in maps if not m["path"] or m["path"].startswith("[anon")]
    return {"lib_size_kib": sum(m["size_kib"] for m in lib), "lib_rss_kib": sum(m["rss_kib"] for m in lib),
            "anon": anon, "mappings": len(maps)}


def _agent_only_mappings(with_agent, without):
    """Anonymous mappings with no counterpart of about the same size (within 5%) without the agent.

    A heuristic: malloc arenas and thread stacks vary a little in size from run to run, so they are matched with a
    tolerance; what remains is mostly the agent's own (its call-trace store is the largest).
    """
    pool = sorted(size for size, _ in without["anon"])
    only = []
    for size, rss in sorted(with_agent["anon"], reverse=True):
        best = min(range(len(pool)), key=lambda i: abs(pool[i] - size), default=None)
        if best is not None and abs(pool[best] - size) <= max(8, 0.05 * size):
            pool.pop(best)
        else:
            only.append([size, rss])
    big = [m for m in only if m[0] >= 1024]
    return {"count": len(only), "size_kib": sum(m[0] for m in only), "rss_kib": sum(m[1] for m in only),
            "largest": big[:8]}

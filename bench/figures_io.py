"""Figures 5 and 6: output cost (JFR bytes per sample, time to write 1M samples, the flame graph in a browser) and
JVM start-up / exit with and without the agent."""
import json
import random
import subprocess
from pathlib import Path

import variants as vs
from figures import usable
from lib import CLASSES, OUT, ROOT, interleave, log, run, stdout_value, summary

SYNTH = OUT / "synthetic"
BROWSER_DIR = ROOT / "java-test-harness" / "browser"


# ---------------------------------------------------------------- synthetic profiles


def synthetic_1m(path, stacks=50_000, seed=42):
    """`stacks` distinct stacks, 8..40 frames from a pool of 4,000 method names, total weight 1,000,000."""
    rnd = random.Random(seed)
    pool = [f"com.example.p{i % 40}.Class{i % 700}.method{i}" for i in range(4000)]
    weights = [1] * stacks
    for _ in range(1_000_000 - stacks):
        weights[int(rnd.paretovariate(1.2)) % stacks] += 1
    seen = set()
    with open(path, "w") as f:
        for i in range(stacks):
            while True:
                frames = ["java.lang.Thread.run", "com.example.Main.main"] + \
                         [rnd.choice(pool) for _ in range(rnd.randint(6, 38))]
                key = ";".join(frames)
                if key not in seen:
                    seen.add(key)
                    break
            f.write(f"{key} {weights[i]}\n")


def synthetic_100k_frames(path):
    """100,000 distinct leaf frames under 1,000 classes in 100 packages (>100k nodes in the flame graph)."""
    with open(path, "w") as f:
        for i in range(100_000):
            f.write(f"bench.Main.main;bench.p{i % 100}.C{i % 1000}.run;bench.leaf.L{i}.work {1 + i % 7}\n")


# ---------------------------------------------------------------- figure 5: output


def output(env, cfg, throughput_rows):
    SYNTH.mkdir(parents=True, exist_ok=True)
    src = SYNTH / "1m.collapsed"
    if not src.is_file():
        synthetic_1m(src)
    formats = [("collapsed", "out.collapsed", []), ("html", "out.html", []), ("flat --top 1 (read only)", "out.txt",
                                                                                 ["--top", "1"])]
    rows, records = [], []
    jfr_why = _cli_writes_jfr(env)
    if jfr_why is None:
        formats.append(("jfr", "out.jfr", ["--format", "jfr"]))
    else:
        rows.append({"variant": "write 1M samples: jfr", "status": "skipped: " + jfr_why})

    def one(fmt, r, slot):
        label, target, extra = fmt
        out = SYNTH / target
        p = run([str(env.cli), "convert"] + extra + [str(src), str(out)], f"out-{target.replace('.', '-')}-r{r}",
                timeout=600)
        log(f"  [out r{r}] convert 1M samples -> {label}: {p.wall_s * 1000:.0f} ms")
        return {"variant": f"write 1M samples: {label}", "wall_ms": p.wall_s * 1000, "ok": p.rc == 0,
                "bytes": out.stat().st_size if out.is_file() else None, "run": p.to_json()}

    records += interleave(formats, cfg.out_reps, one, max_other=1.0)
    for label, _, _ in formats:
        mine = [r for r in records if r["variant"] == f"write 1M samples: {label}" and r["ok"]]
        rows.append({"variant": f"write 1M samples: {label}", "status": "ok" if mine else "failed",
                     "wall_ms": summary([r["wall_ms"] for r in mine]), "bytes": summary([r["bytes"] for r in mine])})

    # JFR bytes per sample: from the throughput runs (same workload, same run length).
    for row in throughput_rows:
        if row.get("output") == "jfr" or row.get("profiler") == "jfr":
            rows.append({"variant": f"JFR bytes/sample: {row['variant']}", "status": row["status"],
                         "bytes_per_sample": row.get("jfr_bytes_per_sample"),
                         "event_bytes_per_sample": row.get("jfr_event_bytes_per_sample")})

    rows.append(_browser(env, cfg, records))
    return {"rows": rows, "records": records}


def _cli_writes_jfr(env):
    """None if `jsampler convert --format jfr` works, else why not."""
    tiny = SYNTH / "tiny.collapsed"
    tiny.write_text("a.A.main;a.A.run 3\n")
    out = SYNTH / "tiny.jfr"
    out.unlink(missing_ok=True)
    r = subprocess.run([str(env.cli), "convert", "--format", "jfr", str(tiny), str(out)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode == 0 and out.is_file() and out.stat().st_size > 0:
        return None
    return "the CLI does not write JFR (" + (r.stdout.strip().splitlines() or ["exit %d" % r.returncode])[0] + ")"


def _browser(env, cfg, records):
    """HTML size and load time (navigation to rendered) in headless Chromium for a 100k-frame profile."""
    name = "HTML 100k frames in headless Chromium"
    if not env.node or not Path("/usr/bin/chromium").is_file():
        return {"variant": name, "status": "skipped: node or /usr/bin/chromium missing"}
    if not (BROWSER_DIR / "node_modules" / "playwright-core").is_dir():
        return {"variant": name, "status": "skipped: playwright-core not installed (run make browser-test once)"}
    src, html = SYNTH / "100k.collapsed", SYNTH / "100k.html"
    synthetic_100k_frames(src)
    c = run([str(env.cli), "convert", str(src), str(html)], "out-html-100k", timeout=300)
    if c.rc != 0:
        return {"variant": name, "status": "failed: convert exit %d" % c.rc}
    p = run([env.node, str(ROOT / "bench" / "html_load.mjs"), str(html), str(cfg.browser_loads)], "out-browser",
            timeout=600)
    try:
        res = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"variant": name, "status": "failed: " + (p.stderr.strip().splitlines() or ["no output"])[-1]}
    records.append({"variant": name, "result": res, "run": p.to_json(), "convert_ms": c.wall_s * 1000})
    log(f"  [out] 100k-frame page: {html.stat().st_size / 1e6:.1f} MB, ready in {res['ready_ms']} ms")
    return {"variant": name, "status": "ok", "html_bytes": html.stat().st_size, "convert_ms": c.wall_s * 1000,
            "ready_ms": summary(res["ready_ms"]), "load_event_ms": summary(res["load_ms"]),
            "nodes": res.get("nodes")}


# ---------------------------------------------------------------- figure 6: start-up and exit


def startup(env, cfg):
    active = [v for v in vs.selected(vs.STARTUP, cfg.smoke) if vs.skip_reason(env, v) is None]

    def one(v, r, slot):
        rec, p = vs.launch(env, v, "BenchHello", [], vs.run_name("startup", v, r), extra_agent="", timeout=120)
        start, end = stdout_value(p.stdout, "MAIN_START_NS"), stdout_value(p.stdout, "MAIN_END_NS")
        if start and end:
            rec["start_to_main_ms"] = (start - p.spawn_ns) / 1e6
            rec["exit_ms"] = (p.end_ns - end) / 1e6
        rec["total_ms"] = p.wall_s * 1000
        log(f"  [startup r{r}] {v.name:30s} start-to-main={rec.get('start_to_main_ms', 0):.0f} ms "
            f"exit={rec.get('exit_ms', 0):.0f} ms")
        return rec

    records = interleave(active, cfg.startup_rounds, one, max_other=0.2)
    used = usable(records)
    rows = []
    for v in active:
        mine = [r for r in used if r["variant"] == v.name and r["jdk"] == v.jdk]
        row = {"variant": v.name, "jdk": v.jdk, "status": "ok"}
        for k in ("start_to_main_ms", "exit_ms", "total_ms"):
            row[k] = summary([r.get(k) for r in mine])
        if v.profiler != "none":
            base = {r["round"]: r for r in used if r["profiler"] == "none" and r["jdk"] == v.jdk}
            for k in ("start_to_main_ms", "exit_ms"):
                row[k + "_delta"] = summary([r[k] - base[r["round"]][k] for r in mine
                                             if r.get(k) is not None and base.get(r["round"], {}).get(k) is not None])
        rows.append(row)
    return {"rows": rows, "records": records}


def classes_ok():
    return (CLASSES / "BenchHello.class").is_file()

"""The JDK's Flight Recorder as a comparison point: .jfc files, `jfr summary` counts, stacks from recordings.

The .jfc files are generated so that a recording holds only the sampling event under test (plus the metadata and
constant pools every recording has): jdk.ExecutionSample with a period, or on JDKs that offer it
jdk.CPUTimeSample with a throttle given as a CPU-time period (and jdk.CPUTimeSamplesLost to see what it drops).
"""
import collections
import json
import re
import subprocess
from pathlib import Path

from lib import OUT, run_text


def jfc_path(event, interval):
    """Write (once) and return a .jfc enabling only `event` at `interval` (e.g. '1ms')."""
    d = OUT / "jfc"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{event.replace('jdk.', '')}-{interval}.jfc"
    if event == "jdk.ExecutionSample":
        settings = f'      <setting name="enabled">true</setting>\n      <setting name="period">{interval}</setting>\n'
        extra = ""
    elif event == "jdk.CPUTimeSample":
        settings = (f'      <setting name="enabled">true</setting>\n      <setting name="throttle">{interval}</setting>\n'
                    '      <setting name="stackTrace">true</setting>\n')
        extra = ('  <event name="jdk.CPUTimeSamplesLost">\n      <setting name="enabled">true</setting>\n'
                 '  </event>\n')
    else:
        raise ValueError(event)
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n'
                    '<configuration version="2.0" label="jsampler-bench" description="only '
                    f'{event} at {interval}" provider="jsampler bench">\n'
                    f'  <event name="{event}">\n{settings}  </event>\n{extra}</configuration>\n')
    return path


def recording_option(event, interval, jfr_file):
    return f"-XX:StartFlightRecording=settings={jfc_path(event, interval)},filename={jfr_file},dumponexit=true"


_offered = {}


def offers(env, jdk, event):
    """Whether this JDK's JFR knows the event (`jfr metadata`)."""
    key = (jdk, event)
    if key not in _offered:
        _offered[key] = jdk in env.jdks and f"@Name(\"{event}\")" in run_text([env.jfr(jdk), "metadata"])
    return _offered[key]


def summary(env, jdk, path):
    """{event type: (count, bytes)} from `jfr summary FILE`; {} if the file cannot be read."""
    if not Path(path).is_file():
        return {}
    text = run_text([env.jfr(jdk), "summary", str(path)])
    out = {}
    for m in re.finditer(r"^\s*(jdk\.\w+)\s+(\d+)\s+(\d+)\s*$", text, re.M):
        out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


def _frame_name(frame):
    method = frame.get("method") or {}
    cls = ((method.get("type") or {}).get("name") or "").replace("/", ".")
    name = method.get("name") or ""
    return f"{cls}.{name}" if cls else name


def stacks(env, jdk, path, events, depth=8):
    """[(frames root first, 1)] per sample event in the recording, read with `jfr print --json`.

    Only the top `depth` frames are kept (enough to see the burn methods of CpuSplit, which are leaves). For the
    agent's own recordings `jsampler convert` would do as well once it reads JFR; `jfr print` reads both.
    """
    r = subprocess.run([env.jfr(jdk), "print", "--json", "--stack-depth", str(depth), "--events", ",".join(events),
                        str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"jfr print failed: {r.stderr.strip()[:300]}")
    doc = json.loads(r.stdout)
    counts = collections.Counter()
    for ev in doc["recording"]["events"]:
        trace = ev["values"].get("stackTrace") or {}
        frames = tuple(_frame_name(f) for f in reversed(trace.get("frames") or []))
        counts[frames] += 1
    return [(list(k), n) for k, n in counts.items()]

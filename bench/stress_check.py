"""stress_check.py: every output of a stress run checked (bench/stress.py).

  .jfr      the JDK's parser (JfrTally: jdk.jfr.consumer.RecordingFile, one JVM for every file) reads it whole, and
            `jsampler convert --event cpu|wall|alloc|lock` gives the same totals (samples, wall samples, bytes, ns);
            a sample of the files (the first of each source, then every `jfr_cli_every`-th) also through the JDK's
            `jfr summary`, whose event counts must equal the parser's
  .collapsed  every line `frames count`
  .txt      the flat profile: its header, its rows
  .tree     the call tree: its header, its rows, the top-level totals adding up to the header's total
  .html     the flame graph: a complete page whose data is a JSON object with a total
  .pb.gz    pprof: read by `jsampler convert`; a sample also by `go tool pprof -raw`

Anything else in an output folder (a temporary file left behind) is an error."""
import json
import os
import re
import select
import subprocess
from pathlib import Path

KINDS = ("cpu", "wall", "alloc", "lock")
TALLY_WAIT_S = 300  # the longest the JDK's parser may take over one recording
ROW_FLAT = re.compile(r"^\s*\d+\s+[\d.]+%\s+\d+\s+[\d.]+%\s+\S.*$")
ROW_TREE = re.compile(r"^\s*[\d.]+%\s+(\d+)\s+(\d+)  ( *)(\S.*)$")
HEADER = re.compile(r"^Total: (\d+) (\S+) in (\d+) stacks$")


class Checker:
    def __init__(self, java_home, cli, classes, jfr_cli_every=25, go_every=10):
        self.java_home, self.cli = str(java_home), str(cli)
        self.jfr_cli_every, self.go_every = jfr_cli_every, go_every
        self.classes = classes
        self.start_tally()
        self.seen = {}          # source -> files checked
        self.counts = {}        # kind of file -> checked
        self.jfr_cli_runs = 0
        self.go_runs = 0
        self.samples = {k: 0 for k in KINDS}

    def close(self):
        if self.tally.poll() is None:
            self.tally.stdin.close()
            self.tally.wait(60)

    def check(self, path, source):
        """None if path is a valid output, else why not."""
        path = Path(path)
        n = self.seen.get(source, 0)
        self.seen[source] = n + 1
        name = path.name
        kind = next((k for k in (".jfr", ".collapsed", ".txt", ".tree", ".html", ".pb.gz") if name.endswith(k)), None)
        if kind is None:
            return "not an output of any configuration (a temporary file left behind?)"
        self.counts[kind] = self.counts.get(kind, 0) + 1
        try:
            if kind == ".jfr":
                return self.jfr(path, n % self.jfr_cli_every == 0)
            text = path.read_text(errors="replace") if kind != ".pb.gz" else ""
            if kind == ".collapsed":
                return collapsed(text)
            if kind == ".txt":
                return flat(text)
            if kind == ".tree":
                return tree(text)
            if kind == ".html":
                return html(text)
            return self.pprof(path, n % self.go_every == 0)
        except (OSError, ValueError, subprocess.SubprocessError) as e:
            return f"{type(e).__name__}: {e}"

    def convert_total(self, args):
        r = subprocess.run([self.cli, "convert"] + args + ["-", "--format", "collapsed"], capture_output=True,
                           text=True, timeout=600)
        if r.returncode == 3:
            return 0, None  # no event of that kind
        if r.returncode != 0:
            return None, f"jsampler convert {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()[:300]}"
        why = collapsed(r.stdout)
        if why:
            return None, f"jsampler convert {' '.join(args)} wrote a bad profile: {why}"
        return sum(int(l.rpartition(" ")[2]) for l in r.stdout.splitlines() if l), None

    def start_tally(self):
        self.tally = subprocess.Popen([f"{self.java_home}/bin/java", "-Xmx512m", "-cp", str(self.classes), "JfrTally"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def jfr(self, path, with_cli):
        self.tally.stdin.write(f"{path}\n")
        self.tally.stdin.flush()
        # The JDK's parser answers one line per file; one that never answers (it once spun for two hours on the
        # recording of a JVM that had crashed) is a finding, not a reason to hang the run: it is killed and restarted.
        ready, _, _ = select.select([self.tally.stdout], [], [], TALLY_WAIT_S)
        if not ready:
            self.tally.kill()
            self.tally.wait(60)
            self.start_tally()
            return f"the JDK's parser gave no answer in {TALLY_WAIT_S} s"
        line = self.tally.stdout.readline().strip()
        if not line:
            return "JfrTally ended"
        if line.startswith("ERR "):
            return "the JDK's parser: " + line[4 + len(str(path)) + 1:]
        fields = dict(kv.split("=", 1) for kv in line[3 + len(str(path)) + 1:].split(" "))
        jdk = {k: int(fields[k]) for k in KINDS}
        types = dict((t.rsplit(":", 1)[0], int(t.rsplit(":", 1)[1])) for t in fields["types"].split(",") if t)
        for k in KINDS:
            ours, err = self.convert_total(["--event", k, str(path)])
            if err:
                return err
            if ours != jdk[k]:
                return f"{k}: jsampler convert reads {ours}, the JDK's parser {jdk[k]} (types {types})"
            self.samples[k] += ours
        if with_cli:
            self.jfr_cli_runs += 1
            r = subprocess.run([f"{self.java_home}/bin/jfr", "summary", str(path)], capture_output=True, text=True,
                               timeout=600)
            if r.returncode != 0 or r.stderr.strip():
                return f"jfr summary: exit {r.returncode}: {r.stderr.strip()[:300]}"
            listed = {m.group(1): int(m.group(2)) for m in re.finditer(r"(?m)^\s*(\S+)\s+(\d+)\s+\d+\s*$", r.stdout)}
            for t, c in types.items():
                if listed.get(t) != c:
                    return f"jfr summary counts {listed.get(t)} {t}, the parser {c}"
        return None

    def pprof(self, path, with_go):
        total, err = self.convert_total([str(path)])
        if err:
            return err
        if with_go:
            self.go_runs += 1
            r = subprocess.run(["go", "tool", "pprof", "-raw", str(path)], capture_output=True, text=True,
                               timeout=600, env=dict(os.environ, HOME=os.environ.get("HOME", "/tmp")))
            if r.returncode != 0 or "Samples:" not in r.stdout:
                return f"go tool pprof -raw: exit {r.returncode}: {r.stderr.strip()[:300]}"
        return None


def collapsed(text):
    for i, line in enumerate(text.splitlines()):
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            return f"line {i + 1} is not 'frames count': {line[:200]!r}"
    return None if not text or text.endswith("\n") else "no newline at the end"


def flat(text):
    lines = [l for l in text.splitlines() if not l.startswith("#")]
    if not lines or not HEADER.match(lines[0]):
        return f"no 'Total: N UNIT in M stacks' header: {lines[:1]!r}"
    rows = [l for l in lines[1:] if ROW_FLAT.match(l)]
    total = int(HEADER.match(lines[0]).group(1))
    if total > 0 and not rows:
        return "a total but no rows"
    return None if text.endswith("\n") else "no newline at the end"


def tree(text):
    lines = [l for l in text.splitlines() if not l.startswith("#")]
    if not lines or not HEADER.match(lines[0]):
        return f"no 'Total: N UNIT in M stacks' header: {lines[:1]!r}"
    total = int(HEADER.match(lines[0]).group(1))
    top = 0
    for line in lines[1:]:
        m = ROW_TREE.match(line)
        if m and not m.group(3):
            top += int(m.group(1))
        elif m is None and line.strip() and not line.lstrip().startswith("total%"):
            return f"not a tree row: {line[:200]!r}"
    if top != total:
        return f"the top-level totals add up to {top}, the header says {total}"
    return None


def html(text):
    if not text.startswith("<!DOCTYPE html>") or not text.rstrip().endswith("</html>"):
        return "not a complete page"
    m = re.search(r'<script id="fg-data" type="application/json">(.*?)</script>', text, re.S)
    if not m:
        return "no fg-data"
    data = json.loads(m.group(1))
    if not isinstance(data, dict) or not isinstance(data.get("total"), int) or data["total"] < 0:
        return f"fg-data without a total: {str(data)[:200]}"
    return None

#!/usr/bin/python3
"""pprof_tool.py - the checks pprof_check.sh makes on pprof files, with real readers.

  raw FILE TYPE        `go tool pprof -raw -symbolize=none FILE` (names as written: not demangled again), the values of sample type TYPE, as collapsed stacks (root first,
                       a location's inlined lines caller first, names without lines), stacks summed, sorted
  oap FILE PYDIR       FILE parsed by protobuf (Python, from proto/pprof/profile.proto compiled into PYDIR) and
                       built into a tree as SkyWalking's OAP builds it: location and function found by position
                       (id - 1), 1 added per Sample message, Sample.value never read, frames "function:line";
                       prints the tree's leaf counts as collapsed stacks, and to stderr the Sample messages
  kinds FILE PAGE      the frame kinds `go tool pprof -raw FILE` shows (each location's mapping) against the kinds of
                       the same names in flame graph PAGE: each native, C++ (libjvm), kernel and error frame must have
                       its kind among those the page gives its name (Java kinds may differ: see jfr_check.sh; the JFR reader makes a
                       bracketed name without a class, "[libc.so.6]", an error frame; names the page lacks are
                       counted), and there must be native ones
  shares A B [N]       the N hottest methods of collapsed file A (by total share, then self share) against B: exits
                       1 when a share differs by more than 0.5 point or a total differs; prints the largest gap
"""
import collections
import gzip
import json
import re
import subprocess
import sys

# jsampler's mapping names and the frame kinds (js_frame_type) they mark
KINDS = {"[interpreted]": 0, "[jit]": 1, "[inlined]": 2, "[native]": 3, "[jvm]": 4, "[kernel.kallsyms]": 5,
         "[c1]": 6, "[error]": 8}


def go_raw(path, want_type):
    out = subprocess.run(["go", "tool", "pprof", "-raw", "-symbolize=none", path], capture_output=True, text=True)
    if out.returncode != 0 or out.stderr.strip():
        sys.exit("go tool pprof -raw %s: exit %d: %s" % (path, out.returncode, out.stderr.strip()))
    lines = out.stdout.splitlines()
    i = lines.index("Samples:")
    types = [t.replace("[dflt]", "") for t in lines[i + 1].split()]
    col = [t.split("/")[0] for t in types].index(want_type)
    samples = []
    j = i + 2
    while lines[j] != "Locations":
        line = lines[j]
        if ":" in line and line.strip()[0].isdigit() and not line.startswith("                "):
            vals, _, locs = line.partition(":")
            samples.append((int(vals.split()[col]), [int(x) for x in locs.split()]))
        j += 1
    locs, cur = {}, None
    j += 1
    while lines[j] != "Mappings":
        line = lines[j]
        head, sep, rest = line.partition(": 0x")
        if sep and head.strip().isdigit():  # "   id: 0xaddr M=m name file:line s=N"
            cur = int(head)
            rest = rest.split(" ", 2)[2]  # drop the address and M=
            locs[cur] = []
        else:  # an inlined line of the location before
            rest = line.strip()
        name = rest.rsplit(" ", 2)[0] if rest != "??" else "??"
        locs[cur].append(name)
        j += 1
    stacks = collections.Counter()
    for v, ids in samples:
        frames = []
        for lid in reversed(ids):
            frames.extend(reversed(locs[lid]))
        if v:
            stacks[";".join(frames)] += v
    return stacks


def oap(path, pydir):
    sys.path.insert(0, pydir)
    from pprof import profile_pb2  # noqa: generated at test time
    prof = profile_pb2.Profile()
    with gzip.open(path, "rb") as f:  # the OAP always unzips
        prof.ParseFromString(f.read())

    def signature(location_id):
        loc = prof.location[location_id - 1]
        parts = []
        for line in loc.line:
            fn = prof.function[line.function_id - 1]
            parts.append("%s:%d" % (prof.string_table[fn.name], line.line))
        return ";".join(parts)

    leaves = collections.Counter()
    for sample in prof.sample:
        leaves[";".join(signature(i) for i in reversed(sample.location_id))] += 1
    print("%d" % len(prof.sample), file=sys.stderr)
    return leaves


def kinds(path, page):
    out = subprocess.run(["go", "tool", "pprof", "-raw", "-symbolize=none", path], capture_output=True, text=True,
                         check=True)
    lines = out.stdout.splitlines()
    maps = {}
    for line in lines[lines.index("Mappings") + 1:]:
        num, _, rest = line.partition(": ")
        maps[int(num)] = rest.split()[1]
    located = {}
    for line in lines[lines.index("Locations") + 1:lines.index("Mappings")]:
        m = re.match(r"\s*\d+: 0x[0-9a-f]+ M=(\d+) (.*) \S*:\d+ s=\d+$", line)
        if m:
            located[m.group(2)] = KINDS[maps[int(m.group(1))]]
    text = open(page, encoding="utf-8").read()
    d = json.loads(re.search(r'<script id="fg-data" type="application/json">(.*?)</script>', text, re.S).group(1))
    in_page = collections.defaultdict(set)
    for name, t in zip(d["names"], d["types"]):
        in_page[name].add(ord(t) - 48)
    counts, bad, absent = collections.Counter(), [], 0
    for name, k in located.items():
        if k in (3, 4, 5, 8):
            counts[k] += 1
            if name not in in_page:  # named otherwise in the recording
                absent += 1
                continue
            # a name may have several kinds in the page (a Java native method compiled in one stack); the JFR reader
            # types a bracketed frame without a class ("[libc.so.6]") as an error frame
            if k not in in_page[name] and not (k == 3 and name.startswith("[") and 8 in in_page[name]):
                bad.append("%s: %d in pprof, %s in the page" % (name, k, sorted(in_page.get(name, ()))))
    print("%d native, %d C++, %d kernel, %d error frames, %d not in the page, %d of another kind there%s" % (
        counts[3], counts[4], counts[5], counts[8], absent, len(bad), (": " + "; ".join(bad[:3])) if bad else ""))
    return 0 if not bad and counts[3] + counts[4] > 0 else 1


def read_collapsed(path):
    stacks = collections.Counter()
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line:
            frames, _, w = line.rpartition(" ")
            stacks[frames] += int(w)
    return stacks


def method_shares(stacks):
    total = sum(stacks.values())
    tot, self_ = collections.Counter(), collections.Counter()
    for frames, w in stacks.items():
        names = frames.split(";")
        for n in set(names):
            tot[n] += w
        self_[names[-1]] += w
    return total, {n: 100.0 * w / total for n, w in tot.items()}, {n: 100.0 * w / total for n, w in self_.items()}


def shares(a_path, b_path, n):
    ta, tot_a, self_a = method_shares(read_collapsed(a_path))
    tb, tot_b, self_b = method_shares(read_collapsed(b_path))
    hot = sorted(tot_a, key=lambda m: (-tot_a[m], -self_a.get(m, 0), m))[:n]
    hot += [m for m in sorted(self_a, key=lambda m: (-self_a[m], m))[:n] if m not in hot]
    worst, where = 0.0, ""
    for m in hot:
        for what, a, b in (("total", tot_a, tot_b), ("self", self_a, self_b)):
            gap = abs(a.get(m, 0.0) - b.get(m, 0.0))
            if gap >= worst:
                worst, where = gap, "%s %s %.2f%% vs %.2f%%" % (m, what, a.get(m, 0.0), b.get(m, 0.0))
    print("%d methods, totals %d and %d, largest gap %.3f points (%s)" % (len(hot), ta, tb, worst, where))
    return 0 if worst <= 0.5 and ta == tb else 1


def main():
    cmd = sys.argv[1]
    if cmd == "raw":
        for frames, w in sorted(go_raw(sys.argv[2], sys.argv[3]).items()):
            print("%s %d" % (frames, w))
    elif cmd == "oap":
        for frames, w in sorted(oap(sys.argv[2], sys.argv[3]).items()):
            print("%s %d" % (frames, w))
    elif cmd == "kinds":
        sys.exit(kinds(sys.argv[2], sys.argv[3]))
    elif cmd == "shares":
        sys.exit(shares(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 10))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

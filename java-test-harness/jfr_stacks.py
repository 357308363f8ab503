"""jfr_stacks.py FILE.json: print the jdk.ExecutionSample stacks of `jfr print --json` as collapsed lines.

Frames are named like jsampler names them: "pkg.Class.method" (the JSON carries internal class names,
"pkg/Class", which are dotted here) (root first, ';'-joined), one line per
distinct stack with its sample count. A method whose class has no name (jsampler's pseudo frames such
as "[unknown_Java]") is named by the method name alone.
"""
import collections
import json
import sys


def frame_name(frame):
    method = frame.get("method") or {}
    cls = ((method.get("type") or {}).get("name") or "").replace("/", ".")
    name = method.get("name") or ""
    return f"{cls}.{name}" if cls else name


def main(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    counts = collections.Counter()
    for event in doc["recording"]["events"]:
        trace = event["values"].get("stackTrace") or {}
        frames = trace.get("frames") or []
        names = [frame_name(fr) for fr in reversed(frames)]
        counts[";".join(names)] += 1
    for stack, n in counts.items():
        print(f"{stack} {n}")


if __name__ == "__main__":
    main(sys.argv[1])

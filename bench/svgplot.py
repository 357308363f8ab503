"""A hand-written SVG line plot (no plotting library): throughput ratio against sampling interval."""
import math
from xml.sax.saxutils import escape

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"]
MARKERS = ["circle", "square", "diamond", "triangle"]


def series_from_rows(rows):
    """Throughput rows -> [(label, [(interval_ms, median, min, max, setting)])], one series per profiler setup.

    x is the measured interval (worker CPU time per sample) when known, else the setting.
    """
    groups = {}
    for row in rows:
        if row.get("profiler") in (None, "none") or row.get("status") != "ok" or not row.get("ratio"):
            continue
        if row["profiler"] == "jsampler":
            label = f"jsampler {row['event']}" + (", JFR output" if row["output"] == "jfr" else "") + \
                    f" (JDK {row['jdk']})"
        else:
            label = f"JDK {row['jdk']} JFR {row['event'].replace('jdk.', '')}"
        eff = (row.get("effective_interval_ms") or {}).get("median")
        nominal = {"100us": 0.1, "1ms": 1.0, "10ms": 10.0}.get(row["interval"])
        x = eff or nominal
        r = row["ratio"]
        groups.setdefault(label, []).append((x, r["median"], r["min"], r["max"], row["interval"]))
    return [(k, sorted(v)) for k, v in groups.items()]


def plot(series, path, title, subtitle, goals=(), floor=0.8):
    """goals: [(x_ms, ratio, text)] drawn as short dashed marks. Values below `floor` are drawn on the bottom edge
    with their value written next to them, so that one very slow setting does not squash the others."""
    W, H = 960, 540
    left, right, top, bottom = 70, 300, 60, 60
    pw, ph = W - left - right, H - top - bottom
    xs = [p[0] for _, pts in series for p in pts if p[0]]
    ys = [y for _, pts in series for p in pts for y in p[1:4]] + [1.0] + [g[1] for g in goals]
    xmin, xmax = 0.05, 50.0
    if xs:
        xmin, xmax = min(xmin, min(xs) / 1.5), max(xmax, max(xs) * 1.5)
    ymin, ymax = max(min(ys), floor), max(ys)
    pad = max(0.002, (ymax - ymin) * 0.08)
    ymin, ymax = ymin - pad, ymax + pad

    def X(v):
        return left + pw * (math.log10(v) - math.log10(xmin)) / (math.log10(xmax) - math.log10(xmin))

    def Y(v):
        return top + ph * (ymax - v) / (ymax - ymin)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           'font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{left}" y="24" font-size="16" font-weight="bold">{escape(title)}</text>',
           f'<text x="{left}" y="42" fill="#555">{escape(subtitle)}</text>']
    # grid and axes
    for t in (0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50):
        if xmin <= t <= xmax:
            out.append(f'<line x1="{X(t):.1f}" y1="{top}" x2="{X(t):.1f}" y2="{top + ph}" stroke="#eee"/>')
            label = f"{t * 1000:.0f}us" if t < 1 else f"{t:g}ms"
            out.append(f'<text x="{X(t):.1f}" y="{top + ph + 18}" text-anchor="middle">{label}</text>')
    step = _nice_step((ymax - ymin) / 8)
    t = math.ceil(ymin / step) * step
    while t <= ymax:
        out.append(f'<line x1="{left}" y1="{Y(t):.1f}" x2="{left + pw}" y2="{Y(t):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{Y(t) + 4:.1f}" text-anchor="end">{t:.3f}</text>')
        t += step
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    out.append(f'<line x1="{left}" y1="{Y(1):.1f}" x2="{left + pw}" y2="{Y(1):.1f}" stroke="#333" '
               'stroke-dasharray="2,3"/>')
    out.append(f'<text x="{left + pw / 2}" y="{H - 18}" text-anchor="middle">sampling interval (measured: worker '
               'CPU time per sample; log scale)</text>')
    out.append(f'<text transform="translate(18,{top + ph / 2}) rotate(-90)" text-anchor="middle">throughput with '
               'profiler / without (median, min-max)</text>')
    for gx, gy, text in goals:
        out.append(f'<line x1="{X(gx / 1.6):.1f}" y1="{Y(gy):.1f}" x2="{X(gx * 1.6):.1f}" y2="{Y(gy):.1f}" '
                   'stroke="#888" stroke-width="2" stroke-dasharray="6,3"/>')
        out.append(f'<text x="{X(gx * 1.6) + 4:.1f}" y="{Y(gy) + 4:.1f}" fill="#666" font-size="11">'
                   f'{escape(text)}</text>')
    # series
    for i, (label, pts) in enumerate(series):
        c = COLOURS[i % len(COLOURS)]
        shape = MARKERS[i % len(MARKERS)]
        pts = [p for p in pts if p[0]]
        def clip(v):
            return max(v, ymin)
        if len(pts) > 1:
            d = " ".join(f"{'M' if k == 0 else 'L'}{X(p[0]):.1f},{Y(clip(p[1])):.1f}" for k, p in enumerate(pts))
            out.append(f'<path d="{d}" fill="none" stroke="{c}" stroke-width="1.5"/>')
        for x, med, lo, hi, setting in pts:
            if hi > ymin:
                out.append(f'<line x1="{X(x):.1f}" y1="{Y(clip(lo)):.1f}" x2="{X(x):.1f}" y2="{Y(hi):.1f}" '
                           f'stroke="{c}"/>')
            out.append(_marker(shape, X(x), Y(clip(med)), c, f"{label} {setting}: {med:.4f} (min {lo:.4f}, "
                                                              f"max {hi:.4f}) at {x:.2f} ms"))
            if med < ymin:
                out.append(f'<text x="{X(x) + 7:.1f}" y="{Y(ymin) - 6:.1f}" fill="{c}" font-size="11">'
                           f'{med:.3f} (off scale)</text>')
        ly = top + 10 + i * 20
        out.append(_marker(shape, left + pw + 20, ly, c, label))
        out.append(f'<text x="{left + pw + 32}" y="{ly + 4}">{escape(label)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def _marker(shape, x, y, colour, tip):
    t = f"<title>{escape(tip)}</title>"
    if shape == "square":
        return f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" fill="{colour}">{t}</rect>'
    if shape == "diamond":
        return (f'<path d="M{x:.1f},{y - 5:.1f} L{x + 5:.1f},{y:.1f} L{x:.1f},{y + 5:.1f} L{x - 5:.1f},{y:.1f} Z" '
                f'fill="{colour}">{t}</path>')
    if shape == "triangle":
        return (f'<path d="M{x:.1f},{y - 5:.1f} L{x + 5:.1f},{y + 4:.1f} L{x - 5:.1f},{y + 4:.1f} Z" '
                f'fill="{colour}">{t}</path>')
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}">{t}</circle>'


def _nice_step(raw):
    if raw <= 0:
        return 0.01
    e = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * e:
            return m * e
    return 10 * e

#!/usr/bin/env python3
"""gpumodel plot draws what a reader understands: the label and unit each column name gives (a table,
and every parameter's unit in `gpumodel --list-params-json`), the unit the values' range picks (ticks
keep to four digits), legend values with units; then, on a small merged.csv written here, categorical
x drawn as points in the sweep's order, numeric x as lines, --categorical, --logx/--logy (and their
refusal of 0, exit 2 naming the column), --xlabel/--ylabel, and the same bytes from the same input."""

import json
import os
import re
import subprocess
import sys

from wbtest import WORKBENCH, Test

sys.path.insert(0, WORKBENCH)
import plotlabels as labels  # noqa: E402
import wbcommon as wb  # noqa: E402

t = Test("workbench_plot_readable")

# --- Labels and units from column names -------------------------------------------------------------
TABLE = [  # column, words, the column's own unit (before scaling)
    ("signal_to_wake_ns", "signal to wake", "ns"),
    ("present_to_scanout_ns.mean", "present to scan-out, mean", "ns"),
    ("present_to_scanout_ns.p99", "present to scan-out, 99th percentile", "ns"),
    ("present_to_scanout_ns.n", "present to scan-out, samples", None),
    ("frame_time_ms.max", "frame time, max", "ms"),
    ("cpu.thread_wake_ns", "CPU thread wake", "ns"),
    ("workload.signal_interval_us", "workload signal interval", "µs"),
    ("gpu.timestamp_tick_ps", "GPU timestamp tick", "ps"),
    ("display.fifo_bytes", "display FIFO", "B"),
    ("copy_sysmem_bytes_per_frame", "copy system memory per frame", "B"),
    ("bytes", "bytes", "B"),
    ("kmd.largest_allocation_mb", "KMD largest allocation", "MiB"),
    ("effective_gbps", "effective", "GB/s"),
    ("scanout_gbps_avg", "scan-out average", "GB/s"),
    ("static_check_share_mbps", "static check share", "MB/s"),
    ("energy.total_mj", "energy total", "mJ"),
    ("energy_per_frame_mj.p95", "energy per frame, 95th percentile", "mJ"),
    ("energy.avg_power_mw", "energy average power", "mW"),
    ("capture_refresh_hz", "capture refresh", "Hz"),
    ("cmp.clock_mhz", "CMP clock", "MHz"),
    ("link_down_busy_pct", "link down busy", "%"),
    ("engine_busy_pct.node 1 (copy)", "engine busy, node 1 (copy)", "%"),
    ("workload.fps", "workload frame rate", "fps"),
    ("power.link_pj_per_bit", "power link", "pJ/bit"),
    ("power.vram_background_mw_per_gib", "power VRAM background", "mW/GiB"),
    ("notify_ns_per_mb", "notify per MiB", "ns"),
    ("cpu_interrupts_per_s", "CPU interrupts", "/s"),
    ("kmd.notify_eviction_cycles_per_kb", "KMD notify eviction cycles per KiB", None),
    ("link.gen", "link generation", None),
    ("cpu.idle_state", "CPU idle state", None),
    ("present.path", "present path", None),
    ("underflows", "underflows", None),
    ("tear_line.p99", "tear line, 99th percentile", None),
    ("tear_line.n", "tear line, samples", None),
    ("gpu_ns_per_signal", "GPU per signal", "ns"),
    ("ns_per_signal", "time per signal", "ns"),
    ("bytes_moved", "bytes moved", "B"),
    ("cpu_interrupt_causes_per_s.fence", "CPU interrupt causes, fence", "/s"),
    ("pcie_reads_per_interrupt", "PCIe reads per interrupt", None),
]
for name, words, symbol in TABLE:
    got_words, unit = labels.describe(name)
    got = (got_words, unit.symbol if unit else None)
    t.check(got == (words, symbol), f"describe({name!r}) = {got}, want {(words, symbol)}")

# Every parameter the model declares with a unit of measure: the name gives that unit. A parameter
# counted in things (cycles, frames, nodes) or with no unit gets none, so its label is its words.
MEASURES = {"ps": "ps", "ns": "ns", "us": "µs", "ms": "ms", "bytes": "B", "MiB": "MiB", "GB/s": "GB/s",
            "mW": "mW", "MHz": "MHz", "%": "%", "fps": "fps", "pJ/bit": "pJ/bit", "mW/GiB": "mW/GiB"}
p = subprocess.run([t.gpumodel, "--list-params-json"], capture_output=True, text=True)
params = {}
if t.check(p.returncode == 0, f"gpumodel --list-params-json runs (exit {p.returncode})"):
    j = json.loads(p.stdout)
    for q in j["platform"] + [q for s in j["scenarios"] for q in s["params"]]:
        if q["kind"] in ("int", "real"):
            params[q["name"]] = q["unit"]
measured = 0
for name, unit in sorted(params.items()):
    got = labels.describe(name)[1]
    want = MEASURES.get(unit)
    measured += want is not None
    t.check((got.symbol if got else None) == want,
            f"parameter {name} ({unit or 'no unit'}): the label's unit is {got.symbol if got else None}, want {want}")
t.check(measured >= 100, f"{measured} numeric parameters with a unit of measure checked (at least 100)")

# Every numeric metric the scenarios report (the golden results): words without underscores or a unit
# left in them (a unit is the axis's, in parentheses).
with open(os.path.join(os.path.dirname(WORKBENCH), "tests", "golden", "scenario_results.json")) as f:
    golden = json.load(f)
metrics = sorted({k for v in golden.values() for k, x in wb.flatten(v.get("metrics", {}), "", {}).items()
                  if isinstance(x, (int, float)) and not isinstance(x, bool)})
left = [(m, labels.describe(m)[0]) for m in metrics if "_" in labels.describe(m)[0] or set(
    re.split(r"[ ,]+", labels.describe(m)[0])) & {"ns", "us", "ms", "ps", "mj", "mw", "pct", "gbps", "mbps", "mhz"}]
t.check(len(metrics) >= 300 and not left, f"{len(metrics)} metrics' labels, none with a raw unit or _: {left[:10]}")

# --- The unit the values' range picks ---------------------------------------------------------------
SCALES = [  # the column's unit suffix, values, the unit plotted in, the divisor
    ("ns", [14949, 97949], "µs", 1e3),
    ("ns", [999], "ns", 1),
    ("ns", [1000], "µs", 1e3),
    ("ns", [13.4e6, 14.5e6], "ms", 1e6),
    ("ns", [2.5e9], "s", 1e9),
    ("ns", [0.5], "ps", 1e-3),
    ("ns", [-15000, 200], "µs", 1e3),
    ("ns", [0, 0], "ns", 1),
    ("ps", [1500], "ns", 1e3),
    ("us", [1500], "ms", 1e3),
    ("ms", [3100], "s", 1e3),
    ("bytes", [8192, 20480], "KiB", 1024),
    ("bytes", [1023], "B", 1),
    ("bytes", [8294400], "MiB", 2**20),
    ("mb", [4096], "GiB", 1024),
    ("mw", [4939, 6742], "W", 1e3),
    ("mj", [0.5], "µJ", 1e-3),
    ("gbps", [0.5], "MB/s", 1e-3),
    ("mhz", [1000], "GHz", 1e3),
    ("pct", [99.5], "%", 1),
    ("fps", [1, 30], "fps", 1),
    (None, [3128], "", 1),
    (None, [12345], "thousands", 1e3),
    (None, [2.5e7], "millions", 1e6),
]
for suffix, values, symbol, divisor in SCALES:
    unit = labels.SUFFIXES[suffix] if suffix else None
    got = labels.choose_scale(unit, values)
    t.check(got[0] == symbol and abs(got[1] - divisor) <= 1e-9 * divisor,
            f"choose_scale({suffix}, {values}) = {got}, want ({symbol!r}, {divisor})")
# Any time from 1 ps to 999 s: at least 1 and fewer than 4 digits before the point in the unit chosen.
for exp in range(-3, 12):
    for m in (1.0, 2.5, 9.99):
        v = m * 10**exp
        symbol, div = labels.choose_scale(labels.SUFFIXES["ns"], [v])
        t.check(1 <= v / div < 1000, f"{v:g} ns plots as {v / div:g} {symbol}: 1 to 999")

# Log-axis tics: gnuplot alone labels only powers of ten, none at all within one decade.
for lo, hi, want in [(4.7, 7.0, [5, 5.5, 6, 6.5, 7]), (0.9, 33, [1, 2, 5, 10, 20]),
                     (13.3, 14.5, [13.4, 13.6, 13.8, 14, 14.2, 14.4]),
                     (1e-3, 10, None), (120, 2000, [200, 500, 1000, 2000])]:
    got = labels.log_tics(lo, hi)
    t.check(got == want, f"log_tics({lo}, {hi}) = {got}, want {want}")
for lo in (0.013, 0.7, 1, 3.3, 47, 999):
    for span in (1.01, 1.5, 3, 9.9, 10, 99, 999):
        got = labels.log_tics(lo, lo * span)
        t.check(got is not None and len(got) >= 2 and all(lo <= v <= lo * span for v in got),
                f"log_tics({lo}, {lo * span:g}): at least two tics, all within: {got}")

# --- Legend values --------------------------------------------------------------------------------
for column, value, shown in [("display.fifo_bytes", "16384", "16 KiB"), ("cpu.thread_wake_ns", "3000", "3 µs"),
                             ("present_to_flip_ns.mean", "4642300", "4.642 ms"), ("link.gen", "4", "4"),
                             ("present.path", "one_copy", "one_copy"), ("workload.fps", "30", "30 fps")]:
    got = labels.value_text(labels.describe(column)[1], value)
    t.check(got == shown, f"legend value {column} = {value} reads {got!r}, want {shown!r}")

# --- Where a plot goes without --out -------------------------------------------------------------
# Beside a CSV outside the source tree (a sweep's directory under build/); for a CSV in the source
# tree, under the working directory's build/plots/, never beside it.
import plot as plot_tool  # noqa: E402

outside = os.path.join(t.tmp, "sweep", "merged.csv")
t.check(plot_tool.default_prefix(outside, "y_vs_x") == os.path.join(t.tmp, "sweep", "y_vs_x"),
        f"a CSV outside the source tree: the plot beside it ({plot_tool.default_prefix(outside, 'y_vs_x')})")
inside = os.path.join(wb.REPO_ROOT, "workloads", "captures", "x.csv")
here = os.getcwd()
os.chdir(t.tmp)
try:
    got = plot_tool.default_prefix(inside, "y_vs_x")
finally:
    os.chdir(here)
t.check(got == os.path.join(t.tmp, "build", "plots", "y_vs_x"),
        f"a CSV in the source tree: the plot under ./build/plots/, not beside it ({got})")

# --- Plots of a small merged.csv -------------------------------------------------------------------
# Axes in an order that is neither sorted nor alphabetical: two_copy before one_copy, link.gen 5, 3, 4.
header = ["run", "point", "seed", "present.path", "link.gen", "display.fifo_bytes", "exit_code", "verdict", "why",
          "present_to_scanout_ns.mean", "underflows", "static_check_passed"]
rows, run = [], 0
for path in ("two_copy", "one_copy"):
    for gen in (5, 3, 4):
        for fifo in (8192, 16384):
            run += 1
            mean = 13_000_000 + (6 - gen) * 400_000 + (200_000 if path == "two_copy" else 0) + fifo
            rows.append([run, run, 1, path, gen, fifo, 0, "pass", "", mean, 0 if fifo == 16384 else 100 * (6 - gen),
                         "true" if fifo == 16384 else "false"])
csv_path = t.write("merged.csv", "\n".join(",".join(str(c) for c in r) for r in [header] + rows) + "\n")
gap_csv = t.write("gap.csv", "run,point,seed,workload.signal_gap_ns,exit_code,verdict,why,signal_to_wake_ns\n"
                  "1,1,1,0,0,pass,,15000\n2,2,1,500,0,pass,,16000\n3,3,1,1000,0,pass,,17000\n")


def plot(name, *args, csv=csv_path):
    """Runs the tool; returns (process, gnuplot script, SVG text)."""
    os.makedirs(os.path.join(t.tmp, "plots"), exist_ok=True)  # --out's folder must exist
    prefix = os.path.join(t.tmp, "plots", name)
    p = t.tool("plot", csv, *args, "--out", prefix, "--script", prefix + ".gp")
    script = svg = ""
    if os.path.isfile(prefix + ".gp"):
        with open(prefix + ".gp") as f:
            script = f.read()
    if os.path.isfile(prefix + ".svg"):
        with open(prefix + ".svg") as f:
            svg = f.read()
    return p, script, svg


def plot_styles(script):
    """The style of each curve in the script's plot command: points, linespoints, yerrorbars ..."""
    line = [s for s in script.splitlines() if s.startswith("plot ")]
    return re.findall(r" with (\w+)", line[0]) if line else []


def setting(script, what):
    found = [s[len(what) + 1:] for s in script.splitlines() if s.startswith(what + " ")]
    return found[0] if found else None


def tick_texts(svg):
    """The SVG's texts that are numbers (the tick labels), in any notation."""
    return [m for m in re.findall(r"<text>([^<]*)</text>", svg) if re.fullmatch(r"-?[0-9.]+([eE][-+]?[0-9]+)?", m)]


# Categorical x (present.path): points, the categories in the CSV's order, words and units on the axes.
p, script, svg = plot("categorical", "--x", "present.path", "--y", "present_to_scanout_ns.mean", "--lines", "link.gen",
                      "--where", "display.fifo_bytes=8192", "--title", "T")
t.check(p.returncode == 0, f"categorical plot: exit 0 (got {p.returncode}: {p.stderr.strip()})")
t.check(plot_styles(script) == ["points"] * 3,
        f"categorical x: each line drawn as points, not joined: {plot_styles(script)}")
t.check(setting(script, "set xtics") == '("two_copy" 0, "one_copy" 1)',
        f"categorical x: the tics in the CSV's order two_copy, one_copy: {setting(script, 'set xtics')}")
t.check(setting(script, "set xlabel") == '"present path"', f"x label: {setting(script, 'set xlabel')}")
t.check(setting(script, "set ylabel") == '"present to scan-out, mean (ms)"',
        f"y label: {setting(script, 'set ylabel')}")
for text in ("present path", "present to scan-out, mean (ms)", "link.gen = 3", "link.gen = 4", "link.gen = 5"):
    t.check(f"<text>{text}</text>" in svg, f"the SVG shows {text!r}")
t.check("present_to_scanout_ns" not in svg, "the SVG shows no raw column name (the title is given)")
ticks = tick_texts(svg)
t.check(len(ticks) >= 5 and all(re.fullmatch(r"-?[0-9]{1,4}(\.[0-9]+)?", x) for x in ticks),
        f"every numeric tick is a plain number with at most 4 digits before the point: {ticks}")
t.check("y axis: present to scan-out, mean (ms): the CSV's values / 1000000" in p.stdout,
        f"the scale is printed: {p.stdout.splitlines()[-3:]}")

# The script carries the data, scaled (ms) and each line's points beside the others' at a category.
blocks = {}
for chunk in script.split("\nEOD\n")[0].split("\n# ")[1:]:
    name, *rows_ = chunk.strip().splitlines()
    blocks[name] = [[float(v) for v in r.split()] for r in rows_]
want_blocks = {}
for k, gen in enumerate((3, 4, 5)):  # --lines in numeric order
    want_blocks[f"link.gen = {gen}"] = [
        [i + (k - 1) * 0.12, m / 1e6, m / 1e6, m / 1e6, 1]
        for i, path in enumerate(("two_copy", "one_copy"))
        for m in [float(r[9]) for r in rows if r[3] == path and r[4] == gen and r[5] == 8192]]
t.check(blocks.keys() == want_blocks.keys() and all(
    len(blocks[b]) == len(want_blocks[b])
    and all(abs(g - w) <= 1e-9 * max(1, abs(w)) for gr, wr in zip(blocks[b], want_blocks[b]) for g, w in zip(gr, wr))
    for b in want_blocks),
        f"the script's data: x at the category +- 0.12 per line, y in ms: {blocks} want {want_blocks}")
# `gnuplot SCRIPT` alone redraws the same plot.
svg_path = os.path.join(t.tmp, "plots", "categorical.svg")
os.remove(svg_path)
g = subprocess.run(["gnuplot", os.path.join(t.tmp, "plots", "categorical.gp")], capture_output=True, text=True)
with open(svg_path) as f:
    t.check(g.returncode == 0 and f.read() == svg,
            f"gnuplot on the --script file redraws the same SVG ({g.stderr.strip()})")

# The same CSV and options: the same SVG and PNG bytes.
p2, _, svg2 = plot("categorical_again", "--x", "present.path", "--y", "present_to_scanout_ns.mean", "--lines",
                   "link.gen", "--where", "display.fifo_bytes=8192", "--title", "T")
with open(os.path.join(t.tmp, "plots", "categorical.png"), "rb") as f1, \
        open(os.path.join(t.tmp, "plots", "categorical_again.png"), "rb") as f2:
    t.check(svg == svg2 and f1.read() == f2.read() and p2.returncode == 0,
            "the same input twice: identical SVG and PNG")

# A numeric x (link.gen) is sorted and drawn as lines; --categorical makes it categories in sweep order.
p, script_numeric, _ = plot("numeric", "--x", "link.gen", "--y", "present_to_scanout_ns.mean", "--lines",
                            "present.path",
                    "--where", "display.fifo_bytes=8192")
t.check(p.returncode == 0 and plot_styles(script_numeric) == ["linespoints"] * 2
        and setting(script_numeric, "set xtics") == "(3, 4, 5)",
        f"numeric x: lines, tics at 3, 4, 5: {plot_styles(script_numeric)} {setting(script_numeric, 'set xtics')}")
p, script, _ = plot("as_categories", "--x", "link.gen", "--y", "present_to_scanout_ns.mean", "--lines", "present.path",
                    "--where", "display.fifo_bytes=8192", "--categorical")
t.check(p.returncode == 0 and plot_styles(script) == ["points"] * 2
        and setting(script, "set xtics") == '("5" 0, "3" 1, "4" 2)',
        f"--categorical: points, tics in the sweep's order 5, 3, 4: {plot_styles(script)} "
        f"{setting(script, 'set xtics')}")

# A byte axis in KiB, its lines' legend with units; overrides replace the words and keep the unit.
p, script, svg = plot("bytes", "--x", "display.fifo_bytes", "--y", "underflows", "--lines", "link.gen",
                      "--where", "present.path=one_copy")
t.check(p.returncode == 0 and setting(script, "set xlabel") == '"display FIFO (KiB)"'
        and setting(script, "set xtics") == "(8, 16)" and setting(script, "set ylabel") == '"underflows"',
        f"bytes on x: KiB, tics 8 and 16: {setting(script, 'set xlabel')} {setting(script, 'set xtics')}")
# Counts from 0: the y axis spans the data with a margin (no point on the frame) and shows no negative tic.
t.check({"set autoscale yfix", "set offsets 0, 0, graph 0.05, graph 0.05"} <= set(script.splitlines())
        and tick_texts(svg) and not [v for v in tick_texts(svg) if v.startswith("-")],
        f"underflows 0 .. 300: a 5 % margin around the data, no negative tic: {tick_texts(svg)}")
p, script, svg = plot("legend", "--x", "link.gen", "--y", "underflows", "--lines", "display.fifo_bytes",
                      "--where", "present.path=one_copy", "--xlabel", "PCIe generation", "--ylabel", "underruns")
for text in ("display.fifo_bytes = 8 KiB", "display.fifo_bytes = 16 KiB", "PCIe generation", "underruns"):
    t.check(f"<text>{text}</text>" in svg, f"legend and overrides: the SVG shows {text!r}")
t.check("link generation" not in svg, "--xlabel replaces the derived words")
p, script, _ = plot("override_unit", "--x", "present.path", "--y", "present_to_scanout_ns.mean", "--lines", "link.gen",
                    "--where", "display.fifo_bytes=8192", "--ylabel", "latency")
t.check(setting(script, "set ylabel") == '"latency (ms)"',
        f"--ylabel keeps the scaled unit: {setting(script, 'set ylabel')}")

# A label with quotes and a backslash is drawn as given, not read as gnuplot syntax.
p, script, svg = plot("quotes", "--x", "link.gen", "--y", "underflows", "--where", "present.path=one_copy",
                      "--where", "display.fifo_bytes=8192", "--ylabel", 'say "no" \\n')
t.check(p.returncode == 0 and '<text>say "no" \\n</text>' in svg,
        f"a label with quotes and a backslash: exit 0, drawn as given (got {p.returncode}: {p.stderr.strip()!r})")
p = t.tool("plot", csv_path, "--x", "link.gen", "--y", "underflows", "--where", "present.path=one_copy",
           "--where", "display.fifo_bytes=8192", "--out", os.path.join(t.tmp, "plots", "noscript"),
           "--script", os.path.join(t.tmp, "no", "such", "dir", "x.gp"))
t.check(p.returncode == 2 and "--script" in p.stderr and len(p.stderr.strip().splitlines()) == 1
        and not os.path.exists(os.path.join(t.tmp, "plots", "noscript.png")),
        f"an unwritable --script: exit 2 naming it, nothing drawn (got {p.returncode}: {p.stderr.strip()!r})")

# A legend that fits the width goes in a row under the plot; a long one in a column at the right.
t.check(setting(script_numeric, "set key") == "outside bottom center horizontal",
        f"two lines: the legend in a row under the plot: {setting(script_numeric, 'set key')}")
many_rows = "".join(f"{i * 2 + g},{i * 2 + g},1,{3 + g},{8192 + 1024 * i},0,pass,,{100 * i}\n"
                    for i in range(12) for g in (0, 1))
many_csv = t.write("many.csv", "run,point,seed,link.gen,display.fifo_bytes,exit_code,verdict,why,underflows\n"
                   + many_rows)
p, script, _ = plot("many", "--x", "link.gen", "--y", "underflows", "--lines", "display.fifo_bytes", csv=many_csv)
t.check(p.returncode == 0 and setting(script, "set key") == "outside right top vertical"
        and script.count('title "display.fifo_bytes = ') == 12,
        f"12 lines: a column of 12 entries at the right (exit {p.returncode}): {setting(script, 'set key')}")

# Four entries too wide for one row: two rows under the plot, the bottom margin grown for them.
four_rows = "".join(f"{i * 2 + g},{i * 2 + g},1,{3 + g},{1000 * 2**i},0,pass,,{100 * i}\n"
                    for i in range(4) for g in (0, 1))
four_csv = t.write("four.csv", "run,point,seed,link.gen,cpu.thread_wake_ns,exit_code,verdict,why,underflows\n"
                   + four_rows)
p, script, _ = plot("four", "--x", "link.gen", "--y", "underflows", "--lines", "cpu.thread_wake_ns", csv=four_csv)
t.check(p.returncode == 0 and setting(script, "set key") == "outside bottom center horizontal"
        and setting(script, "set bmargin") == "7" and 'title "cpu.thread_wake_ns = 8 µs"' in script,
        f"4 long entries: two rows under the plot (exit {p.returncode}): {setting(script, 'set key')}, "
        f"bmargin {setting(script, 'set bmargin')}")
# The title is centred on the canvas, not on a plot a legend narrowed, and wraps when long.
long_title = " ".join(["a long title"] * 12)  # 155 characters: two lines
p, script, svg = plot("title", "--x", "link.gen", "--y", "underflows", "--lines", "display.fifo_bytes",
                      "--title", long_title, csv=many_csv)
label = setting(script, "set label 1") or ""
t.check(p.returncode == 0 and label.endswith("at screen 0.5, screen 0.97 center front") and "\\n" in label
        and setting(script, "set tmargin") == "4" and "set title" not in script,
        f"a long title: centred on the canvas, on two lines, a top margin for them: {label[-60:]!r}")

# true/false on y: 0 and 1, tics reading false and true.
p, script, _ = plot("bool", "--x", "display.fifo_bytes", "--y", "static_check_passed", "--where",
                    "present.path=one_copy",
                    "--where", "link.gen=3")
t.check(p.returncode == 0 and setting(script, "set ytics") == "('false' 0, 'true' 1)",
        f"true/false y: tics false, true: {setting(script, 'set ytics')}")

# One curve (no --lines): no legend, the y label says what it is.
t.check("unset key" in script.splitlines() and setting(script, "set key") is None, "one curve (true/false): no legend")

# Log axes that work, and refuse 0 with exit 2 naming the option and the column.
p, script, _ = plot("logy", "--x", "link.gen", "--y", "present_to_scanout_ns.mean", "--lines", "present.path",
                    "--where", "display.fifo_bytes=8192", "--logy")
t.check(p.returncode == 0 and "set logscale y" in script.splitlines(), f"--logy: a log y axis (exit {p.returncode})")
t.check(setting(script, "set ytics") == "(13.4, 13.6, 13.8, 14, 14.2, 14.4)",
        f"--logy within a decade (13.4 .. 14.4 ms): labelled tics {setting(script, 'set ytics')}")
p, script, _ = plot("logx", "--x", "link.gen", "--y", "present_to_scanout_ns.mean", "--lines", "present.path",
                    "--where", "display.fifo_bytes=8192", "--logx")
t.check(p.returncode == 0 and "set logscale x" in script.splitlines() and "set logscale y" not in script,
        f"--logx: a log x axis (exit {p.returncode})")
for name, args, fragments in [
    ("logy0", ["--x", "link.gen", "--y", "underflows", "--lines", "present.path", "--where", "display.fifo_bytes=16384",
               "--logy"], ["--logy", "underflows", "run 2", "above 0"]),
    ("logx0", ["--x", "workload.signal_gap_ns", "--y", "signal_to_wake_ns", "--logx"],
     ["--logx", "workload.signal_gap_ns", "run 1", "above 0"]),
    ("logx_categories", ["--x", "present.path", "--y", "underflows", "--lines", "link.gen", "--where",
                         "display.fifo_bytes=8192", "--logx"], ["--logx", "present.path", "categorical"]),
    ("logx_categorical", ["--x", "link.gen", "--y", "underflows", "--lines", "present.path", "--where",
                          "display.fifo_bytes=8192", "--logx", "--categorical"],
     ["--logx", "link.gen", "--categorical"]),
]:
    p, _, _ = plot(name, *args, csv=gap_csv if name == "logx0" else csv_path)
    err = p.stderr.strip().splitlines()
    t.check(p.returncode == 2 and len(err) == 1 and all(f in p.stderr for f in fragments),
            f"{name}: exit 2, one line naming {fragments} (got {p.returncode}: {p.stderr.strip()!r})")
    t.check(not os.path.exists(os.path.join(t.tmp, "plots", name + ".png")), f"{name}: nothing written")

# --help documents the options.
p = t.tool("plot", "--help")
for option in ("--xlabel", "--ylabel", "--logx", "--logy", "--categorical", "--script", "µs", "KiB"):
    t.check(option in p.stdout, f"--help mentions {option}")

t.done()

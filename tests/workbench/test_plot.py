#!/usr/bin/env python3
"""gpumodel plot on a real sweep's merged.csv: a categorical x (C1 .. C6) with one line per governor
and two seeds (error bars), and a numeric x; each writes a non-empty PNG and SVG through gnuplot and
prints the means it plotted, which must be the CSV's; bad input exits 2 naming the option."""

import os

from wbtest import Test, read_csv

t = Test("workbench_plot")
fence = t.scenario("fence_signal")

sweep = t.write("plot.ini", f"""
[sweep]
scenario = {fence}
seeds = 1, 2
[axes]
cpu.idle_governor = fixed, menu
cpu.idle_state = C1, C6
cpu.thread_wake_ns = 1000, 3000
""")
out = os.path.join(t.tmp, "sweep")
p = t.tool("sweep", sweep, "--out", out)
t.check(p.returncode == 0, f"the sweep runs (exit {p.returncode}: {p.stderr.strip()})")
csv_path = os.path.join(out, "merged.csv")
_, rows = read_csv(csv_path)


def check_outputs(prefix, what):
    png, svg = prefix + ".png", prefix + ".svg"
    if t.check(os.path.isfile(png) and os.path.getsize(png) > 1000, f"{what}: {png} written, not empty"):
        with open(png, "rb") as f:
            t.check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{what}: a PNG file")
    if t.check(os.path.isfile(svg) and os.path.getsize(svg) > 1000, f"{what}: {svg} written, not empty"):
        with open(svg) as f:
            text = f.read()
        t.check("<svg" in text and "</svg>" in text, f"{what}: an SVG document")
        return text
    return ""


# Categorical x, lines by governor, two seeds each: mean with min/max bars.
os.makedirs(os.path.join(t.tmp, "plots"))  # --out's folder must exist, as for the model's outputs
prefix = os.path.join(t.tmp, "plots", "wake")
p = t.tool("plot", csv_path, "--x", "cpu.idle_state", "--y", "signal_to_wake_ns", "--lines", "cpu.idle_governor",
           "--where", "cpu.thread_wake_ns=1000", "--out", prefix, "--title", "wake against idle state",
           "--script", prefix + ".gp")
t.check(p.returncode == 0, f"categorical plot: exit 0 (got {p.returncode}: {p.stderr.strip()})")
svg = check_outputs(prefix, "categorical plot")
with open(prefix + ".gp") as f:
    plot_line = [s for s in f.read().splitlines() if s.startswith("plot ")]
t.check(len(plot_line) == 1 and plot_line[0].count(" with yerrorbars ") == 2 and "lines" not in plot_line[0],
        f"idle states as categories: points with min/max bars, not joined: {plot_line}")
for label in ("C1", "C6", "cpu.idle_governor = fixed", "cpu.idle_governor = menu", "wake against idle state",
              "signal to wake (µs)", "CPU idle state"):
    t.check(label in svg, f"the SVG shows {label!r}")
# The idle states are categories: two seeds each, so points with min/max bars and no line between states.
t.check("y axis: signal to wake (µs): the CSV's values / 1000" in p.stdout,
        f"the printed scale: {p.stdout.splitlines()[-2:]}")
for gov in ("fixed", "menu"):
    for state in ("C1", "C6"):
        ys = [float(r["signal_to_wake_ns"]) for r in rows if r["cpu.idle_governor"] == gov
              and r["cpu.idle_state"] == state and r["cpu.thread_wake_ns"] == "1000"]
        mean = sum(ys) / len(ys)
        # the printed table: "cpu.idle_governor = GOV", then "  STATE  mean  min  max  n" lines
        section = p.stdout.split(f"cpu.idle_governor = {gov}\n")[-1].split("cpu.idle_governor =")[0]
        line = [w for w in (x.split() for x in section.splitlines()) if w[:1] == [state]]
        t.check(f"cpu.idle_governor = {gov}\n" in p.stdout and bool(line) and abs(float(line[0][1]) - mean) <= 1e-6 * mean and line[0][4] == "2",
                f"{gov} {state}: plotted mean {line[0][1] if line else None} over 2 seeds = the CSV's {mean}")

# Numeric x, one line.
prefix2 = os.path.join(t.tmp, "plots", "numeric")
p = t.tool("plot", csv_path, "--x", "cpu.thread_wake_ns", "--y", "signal_to_wake_ns",
           "--where", "cpu.idle_governor=fixed", "--where", "cpu.idle_state=C6", "--out", prefix2)
t.check(p.returncode == 0, f"numeric plot: exit 0 (got {p.returncode}: {p.stderr.strip()})")
check_outputs(prefix2, "numeric plot")

# Seeds that differ (hybrid_present with random frame start times): the plotted mean, min and max over
# the three seeds are the CSV's, and a nested metric (present_to_scanout_ns.mean) is a column.
jitter = t.write("jitter.ini", f"""
[sweep]
scenario = {t.scenario("hybrid_present")}
seeds = 1..3
[axes]
link.gen = 3, 5
[fixed]
workload.frames = 4
workload.jitter = random
""")
out3 = os.path.join(t.tmp, "jitter")
p = t.tool("sweep", jitter, "--out", out3)
t.check(p.returncode == 0, f"the hybrid_present sweep runs (exit {p.returncode}: {p.stderr.strip()})")
_, jrows = read_csv(os.path.join(out3, "merged.csv"))
y = "present_to_scanout_ns.mean"
p = t.tool("plot", os.path.join(out3, "merged.csv"), "--x", "link.gen", "--y", y, "--out",
           os.path.join(t.tmp, "plots", "jitter"))
t.check(p.returncode == 0, f"plot over differing seeds: exit 0 (got {p.returncode}: {p.stderr.strip()})")
check_outputs(os.path.join(t.tmp, "plots", "jitter"), "plot over differing seeds")
for gen in ("3", "5"):
    ys = [float(r[y]) for r in jrows if r["link.gen"] == gen]
    t.check(len(set(ys)) == 3, f"link.gen {gen}: the three seeds give three values {ys}")
    line = [w for w in (x.split() for x in p.stdout.splitlines()) if w[:1] == [gen]]
    got = [float(v) for v in line[0][1:4]] if line else []
    want = [sum(ys) / len(ys), min(ys), max(ys)]
    t.check(len(got) == 3 and all(abs(g - w) <= 1e-6 * abs(w) for g, w in zip(got, want)) and line[0][4] == "3",
            f"link.gen {gen}: plotted mean, min, max {got} = the CSV's {want} over 3 seeds")

# Bad input.
for args, fragment in [
    (["--x", "cpu.idle_stat", "--y", "signal_to_wake_ns"], "--x cpu.idle_stat"),
    (["--x", "cpu.idle_stat", "--y", "signal_to_wake_ns"], "did you mean 'cpu.idle_state'?"),
    (["--x", "cpu.idle_state", "--y", "signal_to_wake"], "--y signal_to_wake"),
    (["--x", "cpu.idle_state", "--y", "signal_to_wake"], "did you mean 'signal_to_wake_ns'"),
    (["--x", "cpu.idle_state", "--y", "signal_to_wake_ns", "--lines", "cpu.idle_governor"], "cpu.thread_wake_ns"),
    (["--x", "cpu.idle_state", "--y", "signal_to_wake_ns", "--where", "cpu.idle_governor=lazy"], "--where"),
    (["--x", "cpu.idle_state", "--y", "signal_to_wake_ns", "--lines", "cpu.idle_governor",
      "--where", "cpu.thread_wake_ns=1000", "--logx"], "--logx"),
    (["--y", "signal_to_wake_ns"], "--x"),
]:
    p = t.tool("plot", csv_path, *args, "--out", os.path.join(t.tmp, "plots", "bad"))
    lines = p.stderr.strip().splitlines()
    t.check(p.returncode == 2 and len(lines) == 1 and fragment in p.stderr,
            f"plot {args}: exit 2, one line naming {fragment!r} (got {p.returncode}: {p.stderr.strip()!r})")
t.check(not os.path.exists(os.path.join(t.tmp, "plots", "bad.png")), "a refused plot writes nothing")

# An output never replaces an input, nor another output; its folder must exist (H4). Each refused before
# anything is written: the CSV stays byte for byte, no plot appears.
with open(csv_path, "rb") as f:
    csv_bytes = f.read()
os.symlink(csv_path, os.path.join(t.tmp, "link_to_csv"))
os.link(csv_path, os.path.join(t.tmp, "hard_link.png"))
good = ["--x", "cpu.idle_state", "--y", "signal_to_wake_ns", "--lines", "cpu.idle_governor",
        "--where", "cpu.thread_wake_ns=1000"]
for args, fragment in [
    (["--out", os.path.join(t.tmp, "p1"), "--script", csv_path], "--script " + csv_path + ": is the merged CSV"),
    (["--out", os.path.join(t.tmp, "p2"), "--script", os.path.join(t.tmp, "link_to_csv")], "is the merged CSV"),
    (["--out", os.path.join(t.tmp, "hard_link")], "--out PREFIX (its .png) " + os.path.join(t.tmp, "hard_link.png")
     + ": is the merged CSV"),
    (["--out", os.path.join(t.tmp, "p3"), "--script", os.path.join(t.tmp, "p3.svg")],
     "--script and --out PREFIX (its .svg) name the same file"),
    (["--out", os.path.join(t.tmp, "nodir", "p")], "no such directory '" + os.path.join(t.tmp, "nodir") + "'"),
    (["--out", os.path.join(t.tmp, "p4"), "--script", os.path.join(t.tmp, "nodir", "s.gp")], "no such directory"),
]:
    p = t.tool("plot", csv_path, *good, *args)
    lines = p.stderr.strip().splitlines()
    t.check(p.returncode == 2 and len(lines) == 1 and fragment in p.stderr,
            f"plot {args[-1]}: exit 2, one line naming {fragment!r} (got {p.returncode}: {p.stderr.strip()!r})")
with open(csv_path, "rb") as f:
    t.check(f.read() == csv_bytes, "the merged CSV is unchanged after every refusal")
t.check(not os.path.exists(os.path.join(t.tmp, "nodir")), "a refused --out makes no folder")
t.check(not any(os.path.exists(os.path.join(t.tmp, n + e)) for n in ("p1", "p2", "p3", "p4") for e in (".png", ".svg")),
        "a refused plot writes no plot")
# A plot over an earlier one replaces it whole; no temporary file is left beside it.
p = t.tool("plot", csv_path, *good, "--out", os.path.join(t.tmp, "plots", "wake"))
t.check(p.returncode == 0, f"a second plot over the first: exit 0 ({p.stderr.strip()!r})")
t.check(not [n for n in os.listdir(os.path.join(t.tmp, "plots")) if n.startswith(".")],
        f"no temporary file left beside the plots: {os.listdir(os.path.join(t.tmp, 'plots'))}")
p = t.tool("plot", os.path.join(t.tmp, "nonexistent.csv"), "--x", "a", "--y", "b")
t.check(p.returncode == 2 and "nonexistent.csv" in p.stderr, f"a missing CSV: exit 2 ({p.stderr.strip()!r})")

t.done()

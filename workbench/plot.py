#!/usr/bin/env python3
"""gpumodel plot: one metric of a sweep's merged.csv against one axis, through gnuplot, as PNG and SVG.
See HELP below (also `gpumodel plot --help`) and README.md, Workbench."""

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wbcommon as wb  # noqa: E402

HELP = """\
usage: gpumodel plot MERGED.csv --x AXIS --y METRIC [--lines AXIS] [--where KEY=VALUE ...]
                                [--out PREFIX] [--title T] [--logx]

Draws METRIC (a column of a sweep's merged.csv: signal_to_wake_ns, present_to_scanout_ns.mean ...)
against AXIS, the mean over the runs at each x (the seeds) with min/max error bars when there are
several, one line per value of --lines. Writes PREFIX.png and PREFIX.svg through gnuplot (pngcairo,
else png; svg) and prints the plotted table. An x axis whose values are not all numbers (C1, C1E ...)
is categorical, in the sweep's order; a numeric one is sorted.

Every other axis of the sweep must take one value among the rows plotted: pick it with --where
(repeatable, exact match on the CSV cell) or draw it as --lines. Runs with no number in the METRIC
column (a refused or crashed run) are left out and counted on stderr; failed runs that have the
metric are plotted (an underflow sweep's failing runs are its data). true/false plot as 1/0.

options:
  --x AXIS           the x column (an axis of the sweep)
  --y METRIC         the y column
  --lines AXIS       one line per value of this column
  --where KEY=VALUE  keep only rows whose KEY column is VALUE
  --out PREFIX       output prefix (default: beside the CSV, METRIC_vs_AXIS; for a CSV in the
                     source tree, ./build/plots/METRIC_vs_AXIS under the working directory)
  --title T          the plot's title (default: METRIC against AXIS)
  --logx             logarithmic x axis (numeric x only)
Exit code: 0 written, 1 gnuplot failed, 2 bad input.
"""


def read_csv(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        raise wb.BadInput(f"'{path}': cannot read: {e.strerror}")
    except (csv.Error, UnicodeDecodeError) as e:
        raise wb.BadInput(f"'{path}': not a CSV file ({e})")
    if not rows:
        raise wb.BadInput(f"'{path}': empty; a sweep's merged.csv has a header and a row per run")
    header = rows[0]
    axes = wb.axis_columns(header)
    if axes is None:
        raise wb.BadInput(f"'{path}': no '{wb.SEED}' and '{wb.EXIT_CODE}' columns: not a sweep's merged.csv")
    return header, axes, [dict(zip(header, r)) for r in rows[1:] if len(r) == len(header)]


def column(header, axes, name, option):
    if name not in header:
        metrics = [c for c in header if c not in axes and not c.startswith(wb.HOST_PREFIX)
                   and c not in (wb.RUN, wb.POINT, wb.SEED, wb.EXIT_CODE, wb.VERDICT, wb.WHY)]
        raise wb.BadInput(f"{option} {name}: no such column; axes: {', '.join(axes) or 'none'}; "
                          f"metrics: {', '.join(metrics[:40])}{' ...' if len(metrics) > 40 else ''}"
                          + wb.did_you_mean(wb.suggest(name, header)))
    return name


def ordered(values):
    """Distinct values: numerically sorted when all are numbers, else in order of first appearance."""
    distinct = list(dict.fromkeys(values))
    if all(wb.as_number(v) is not None for v in distinct):
        return sorted(distinct, key=lambda v: wb.as_number(v)), True
    return distinct, False


def gp_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def fmt(x):
    return f"{x:.10g}"


def main(argv):
    ap = argparse.ArgumentParser(prog="gpumodel plot", usage=argparse.SUPPRESS, add_help=False)
    ap.add_argument("-h", "--help", action="store_true")
    ap.add_argument("csv", nargs="?")
    ap.add_argument("--x")
    ap.add_argument("--y")
    ap.add_argument("--lines")
    ap.add_argument("--where", action="append", default=[])
    ap.add_argument("--out")
    ap.add_argument("--title")
    ap.add_argument("--logx", action="store_true")
    a = ap.parse_args(argv)
    if a.help:
        print(HELP, end="")
        return 0
    if not a.csv or not a.x or not a.y:
        ap.error("MERGED.csv, --x AXIS and --y METRIC are required (--help)")
    try:
        return plot(a)
    except wb.BadInput as e:
        wb.fail_bad_input("plot", str(e))


def plot(a):
    header, axes, rows = read_csv(a.csv)
    x = column(header, axes, a.x, "--x")
    y = column(header, axes, a.y, "--y")
    lines = column(header, axes, a.lines, "--lines") if a.lines else None
    if lines in (x, y) or x == y:
        raise wb.BadInput("--x, --y and --lines must name three different columns")
    for w in a.where:
        key, sep, value = w.partition("=")
        if not sep:
            raise wb.BadInput(f"--where {w}: expected KEY=VALUE")
        column(header, axes, key, "--where")
        kept = [r for r in rows if r[key] == value]
        if not kept:
            seen = ", ".join(ordered(r[key] for r in rows)[0][:20])
            raise wb.BadInput(f"--where {w}: no row has {key} = '{value}'; it takes: {seen}")
        rows = kept
    for axis in axes:
        if axis in (x, lines):
            continue
        values = ordered(r[axis] for r in rows)[0]
        if len(values) > 1:
            raise wb.BadInput(f"axis {axis} takes {len(values)} values ({', '.join(values[:10])}) in the "
                              f"rows plotted: draw it with --lines {axis} or pick one with --where {axis}=VALUE")
    bools = {"true": 1.0, "false": 0.0}
    as_y = (lambda v: bools.get(v)) if rows and all(r[y] in bools for r in rows) else wb.as_number
    plotted = [r for r in rows if as_y(r[y]) is not None]
    left_out = [r for r in rows if as_y(r[y]) is None]
    if left_out:
        kinds = ", ".join(sorted({f"{r[wb.VERDICT]} (exit {r[wb.EXIT_CODE] or 'none'})" for r in left_out}))
        print(f"gpumodel plot: {len(left_out)} of {len(rows)} runs have no number in {y} and are left out: "
              f"{kinds}", file=sys.stderr)
    if not plotted:
        raise wb.BadInput(f"--y {y}: no run has a number in this column: nothing to plot")
    xs, numeric_x = ordered(r[x] for r in plotted)
    if a.logx and (not numeric_x or any(wb.as_number(v) <= 0 for v in xs)):
        raise wb.BadInput(f"--logx: the x axis {x} must be numbers above 0")
    line_values = ordered(r[lines] for r in plotted)[0] if lines else [None]
    table, several = [], False
    for lv in line_values:
        block = []
        for i, xv in enumerate(xs):
            ys = [as_y(r[y]) for r in plotted if r[x] == xv and (lines is None or r[lines] == lv)]
            if ys:
                several |= len(ys) > 1
                block.append((i, xv, sum(ys) / len(ys), min(ys), max(ys), len(ys)))
        table.append((lv, block))

    gnuplot = shutil.which("gnuplot")
    if gnuplot is None:
        raise wb.BadInput("gnuplot is not installed (apt-get install gnuplot-nox)")
    # Default: beside the CSV (a sweep's directory under build/), unless that is in the source tree;
    # then under the working directory's build/plots/.
    name = f"{y}_vs_{x}".replace("/", "_")
    beside = os.path.dirname(os.path.abspath(a.csv))
    prefix = a.out or (os.path.join(beside, name) if wb.in_source_tree(beside) is None
                       else os.path.join(wb.default_out("--out PREFIX", "plots"), name))
    os.makedirs(os.path.dirname(os.path.abspath(prefix)) or ".", exist_ok=True)
    terminals = subprocess.run([gnuplot, "-e", "set terminal"], capture_output=True, text=True)
    png_term = "pngcairo" if "pngcairo" in terminals.stdout + terminals.stderr else "png"
    title = a.title or (f"{y} against {x}" + (f", by {lines}" if lines else ""))
    note = "mean over seeds, min/max bars" if several else None

    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data.dat")
        with open(data, "w") as f:
            for lv, block in table:
                for i, xv, mean, lo, hi, n in block:
                    xpos = fmt(wb.as_number(xv)) if numeric_x else str(i)
                    f.write(f"{xpos} {fmt(mean)} {fmt(lo)} {fmt(hi)} {n}\n")
                f.write("\n\n")
        style = "yerrorlines" if several else "linespoints"
        using = "1:2:3:4" if several else "1:2"
        plots = []
        for k, (lv, block) in enumerate(table):
            if not block:
                continue
            label = f"{lines} = {lv}" if lines else y
            plots.append(f"{gp_string(data)} index {k} using {using} with {style} lw 2 pt 7 ps 0.8 "
                         f"title {gp_string(label)}")
        setup = [
            "set termoption noenhanced",
            f"set title {gp_string(title + (' (' + note + ')' if note else ''))}",
            f"set xlabel {gp_string(x)}",
            f"set ylabel {gp_string(y)}",
            "set grid",
            "set key outside bottom center horizontal",
            "set bmargin 6",
            "set format y '%.10g'",
        ]
        if numeric_x:
            if a.logx:
                setup.append("set logscale x")
            else:
                lo, hi = wb.as_number(xs[0]), wb.as_number(xs[-1])
                pad = (hi - lo) * 0.04 or 1.0
                setup.append(f"set xrange [{fmt(lo - pad)}:{fmt(hi + pad)}]")
                if len(xs) <= 8:  # a few values (link.gen 3, 4, 5): tics at the values, not between
                    setup.append(f"set xtics ({', '.join(fmt(wb.as_number(v)) for v in xs)})")
        else:
            tics = ", ".join(f"{gp_string(v)} {i}" for i, v in enumerate(xs))
            setup += [f"set xtics ({tics})", f"set xrange [-0.4:{len(xs) - 0.6}]"]
        script = "\n".join(
            [f"set terminal {png_term} size 960,600 noenhanced", f"set output {gp_string(prefix + '.png')}"]
            + setup + ["plot " + ", ".join(plots)]
            + ["set terminal svg size 960,600 dynamic noenhanced", f"set output {gp_string(prefix + '.svg')}",
               "replot", "set output"]) + "\n"
        p = subprocess.run([gnuplot], input=script, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"gpumodel plot: gnuplot failed (exit {p.returncode}): {' '.join(p.stderr.split())}", file=sys.stderr)
        return 1
    for ext in (".png", ".svg"):
        if not os.path.isfile(prefix + ext) or os.path.getsize(prefix + ext) == 0:
            print(f"gpumodel plot: gnuplot wrote no {prefix + ext}: {' '.join(p.stderr.split())}", file=sys.stderr)
            return 1

    width = max([len(x)] + [len(str(xv)) for xv in xs])
    for lv, block in table:
        if lines:
            print(f"{lines} = {lv}")
        print(f"  {x:<{width}}  {'mean':>16}  {'min':>16}  {'max':>16}  n")
        for i, xv, mean, lo, hi, n in block:
            print(f"  {xv:<{width}}  {mean:>16.10g}  {lo:>16.10g}  {hi:>16.10g}  {n}")
    print(f"plot: {prefix}.png, {prefix}.svg ({png_term}; {len(plotted)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

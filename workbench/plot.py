#!/usr/bin/env python3
"""gpumodel plot: one metric of a sweep's merged.csv against one axis, through gnuplot, as PNG and SVG.
See HELP below (also `gpumodel plot --help`) and README.md, Workbench."""

import argparse
import csv
import io
import os
import shutil
import subprocess
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plotlabels as labels  # noqa: E402
import wbcommon as wb  # noqa: E402

HELP = """\
usage: gpumodel plot MERGED.csv --x AXIS --y METRIC [--lines AXIS] [--where KEY=VALUE ...]
                                [--out PREFIX] [--title T] [--xlabel TEXT] [--ylabel TEXT]
                                [--logx] [--logy] [--categorical] [--script FILE]

Draws METRIC (a column of a sweep's merged.csv: signal_to_wake_ns, present_to_scanout_ns.mean ...)
against AXIS, the mean over the runs at each x (the seeds) with min/max error bars when there are
several, one line per value of --lines. Writes PREFIX.png and PREFIX.svg through gnuplot (pngcairo,
else png; svg; the same CSV and options give the same bytes) and prints the plotted table, in the
CSV's units, and each axis's label and scale.

Axis labels say what a column is and its unit, from its name: the model's metric names and parameter
keys end in their unit (_ps _ns _us _ms _s, _bytes _kb _mb, _mbps _gbps, _mj, _mw, _hz _mhz, _pct,
fps, pJ/bit, mW/GiB). signal_to_wake_ns reads "signal to wake (µs)", display.fifo_bytes "display FIFO
(KiB)", present_to_scanout_ns.mean "present to scan-out, mean (ms)", link.gen "link generation".
The values are scaled to the unit their range calls for, so ticks keep to four digits before the
point: times in ps, ns, µs, ms or s; bytes in B, KiB, MiB or GiB; bandwidth in B/s .. GB/s (decimal);
energy nJ .. kJ; power µW .. kW; frequency Hz .. GHz; % and fps as they are; a count from 10,000 up
in thousands, millions. The label names the unit chosen. --lines' legend reads "link.gen = 4",
"display.fifo_bytes = 16 KiB", "cpu.thread_wake_ns = 3 µs": a row under the plot, or a column at
its right when a row would not fit.

An x axis whose values are not all numbers (C1, C1E ..., one_copy, two_copy, true/false) is
categorical: the categories in the sweep's order (first appearance in the CSV) as the x tics, the
mean at each drawn as a point (with min/max bars), not joined by lines, several lines' points side
by side. --categorical draws a numeric axis that way too (link.gen 3, 4, 5 as three generations). A
numeric x is sorted and each line joins its points.

Every other axis of the sweep must take one value among the rows plotted: pick it with --where
(repeatable, exact match on the CSV cell) or draw it as --lines. Runs with no number in the METRIC
column (a refused or crashed run) are left out and counted on stderr; failed runs that have the
metric are plotted (an underflow sweep's failing runs are its data). true/false plot as 1/0, the
y tics reading false and true.

options:
  --x AXIS           the x column (an axis of the sweep)
  --y METRIC         the y column
  --lines AXIS       one line (or set of points) per value of this column
  --where KEY=VALUE  keep only rows whose KEY column is VALUE
  --out PREFIX       output prefix (default: beside the CSV, METRIC_vs_AXIS; for a CSV in the
                     source tree, ./build/plots/METRIC_vs_AXIS under the working directory)
  --title T          the plot's title (default: METRIC against AXIS, by LINES, the columns' names)
  --xlabel TEXT      the x axis's words instead of the derived ones; the unit the values are
                     scaled to is still appended, "TEXT (µs)"
  --ylabel TEXT      the same for the y axis
  --logx             logarithmic x axis: numeric x only, every x above 0; tics at the values
                     (8 or fewer), else 1, 2, 5 a decade, or round steps within one decade
  --logy             logarithmic y axis: every run's METRIC above 0; tics as --logx's
  --categorical      the x values as categories in the sweep's order, drawn as points
  --script FILE      also write the gnuplot script to FILE, the plotted data inline:
                     `gnuplot FILE` redraws the plot (edit it to restyle)
Exit code: 0 written, 1 gnuplot failed, 2 bad input (unknown column, an axis left open, a log
axis over a value at or below 0 or over categories: the message names the column and a run).
"""


def read_csv(path):
    raw = wb.read_bounded(path, "merged CSV", wb.MAX_DATA_BYTES)
    try:
        rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
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


# Categories with several lines: each line's points this far (in categories) from the next one's, less
# when there are more than 6 lines so that they stay within their category.
DODGE = 0.12
# gnuplot point types, one per line: filled circle, square, triangle up, triangle down, diamond, pentagon.
POINT_TYPES = [7, 5, 9, 11, 13, 15]


def refuse_non_positive(option, what, column_name, rows, x):
    """A log axis: every value plotted must be above 0, else exit 2 naming the column and a run."""
    for value, r in rows:
        if value is not None and value <= 0:
            count = sum(1 for v, _ in rows if v is not None and v <= 0)
            raise wb.BadInput(f"{option}: {what} has {r[column_name]} (run {r[wb.RUN]}, {x} = {r[x]}"
                              f"{f', and {count - 1} more runs at 0 or below' if count > 1 else ''}): a log axis "
                              f"needs values above 0; drop {option}, or leave those runs out with --where")


def log_range(axis, lo, hi, tics=True):
    """A log axis's range, the data and a margin, and tics a reader can read (labels.log_tics)."""
    pad = (hi / lo) ** 0.04 if hi > lo else 1.1
    lo, hi = lo / pad, hi * pad
    tics = labels.log_tics(lo, hi) if tics else None
    return [f"set {axis}range [{fmt(lo)}:{fmt(hi)}]"] + ([f"set {axis}tics ({', '.join(fmt(v) for v in tics)})"]
                                                         if tics else [])


def scaled(divisor):
    return f": the CSV's values / {fmt(divisor)}" if divisor != 1 else ""


def gp_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


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
    ap.add_argument("--logy", action="store_true")
    ap.add_argument("--categorical", action="store_true")
    ap.add_argument("--xlabel")
    ap.add_argument("--ylabel")
    ap.add_argument("--script")
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


def default_prefix(csv, name):
    """Default: beside the CSV (a sweep's directory under build/), unless that is in the source tree;
    then under the working directory's build/plots/."""
    beside = os.path.dirname(os.path.abspath(csv))
    if wb.in_source_tree(beside) is None:
        return os.path.join(beside, name)
    return os.path.join(wb.default_out("--out PREFIX", "plots"), name)


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
    if a.categorical:  # the sweep's order, even for numbers (link.gen 3, 4, 5 as three categories)
        xs, numeric_x = list(dict.fromkeys(r[x] for r in plotted)), False
    else:
        xs, numeric_x = ordered(r[x] for r in plotted)
    x_numbers = all(wb.as_number(v) is not None for v in xs)
    if a.logx:
        if not numeric_x:
            why = "drawn as categories (--categorical)" if a.categorical and x_numbers else "categorical"
            raise wb.BadInput(f"--logx: the x axis {x} is {why} ({', '.join(xs[:10])}): a log axis needs numbers")
        refuse_non_positive("--logx", f"the x axis {x}", x, [(wb.as_number(r[x]), r) for r in plotted], x)
    if a.logy:
        refuse_non_positive("--logy", f"the y column {y}", y, [(as_y(r[y]), r) for r in plotted], x)
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

    # Labels and scales: words and unit from the column names, the unit chosen by the values' range.
    x_words, x_unit = labels.describe(x)
    y_words, y_unit = labels.describe(y)
    y_bool = as_y is not wb.as_number
    if y_bool:
        y_unit = None
    x_symbol, x_div = labels.choose_scale(x_unit, [wb.as_number(v) for v in xs]) if x_numbers else ("", 1.0)
    y_symbol, y_div = (labels.choose_scale(y_unit, [v for _, block in table for row in block for v in row[2:5]])
                       if not y_bool else ("", 1.0))
    x_label = labels.axis_label(x_words if a.xlabel is None else a.xlabel, x_symbol)
    y_label = labels.axis_label(y_words if a.ylabel is None else a.ylabel, y_symbol)
    lines_unit = labels.describe(lines)[1] if lines else None

    gnuplot = shutil.which("gnuplot")
    if gnuplot is None:
        raise wb.BadInput("gnuplot is not installed (apt-get install gnuplot-nox)")
    prefix = a.out or default_prefix(a.csv, f"{y}_vs_{x}".replace("/", "_"))
    # The folder --out names must exist (as for the model's outputs); the default one under build/ is made.
    made = () if a.out else (os.path.dirname(os.path.abspath(prefix)),)
    outputs = [("--out PREFIX (its .png)", prefix + ".png"), ("--out PREFIX (its .svg)", prefix + ".svg")]
    if a.script:
        outputs.append(("--script", a.script))
    wb.check_outputs(outputs, [("the merged CSV", a.csv)], may_create=made)
    if made:
        os.makedirs(made[0], exist_ok=True)
    terminals = subprocess.run([gnuplot, "-e", "set terminal"], capture_output=True, text=True)
    png_term = "pngcairo" if "pngcairo" in terminals.stdout + terminals.stderr else "png"
    title = a.title or (f"{y} against {x}" + (f", by {lines}" if lines else ""))
    note = "mean over seeds, min/max bars" if several else None

    table = [(lv, block) for lv, block in table if block]
    # The data inline (a datablock, one index per line): the script alone redraws the plot.
    data = ["$data << EOD"]
    for k, (lv, block) in enumerate(table):
        # Categories: the lines' points side by side around each category, not on top of each other.
        dodge = (k - (len(table) - 1) / 2) * min(DODGE, 0.8 / len(table)) if not numeric_x else 0.0
        data.append(f"# {lines} = {lv}" if lines else f"# {y}")
        for i, xv, mean, lo, hi, n in block:
            xpos = fmt(wb.as_number(xv) / x_div) if numeric_x else fmt(i + dodge)
            data.append(f"{xpos} {fmt(mean / y_div)} {fmt(lo / y_div)} {fmt(hi / y_div)} {n}")
        data += ["", ""]
    data.append("EOD")
    if numeric_x:  # a trend along a number: lines
        style, size = ("yerrorlines" if several else "linespoints"), 0.8
    else:  # categories have no order between them to draw: points only
        style, size = ("yerrorbars" if several else "points"), 1.3
    using = "1:2:3:4" if several else "1:2"
    plots, legend = [], []
    for k, (lv, block) in enumerate(table):
        label = f"{lines} = {labels.value_text(lines_unit, lv)}" if lines else y_label
        legend.append(label)
        plots.append(f"$data index {k} using {using} with {style} lw 2 "
                     f"pt {POINT_TYPES[k % len(POINT_TYPES)]} ps {size} title {gp_string(label)}")
    full_title = "\n".join(textwrap.wrap(title + (" (" + note + ")" if note else ""), 120)[:3])
    setup = [
        "set encoding utf8",
        "set termoption noenhanced",
        # The title centred on the canvas (a plot narrowed by a legend at its right would push gnuplot's
        # title off the left edge), wrapped to a second line when too long for the width.
        f"set label 1 {gp_string(full_title)} at screen 0.5, screen 0.97 center front",
        f"set tmargin {3 + full_title.count(chr(10))}",
        f"set xlabel {gp_string(x_label)}",
        f"set ylabel {gp_string(y_label)}",
        "set grid",
        "set format y '%g'",
        "set format x '%g'",
    ]
    # The legend in one or two rows under the plot while it fits the width (gnuplot gives every entry
    # the longest one's width: about 8 px a character and 70 for the sample), else a column at the
    # right: many lines' entries never overlap the plot or the x label.
    per_row = max(1, 900 // (8 * max(len(t) for t in legend) + 70))
    rows = -(-len(legend) // per_row)
    if not lines:  # one curve: the y label says what it is
        setup += ["unset key"]
    elif rows <= 2:
        setup += ["set key outside bottom center horizontal", f"set bmargin {5 + rows}"]
    else:
        setup += ["set key outside right top vertical"]
    if a.logy:
        values = [v / y_div for _, block in table for row in block for v in row[2:5]]
        setup += ["set logscale y"] + log_range("y", min(values), max(values))
    elif y_bool:
        setup += ["set ytics ('false' 0, 'true' 1)", "set yrange [-0.1:1.1]"]
    else:  # the data's range and a margin, so that no point lies on the frame (underflows = 0)
        setup += ["set autoscale yfix", "set offsets 0, 0, graph 0.05, graph 0.05"]
    if numeric_x:
        lo, hi = wb.as_number(xs[0]) / x_div, wb.as_number(xs[-1]) / x_div
        if a.logx:
            setup += ["set logscale x"] + log_range("x", lo, hi, tics=len(xs) > 8)
        else:
            pad = (hi - lo) * 0.04 or 1.0
            setup.append(f"set xrange [{fmt(lo - pad)}:{fmt(hi + pad)}]")
        if len(xs) <= 8:  # a few values (link.gen 3, 4, 5; fps 1, 2, 5, 10, 30): tics at the values
            setup.append(f"set xtics ({', '.join(fmt(wb.as_number(v) / x_div) for v in xs)})")
    else:
        shown = [labels.number(wb.as_number(v) / x_div) for v in xs] if x_numbers else xs
        tics = ", ".join(f"{gp_string(v)} {i}" for i, v in enumerate(shown))
        setup += [f"set xtics ({tics})", f"set xrange [-0.5:{len(xs) - 0.5}]", "set grid noxtics"]
    def script_for(png, svg):
        return "\n".join(
            data + [f"set terminal {png_term} size 960,600 noenhanced", f"set output {gp_string(png)}"]
            + setup + ["plot " + ", ".join(plots)]
            + ["set terminal svg size 960,600 dynamic noenhanced", f"set output {gp_string(svg)}",
               "replot", "set output"]) + "\n"

    if a.script:  # the script names the plots' own files: run alone, it redraws them
        wb.write_whole("--script", a.script, script_for(prefix + ".png", prefix + ".svg"))
    # gnuplot draws into files beside the plots, put in place only when both are whole: a failed run
    # leaves the plots that were there.
    tmp = {ext: wb.temp_beside(prefix + ext) for ext in (".png", ".svg")}
    try:
        p = subprocess.run([gnuplot], input=script_for(tmp[".png"], tmp[".svg"]), capture_output=True, text=True)
        if p.returncode != 0:
            print(f"gpumodel plot: gnuplot failed (exit {p.returncode}): {' '.join(p.stderr.split())}",
                  file=sys.stderr)
            return 1
        for ext in (".png", ".svg"):
            if os.path.getsize(tmp[ext]) == 0:
                print(f"gpumodel plot: gnuplot wrote no {prefix + ext}: {' '.join(p.stderr.split())}", file=sys.stderr)
                return 1
        for ext in (".png", ".svg"):
            wb.put_in_place(tmp[ext], prefix + ext)
    finally:
        for t in tmp.values():
            if os.path.lexists(t):
                os.unlink(t)

    width = max([len(x)] + [len(str(xv)) for xv in xs])
    for lv, block in table:
        if lines:
            print(f"{lines} = {lv}")
        print(f"  {x:<{width}}  {'mean':>16}  {'min':>16}  {'max':>16}  n")
        for i, xv, mean, lo, hi, n in block:
            print(f"  {xv:<{width}}  {mean:>16.10g}  {lo:>16.10g}  {hi:>16.10g}  {n}")
    print(f"x axis: {x_label}{scaled(x_div)}{' (log)' if a.logx else ''}{' (categories)' if not numeric_x else ''}")
    print(f"y axis: {y_label}{scaled(y_div)}{' (log)' if a.logy else ''}")
    print(f"plot: {prefix}.png, {prefix}.svg ({png_term}; {len(plotted)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

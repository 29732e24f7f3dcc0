#!/usr/bin/env python3
"""gpumodel sensitivity: which assumptions decide an answer. Varies each assumed parameter of a
scenario over its uncertainty, one at a time, through `gpumodel sweep` (locally or on Slurm), and
reports the metric's swing per parameter, largest first: a tornado table and plot. With --versus, the
answer is the difference between the scenario and the scenario with one key changed (native fences
against monitored ones), and the table says which assumptions flip its sign.
See HELP below (also `gpumodel sensitivity --help`) and docs/workbench.md."""

import argparse
import csv
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from fnmatch import fnmatchcase

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wbcommon as wb  # noqa: E402
from sweepfile import scenario_name  # noqa: E402

HELP = """\
usage: gpumodel sensitivity SCENARIO --metric NAME [--versus KEY=VALUE] [--keys PATTERN ...]
                            [--factors LO,HI] [--set KEY=VALUE ...] [--top N] [--out DIR] [--jobs N]
                            [--slurm [--runs-per-task K] [--sbatch-arg=ARG ...]] [--dry-run]
                            [--gpumodel PATH]

Which assumptions decide an answer. SCENARIO is a scenario file or a NAME (scenarios/NAME.ini).
Each varied parameter runs twice, at its default times LO and times HI (default 0.5 and 2), the
others at the scenario's values; the swing of --metric (a results metric: `energy.total_mj`,
`signal_to_wake_ns`) is the spread of the three values, and the table lists the parameters by swing,
largest first.

Varied: every real or integer parameter the scenario sees whose source is an assumption (its kind
tag, before the colon in `gpumodel --list-params`, holds A: `A`, `Q/A`), with a range of allowed
values (not a set), a positive default and a unit that is a quantity. Left alone: counts of the
platform's structure (nodes, queues, displays), fault injections (`*_fails_*`), the monitors' own
bounds (`monitor.*`), and what --set or --versus fixes. A source that states its uncertainty
("uncertainty x0.5-x3", "uncertainty +-30 %") gives that parameter its own factors. Each value is
clipped to the parameter's allowed range; an integer is rounded. The values scaled are the ones the
scenario runs with (its platform file's, its own file's, --set's: one run finds them first, even with
--dry-run); a key its platform file sets takes that file's source, so `assumption:` there makes it an
assumption and `source:` a sourced value, whatever the built-in default's tag.

  --metric NAME        the figure to explain (a key of the results' metrics, nested ones dotted)
  --versus KEY=VALUE   the answer is metric(scenario) - metric(scenario with KEY=VALUE), both at
                       each varied value: the table shows the answer's swing and, per parameter,
                       whether its low or high value flips the answer's sign (FLIPS)
  --keys PATTERN       vary only the assumed parameters matching a shell pattern (power.*);
                       repeatable
  --factors LO,HI      the factors for parameters whose source states none (default 0.5,2)
  --set KEY=VALUE      a value every run takes (repeatable)
  --top N              rows printed (default 15; the files hold all)
  --out DIR            output directory (default build/sensitivity/<scenario>-<metric> under the
                       working directory; an earlier study's there is replaced)
  --jobs, --slurm, --runs-per-task, --sbatch-arg, --dry-run, --gpumodel: as gpumodel sweep's

DIR: sweep.ini (the one-at-a-time sweep), base/ (its sweep; versus/ with --versus),
     tornado.csv (every parameter: default, low and high values, the metric at each, swing, flip),
     tornado.markdown (the same as a Markdown table), tornado.png and tornado.svg (the plot, gnuplot).
Exit code: 0 written; 1 the scenario's own run failed, or gnuplot failed; 2 bad input (an unknown
metric or key, nothing to vary, a bad option).
"""

TOOL = "sensitivity"
# Units of counts that shape the platform or the workload rather than measure a quantity.
STRUCTURE_UNITS = {"cores", "nodes", "queues", "displays", "pipe", "resets", "frame", "frames", "degrees", "engines", "signals"}


def kind_tag(source):
    """The kind tag of a parameter's source: 'A', 'Q/A', 'Q (low confidence)', ..."""
    return source.split(":", 1)[0].strip() if ":" in source else ""


def is_assumption(source):
    return re.search(r"(^|[/\s(])A($|[/\s)])", kind_tag(source)) is not None


def allowed_range(allowed):
    """(lo, hi) of 'a number in [a, b] unit' or 'an integer in [a, b] unit'; None for a set."""
    m = re.search(r"in \[([-0-9.e+]+), ([-0-9.e+]+)\]", allowed)
    return (float(m.group(1)), float(m.group(2))) if m else None


def stated_factors(source):
    """Factors a source states: 'uncertainty x0.5-x3' (or the multiplication sign), 'uncertainty +-30 %'."""
    m = re.search(r"uncertainty\s*[x\u00d7]\s*([0-9.]+)\s*(?:-|\u2013|to)\s*[x\u00d7]?\s*([0-9.]+)", source)
    if m:
        return float(m.group(1)), float(m.group(2))
    m = re.search(r"uncertainty\s*(?:\+-|\u00b1)\s*([0-9.]+)\s*%", source)
    if m:
        p = float(m.group(1)) / 100
        return max(0.0, 1 - p), 1 + p
    return None


def number_text(x, integer):
    if integer:
        return str(int(round(x)))
    return f"{x:.10g}"


def platform_sources(gpumodel, platform):
    """The sources a platform file gives its keys ({key: "A: ..." or "Q: ..."}), by the platform's
    name as the results record it; {} for a platform the binary does not list (a file of the user's)."""
    try:
        out = subprocess.run([gpumodel, "--list-platforms-json"], capture_output=True, timeout=60)
        files = json.loads(out.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return {}
    for f in files if isinstance(files, list) else []:
        if f.get("name") == platform:
            # A platform file's "assumption: why" is an assumption; its "source: where" a quoted or
            # derived value.
            def tag(src):
                return "A: " if src.startswith("assumption:") else "D: " if src.startswith("source: derived") else "Q: "

            return {e["key"]: tag(e.get("source", "")) + e.get("source", "").split(":", 1)[-1].strip()
                    for e in f.get("entries", [])}
    return {}


def plan(params, patterns, fixed, factors, values=None, sources=None):
    """The varied parameters: [(name, default, unit, source, lo_text, hi_text, origin)], and the ones
    left alone that a pattern named: [(name, why)]. `values`: what the scenario runs with (its results'
    parameters), `sources`: its platform file's sources; each overrides the built-in default's."""
    values, sources = values or {}, sources or {}
    varied, skipped = [], []
    for p in params:
        name = p["name"]
        if name in values and not isinstance(values[name], bool):
            p = dict(p, default=str(values[name]))
        if name in sources:
            p = dict(p, source=sources[name])
        if patterns and not any(fnmatchcase(name, pat) for pat in patterns):
            continue
        why = None
        rng = allowed_range(p.get("allowed", ""))
        if p["kind"] not in ("real", "int"):
            why = f"{'an' if p['kind'][:1] in 'aeiou' else 'a'} {p['kind']} parameter"
        elif not is_assumption(p.get("source", "")):
            why = f"not an assumption: kind {kind_tag(p.get('source', '')) or 'none'}"
        elif name in fixed:
            why = "fixed by --set or --versus"
        elif rng is None:
            why = "a set of allowed values, not a range"
        elif name.startswith("monitor.") or "_fails_" in name:
            why = "a monitor's bound or a fault injection"
        elif p.get("unit", "") in STRUCTURE_UNITS:
            why = f"a count of the platform's structure, in {p.get('unit')}"
        else:
            try:
                d = float(p["default"])
            except ValueError:
                d = None
            if d is None or d <= 0:
                why = "no positive default to scale"
        if why:
            skipped.append((name, why))
            continue
        d = float(p["default"])
        own = stated_factors(p.get("source", ""))
        f_lo, f_hi = own or factors
        integer = p["kind"] == "int"
        lo = min(max(d * f_lo, rng[0]), rng[1])
        hi = min(max(d * f_hi, rng[0]), rng[1])
        lo_t, hi_t = number_text(lo, integer), number_text(hi, integer)
        d_t = number_text(d, integer)
        if lo_t == d_t and hi_t == d_t:
            skipped.append((name, "its range leaves no room to move"))
            continue
        origin = f"source x{own[0]:g}-x{own[1]:g}" if own else f"default x{f_lo:g}-x{f_hi:g}"
        varied.append({"name": name, "default": d_t, "unit": p.get("unit", ""), "source": p.get("source", ""),
                       "lo": lo_t, "hi": hi_t, "origin": origin})
    return varied, skipped


def parse_assignment(option, text):
    if "=" not in text or not re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_]+)+", text.split("=", 1)[0]):
        raise wb.BadInput(f"{option} {wb.echo(text)}: not KEY=VALUE (section.key=value)")
    k, v = text.split("=", 1)
    return k, v


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="gpumodel sensitivity", usage=argparse.SUPPRESS, add_help=False,
                                 formatter_class=argparse.RawDescriptionHelpFormatter, description=HELP)
    ap.add_argument("-h", "--help", action="store_true")
    ap.add_argument("scenario", nargs="?")
    ap.add_argument("--metric")
    ap.add_argument("--versus")
    ap.add_argument("--keys", action="append", default=[])
    ap.add_argument("--factors")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--top", type=int, default=15)
    wb.add_run_options(ap)
    a = ap.parse_args(argv)
    if a.help:
        print(HELP, end="")
        sys.exit(0)
    if not a.scenario:
        ap.error("a scenario is required: gpumodel sensitivity SCENARIO --metric NAME (--help)")
    if not a.metric:
        ap.error("--metric is required: the results metric to explain (energy.total_mj)")
    if a.top < 1:
        ap.error(f"argument --top: {a.top} is not allowed; at least 1")
    wb.check_run_options(ap, a)
    return a


def resolve_scenario(given):
    if os.path.isfile(given):
        return os.path.abspath(given)
    named = os.path.join(wb.REPO_ROOT, "scenarios", given + ".ini")
    if "/" not in given and not given.endswith(".ini") and os.path.isfile(named):
        return named
    names = sorted(os.path.splitext(f)[0] for f in os.listdir(os.path.join(wb.REPO_ROOT, "scenarios"))
                   if f.endswith(".ini"))
    raise wb.BadInput(f"scenario {wb.echo(given)}: no such file, and no scenarios/{wb.echo(given)}.ini"
                      + wb.did_you_mean(wb.suggest(os.path.splitext(os.path.basename(given))[0], names)))


def catalogue_params(gpumodel, scenario):
    name = scenario_name(scenario)
    cat = wb.param_catalogue(gpumodel)
    scenarios = {s["name"]: s for s in cat.get("scenarios", [])}
    if name not in scenarios:
        raise wb.BadInput(f"{scenario}: names scenario '{name}', which this gpumodel does not have")
    return cat.get("platform", []) + scenarios[name].get("params", [])


def baseline_metric(gpumodel, scenario, fixed, metric, out):
    """Runs the scenario once as the study will (its own values, --set): the metric must be a number
    there, or the study would run for nothing."""
    path = os.path.join(out, "check.json")
    args = [gpumodel, scenario, *[f"--{k}={v}" for k, v in fixed.items()], "--quiet", "--results", path]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode == 2:
        raise wb.BadInput("the scenario's own run is refused: " + " ".join(p.stderr.split()))
    try:
        with open(path) as f:
            res = json.load(f)
    except (OSError, ValueError):
        raise wb.BadInput(f"the scenario's own run wrote no results (exit {p.returncode}): "
                          + " ".join(p.stderr.split())[:300])
    finally:
        if os.path.exists(path):
            os.remove(path)
    metrics = wb.flatten(res.get("metrics") or {}, "", {})
    value = wb.as_number(wb.cell(metrics.get(metric))) if metric in metrics else None
    if value is None:
        numeric = sorted(k for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool))
        raise wb.BadInput(f"--metric {wb.echo(metric)}: not a numeric metric of this scenario's results"
                          + wb.did_you_mean(wb.suggest(metric, numeric))
                          + f"; its metrics: {', '.join(numeric[:40])}{' ...' if len(numeric) > 40 else ''}")
    return res.get("verdict"), res.get("why_failed") or [], res


def write_sweep_file(path, scenario, fixed, varied):
    lines = ["# Written by gpumodel sensitivity: each assumed parameter alone at its low and high value.",
             "[sweep]", f"scenario = {scenario}", "mode = one_at_a_time", "[axes]"]
    lines += [f"{v['name']} = {v['lo']}, {v['hi']}" for v in varied]
    if fixed:
        lines += ["[fixed]"] + [f"{k} = {v}" for k, v in fixed.items()]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def run_sweep(sweep_file, out, a, gpumodel):
    args = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "sweep.py"), sweep_file,
            "--out", out, "--gpumodel", gpumodel]
    if a.jobs:
        args += ["--jobs", str(a.jobs)]
    if a.slurm:
        args += ["--slurm"] + [f"--sbatch-arg={s}" for s in a.sbatch_arg]
        if a.runs_per_task:
            args += ["--runs-per-task", str(a.runs_per_task)]
    if a.dry_run:
        args.append("--dry-run")
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode == 2:
        raise wb.BadInput("the sweep was refused: " + " ".join(p.stderr.split()))
    last = [line for line in p.stdout.splitlines() if line.startswith("sweep: ")]
    return last[-1] if last else ""


def read_points(out, metric):
    """{(key, value) or None: (metric value or None, verdict, why)} from a sweep's merged.json."""
    with open(os.path.join(out, "merged.json")) as f:
        merged = json.load(f)
    points = {}
    for r in merged["runs"]:
        params = r.get("params") or {}
        key = None if not params else next(iter(params.items()))
        v = (r.get("metrics") or {}).get(metric)
        v = v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        points[key] = (v, r.get("verdict"), r.get("why") or "")
    return points


def sign(x):
    return (x > 0) - (x < 0)


def flips(base, lo, hi):
    """Which ends of a parameter's range change the answer's sign: '' , 'low', 'high' or 'both'. A
    zero answer has no sign to flip: moving off zero either way counts as a flip."""
    out = [side for side, v in (("low", lo), ("high", hi)) if v is not None and sign(v) != sign(base)]
    return "both" if len(out) == 2 else (out[0] if out else "")


def study(varied, base_pts, vs_pts):
    """Rows: per varied parameter, the answer at its low and high values, its swing, its flip."""
    def answer(key):
        a = base_pts.get(key, (None, "not_run", ""))
        if vs_pts is None:
            return a[0], a
        b = vs_pts.get(key, (None, "not_run", ""))
        if a[0] is None or b[0] is None:
            return None, a if a[0] is None else b
        return a[0] - b[0], a if a[1] != "pass" else b

    base, base_run = answer(None)
    rows = []
    for v in varied:
        lo, lo_run = answer((v["name"], v["lo"]))
        hi, hi_run = answer((v["name"], v["hi"]))
        vals = [x for x in (lo, base, hi) if x is not None]
        swing = max(vals) - min(vals) if len(vals) > 1 and base is not None else None
        notes = []
        for side, run in (("low", lo_run), ("high", hi_run)):
            if run[1] != "pass":
                notes.append(f"{side}: {run[1]}" + (f" ({run[2][:160]})" if run[2] else ""))
        rows.append(dict(v, answer_lo=lo, answer_hi=hi, swing=swing,
                         flip=flips(base, lo, hi) if vs_pts is not None and base is not None else "",
                         notes="; ".join(notes)))
    rows.sort(key=lambda r: (-(r["swing"] if r["swing"] is not None else math.inf), r["name"]))
    return base, base_run, rows


def fmt(x):
    return "" if x is None else f"{x:.6g}"


def tornado_csv(rows, base):
    f = io.StringIO()
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["parameter", "unit", "default", "low", "high", "range", "answer_default", "answer_low",
                "answer_high", "swing", "flips", "notes", "source"])
    for r in rows:
        w.writerow([r["name"], r["unit"], r["default"], r["lo"], r["hi"], r["origin"], fmt(base),
                    fmt(r["answer_lo"]), fmt(r["answer_hi"]), fmt(r["swing"]), r["flip"], r["notes"], r["source"]])
    return f.getvalue()


def tornado_md(rows, base, what, vs):
    head = (f"{what}: {fmt(base)} with the scenario's values" + (f" (the answer's sign flips: {vs})" if vs else ""))
    lines = [head, "", "| parameter | default | low → high | answer low | answer high | swing | flips |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| `{r['name']}` | {r['default']} {r['unit']} | {r['lo']} → {r['hi']} ({r['origin']}) | "
                     f"{fmt(r['answer_lo'])} | {fmt(r['answer_hi'])} | {fmt(r['swing'])} | {r['flip']} |")
    return "\n".join(lines) + "\n"


def gp_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def tornado_plot(rows, base, what, prefix):
    """A tornado: one bar per parameter (largest swing on top) from the default's answer to the low
    value's (blue) and to the high value's (orange). Written beside and renamed: whole or not at all."""
    gnuplot = shutil.which("gnuplot")
    if gnuplot is None:
        return "gnuplot is not installed (apt-get install gnuplot-nox): no plot"
    shown = [r for r in rows if r["swing"] is not None][:20]
    if not shown or base is None:
        return "nothing to plot"
    n = len(shown)
    data = []
    for i, r in enumerate(shown):
        y = n - i
        for side, v in ((0, r["answer_lo"]), (1, r["answer_hi"])):
            if v is not None:
                data.append(f"{min(v, base):.10g} {max(v, base):.10g} {y - 0.35 + 0.35 * side:.3f} "
                            f"{y - 0.35 + 0.35 * side + 0.33:.3f} {side}")
    ytics = ", ".join(f"{gp_string(r['name'] + ' ' + r['lo'] + '/' + r['hi'])} {n - i}" for i, r in enumerate(shown))
    tmp = {ext: wb.temp_beside(prefix + ext) for ext in (".png", ".svg")}
    values = [base] + [v for r in shown for v in (r["answer_lo"], r["answer_hi"]) if v is not None]
    # Where the answer changes sign: a solid line at 0 when the bars cross it.
    zero = "set arrow from 0, graph 0 to 0, graph 1 nohead lc rgb \"#555555\"\n" if min(values) < 0 < max(values) else ""

    def script(term, path):
        return f"""set terminal {term} noenhanced
set output {gp_string(path)}
set title {gp_string(what)} font ",10"
set ytics ({ytics}) font ",9"
set yrange [0.3:{n + 0.7}]
set xlabel {gp_string('answer (default: ' + fmt(base) + ')')}
set grid xtics
set key outside bottom center horizontal
set bmargin 6
{zero}set arrow from {base:.10g}, graph 0 to {base:.10g}, graph 1 nohead dt 2
$d << EOD
{chr(10).join(data)}
EOD
plot $d using (($1+$2)/2):(($3+$4)/2):1:2:3:4:($5 == 0 ? 0x1f77b4 : 0xff7f0e) with boxxyerror fs solid 0.8 lc rgb variable notitle, \\
     NaN with boxes fs solid lc rgb "#1f77b4" title "low value", NaN with boxes fs solid lc rgb "#ff7f0e" title "high value"
"""
    height = 150 + 28 * n
    text = (script(f"pngcairo size 1000,{height}", tmp[".png"]) + script(f"svg size 1000,{height}", tmp[".svg"]))
    p = subprocess.run([gnuplot], input=text, capture_output=True, text=True)
    if p.returncode != 0 or not all(os.path.exists(t) for t in tmp.values()):
        for t in tmp.values():
            if os.path.exists(t):
                os.remove(t)
        return f"gnuplot failed (exit {p.returncode}): {' '.join(p.stderr.split())[:300]}"
    for ext, t in tmp.items():
        wb.put_in_place(t, prefix + ext)
    return None


def prepare_out(out, given):
    parent = os.path.dirname(out)
    if given and not os.path.isdir(parent):
        raise wb.BadInput(f"--out {given}: no such directory '{os.path.dirname(given) or '.'}'; make it first")
    if os.path.exists(out):
        if not os.path.isdir(out):
            raise wb.BadInput(f"--out {out}: exists and is not a directory")
        entries = os.listdir(out)
        if entries and "sweep.ini" not in entries:
            raise wb.BadInput(f"--out {out}: exists, is not empty and is not a sensitivity study's output "
                              "(no sweep.ini); give another directory or empty it")
    os.makedirs(out, exist_ok=True)


def main(argv):
    a = parse_args(argv)
    t0 = time.monotonic()
    try:
        gpumodel = wb.find_gpumodel(a.gpumodel)
        scenario = resolve_scenario(a.scenario)
        params = catalogue_params(gpumodel, scenario)
        known = {p["name"] for p in params}
        fixed = {}
        for s in a.set:
            k, v = parse_assignment("--set", s)
            if k not in known:
                raise wb.BadInput(f"--set {wb.echo(k)}: not a parameter of this scenario"
                                  + wb.did_you_mean(wb.suggest(k, sorted(known))))
            fixed[k] = v
        versus = None
        if a.versus:
            versus = parse_assignment("--versus", a.versus)
            if versus[0] not in known:
                raise wb.BadInput(f"--versus {wb.echo(versus[0])}: not a parameter of this scenario"
                                  + wb.did_you_mean(wb.suggest(versus[0], sorted(known))))
            if versus[0] in fixed:
                raise wb.BadInput(f"--versus {versus[0]}: also given by --set; a key is either fixed or compared")
        factors = (0.5, 2.0)
        if a.factors:
            m = re.fullmatch(r"\s*([0-9.]+)\s*,\s*([0-9.]+)\s*", a.factors)
            if not m or not (0 <= float(m.group(1)) < 1 < float(m.group(2))):
                raise wb.BadInput(f"--factors {wb.echo(a.factors)}: allowed: LO,HI with 0 <= LO < 1 < HI (0.5,2)")
            factors = (float(m.group(1)), float(m.group(2)))
        for pat in a.keys:
            if not any(fnmatchcase(p["name"], pat) for p in params):
                raise wb.BadInput(f"--keys {wb.echo(pat)}: matches no parameter of this scenario"
                                  + wb.did_you_mean(wb.suggest(pat, sorted(known))))
        stem = os.path.splitext(os.path.basename(scenario))[0]
        out = os.path.abspath(a.out or wb.default_out("--out DIR", TOOL, f"{stem}-{a.metric}"))
        prepare_out(out, a.out)
        # The values the scenario runs with, and its platform file's sources: from its own run.
        verdict, why, res = baseline_metric(gpumodel, scenario, fixed, a.metric, out)
        if versus:
            baseline_metric(gpumodel, scenario, dict(fixed, **{versus[0]: versus[1]}), a.metric, out)
        values = res.get("parameters") or {}
        sources = platform_sources(gpumodel, (res.get("platform") or {}).get("name"))
        varied, skipped = plan(params, a.keys, dict(fixed, **({versus[0]: versus[1]} if versus else {})), factors,
                               values, sources)
        if not varied:
            detail = "; ".join(f"{n}: {why}" for n, why in skipped[:8])
            raise wb.BadInput("nothing to vary: no assumed parameter with a range" + (f" ({detail})" if detail else ""))
        sweep_file = os.path.join(out, "sweep.ini")
        write_sweep_file(sweep_file, scenario, fixed, varied)
        n_runs = (1 + 2 * len(varied)) * (2 if versus else 1)
        print(f"sensitivity: {len(varied)} assumed parameters of {stem}, each at two values: {n_runs} runs",
              flush=True)
        if a.keys and skipped:  # what the user asked for and does not get, and why
            shown = "; ".join(f"{n} ({why})" for n, why in skipped[:12])
            print(f"sensitivity: left alone: {shown}" + (f"; and {len(skipped) - 12} more" if len(skipped) > 12
                                                          else ""), flush=True)
        summary = run_sweep(sweep_file, os.path.join(out, "base"), a, gpumodel)
        print(summary.replace("sweep: ", "sensitivity: scenario's values: "), flush=True)
        vs_summary = None
        if versus:
            vs_file = os.path.join(out, "sweep-versus.ini")
            write_sweep_file(vs_file, scenario, dict(fixed, **{versus[0]: versus[1]}), varied)
            vs_summary = run_sweep(vs_file, os.path.join(out, "versus"), a, gpumodel)
            print(vs_summary.replace("sweep: ", f"sensitivity: with {versus[0]}={versus[1]}: "), flush=True)
        if a.dry_run:
            print(f"sensitivity: dry run: {out}/base/jobs.txt, nothing run")
            return 0
        base_pts = read_points(os.path.join(out, "base"), a.metric)
        vs_pts = read_points(os.path.join(out, "versus"), a.metric) if versus else None
    except wb.BadInput as e:
        wb.fail_bad_input(TOOL, str(e))
    base, base_run, rows = study(varied, base_pts, vs_pts)
    what = (f"{a.metric}({stem}) - {a.metric}({stem}, {versus[0]}={versus[1]})" if versus
            else f"{a.metric} of {stem}")
    try:
        wb.write_whole("tornado.csv", os.path.join(out, "tornado.csv"), tornado_csv(rows, base))
        wb.write_whole("tornado.markdown", os.path.join(out, "tornado.markdown"),
                       tornado_md(rows, base, what, "FLIPS" if versus else ""))
    except wb.BadInput as e:
        wb.fail_bad_input(TOOL, str(e))
    plot_problem = tornado_plot(rows, base, what, os.path.join(out, "tornado"))
    print(f"\n{what} = {fmt(base)}" + ("" if base_run[1] == "pass" else f"  (the run's verdict: {base_run[1]})"))
    width = max(len(r["name"]) for r in rows[:a.top])
    print(f"  {'parameter':<{width}}  {'low -> high':>22}  {'answer low':>11}  {'answer high':>11}  {'swing':>10}"
          + ("  flips" if versus else ""))
    for r in rows[:a.top]:
        span = f"{r['lo']} -> {r['hi']}"
        print(f"  {r['name']:<{width}}  {span:>22}  {fmt(r['answer_lo']):>11}  {fmt(r['answer_hi']):>11}  "
              f"{fmt(r['swing']):>10}" + (f"  {r['flip'].upper() if r['flip'] else ''}" if versus else "")
              + (f"  [{r['notes']}]" if r["notes"] else ""))
    if len(rows) > a.top:
        print(f"  ... {len(rows) - a.top} more in tornado.csv")
    flipping = [r["name"] for r in rows if r["flip"]]
    if versus:
        print(f"assumptions that flip the answer's sign: {', '.join(flipping) if flipping else 'none'}")
    print(f"sensitivity: {out}/tornado.csv, tornado.markdown"
          + (", tornado.png, tornado.svg" if plot_problem is None else f" (no plot: {plot_problem})")
          + f"; {time.monotonic() - t0:.1f} s")
    if base_run[1] != "pass":
        print(f"sensitivity: the scenario's own run did not pass ({base_run[1]}: {base_run[2][:300]})",
              file=sys.stderr)
        return 1
    return 1 if plot_problem and plot_problem.startswith("gnuplot failed") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

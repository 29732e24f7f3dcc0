#!/usr/bin/env python3
"""The figures the user guide quotes, kept equal to what the binary gives.

    workbench/docs_figures.py [--gpumodel BIN] [--check] [--jobs N] [PAGE ...]

A figure in README.md or a page under docs/ is written between two HTML comments that name the run
and the metric; the comments do not render, the figure does:

    <!-- fig: fence_signal | signal_to_wake_ns -->14.95 µs<!-- /fig -->
    <!-- fig: hybrid_present --link.gen=4 --link.lanes=4 | present_to_scanout_ns.mean ms -->14.34 ms<!-- /fig -->

The run is a scenario's name (scenarios/NAME.ini) and its overrides; the metric is a key of the
results' `metrics` (a member of a structured metric after a dot), or `sim_time_ns`; an optional last
word picks the unit it is shown in (ns, us, ms, s, B, KiB, MiB, GiB, mJ, J, mW, W, GB/s, %, x for the
bare number, int for an integer with thousands separators, fraction for a 0–1 share shown in %, MB for
bytes in decimal megabytes, `verdict` for a text as it is, or `first` for a text's
first word, up to a colon: a present path without its reason). Without a unit the metric's
own suffix decides (`_ns` is shown in ns, µs, ms or s by its size).

A figure can also be an expression of metrics and numbers with + - * / and parentheses, each a word of
its own, in the first metric's unit (a part the results do not report on its own, as what is left of a
total once its measured parts are taken away, or a share):

    <!-- fig: hybrid_present | present_to_flip_ns.mean - render_ns.mean - copy1_ns.mean us -->21.18 µs<!-- /fig -->

A term can be a number, or another run's metric, that run written in brackets with commas for spaces
(how much later two copies make a frame ready than one copy):

    <!-- fig: hybrid_present --present.path=two_copy | present_to_flip_ns.mean - [hybrid_present]present_to_flip_ns.mean us -->240.9 µs<!-- /fig -->
    <!-- fig: hybrid_present | link_bytes_per_frame - 8294400 B -->595.9 B<!-- /fig -->

A block of figures is a table of several metrics of one run:

    <!-- figures: tdr_engine_reset | detect_ns reset_ns recover_ns -->
    ...generated table...
    <!-- /figures -->

Without --check every figure and block is rewritten in place from fresh runs. With --check nothing is
written: the script names each figure whose text differs from the binary's (page, line, run, metric,
the page's text, the binary's) and exits 1 if any does. Exit 2: the binary, a page or a run could not
be read, or a metric a page names does not exist.
"""

import argparse
import concurrent.futures
import glob
import json
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_TIMEOUT_S = 300  # one run's limit: a hang, not a slow machine (the slowest takes a few seconds of CPU)
FIG = re.compile(r"<!-- fig: ([^|>]+?) \| ([^>]+?) -->(.*?)<!-- /fig -->", re.S)
BLOCK = re.compile(r"(<!-- figures: ([^|>]+?) \| ([^>]+?) -->\n)(.*?)(<!-- /figures -->)", re.S)
TERM_RUN = re.compile(r"\[([^\]]+)\](\S+)$")
UNITS = ("ns", "us", "ms", "s", "B", "KiB", "MiB", "GiB", "MB", "mJ", "J", "mW", "W", "GB/s", "%", "fraction", "x", "int", "verdict", "first")


def bad(message):
    print("docs_figures: " + message, file=sys.stderr)
    sys.exit(2)


def pages(args_files):
    if args_files:
        return [os.path.abspath(f) for f in args_files]
    found = [os.path.join(ROOT, "README.md")]
    found += sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    return found


def sig(value, digits=4):
    """`value` to `digits` significant digits (at least the integer part), thousands separated."""
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:,.{decimals}f}"


SUFFIXES = ("_ns", "_us", "_ms", "_mj", "_mw", "_gbps", "_pct", "_bytes")


def unit_name(metric):
    """The name whose suffix gives a metric's unit: the member of a structured metric where it has one
    (`energy.total_mj`), else the structure's (`present_to_display_ms.mean`); another run's brackets off."""
    name = TERM_RUN.sub(r"\2", metric)
    head, _, member = name.rpartition(".")
    if head and not member.endswith(SUFFIXES) and head.endswith(SUFFIXES):
        return head
    return name


def fmt(value, unit, metric):
    """The figure's text: the value in the unit asked for, or the metric's own unit scaled by size."""
    metric = unit_name(metric)
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        raise KeyError(metric + " (a structured metric: name one member after a dot)")
    if isinstance(value, bool):
        return "yes" if value else "no"
    if unit == "first":
        return str(value).split(":")[0]
    if unit == "verdict" or isinstance(value, str):
        return str(value)
    if unit is None:
        if metric.endswith("_ns") or metric == "sim_time_ns":
            a = abs(value)
            unit = "ns" if a < 1e4 else "us" if a < 1e7 else "ms" if a < 1e10 else "s"
        elif metric.endswith("_ms"):
            unit = "ms"
        elif metric.endswith("_mj"):
            unit = "mJ"
        elif metric.endswith("_mw"):
            unit = "mW"
        elif metric.endswith("_gbps"):
            unit = "GB/s"
        elif metric.endswith("_pct"):
            unit = "%"
        elif metric.endswith("_bytes"):
            unit = "B" if abs(value) < 1024 else "KiB" if abs(value) < 1 << 20 else "MiB"
        elif float(value).is_integer():
            unit = "int"
        else:
            unit = "x"
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
    if unit in scale:
        ns = value * 1e6 if metric.endswith("_ms") else value * 1e3 if metric.endswith("_us") else value
        return sig(ns / scale[unit]) + " " + {"us": "µs"}.get(unit, unit)
    if unit in ("B", "KiB", "MiB", "GiB"):
        return sig(value / {"B": 1, "KiB": 1024, "MiB": 1 << 20, "GiB": 1 << 30}[unit]) + " " + unit
    if unit == "J":
        return sig(value / 1e3) + " J"
    if unit == "W":
        return sig(value / 1e3) + " W"
    if unit == "fraction":
        return sig(value * 100, 3) + " %"
    if unit == "MB":
        return sig(value / 1e6, 3) + " MB"
    if unit == "int":
        return f"{int(round(value)):,}"
    if unit == "x":
        return sig(value)
    return sig(value) + (" " + unit if unit != "%" else " %")


def run_key(run):
    words = shlex.split(run)
    if not words:
        bad("a figure names no run")
    return tuple(words)


def do_run(binary, key):
    name, overrides = key[0], list(key[1:])
    ini = os.path.join(ROOT, "scenarios", name + ".ini")
    if not os.path.isfile(ini):
        return key, None, f"no scenario file scenarios/{name}.ini"
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        # From the repository root, as a user types a run: a path in its overrides is relative to the root.
        # A hang is caught per run (the slowest run here takes a few seconds of CPU), so the check as a
        # whole needs no deadline that a busy machine could miss.
        try:
            p = subprocess.run([binary, ini, *overrides, "--quiet", "--results", out], capture_output=True,
                               text=True, cwd=ROOT, timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return key, None, f"no result after {RUN_TIMEOUT_S} s (a hang?)"
        if p.returncode not in (0, 1) or not os.path.exists(out):
            return key, None, f"exit {p.returncode}: {p.stderr.strip()[:300]}"
        with open(out) as f:
            return key, json.load(f), None


def lookup(results, metric):
    if metric == "verdict":
        return results["verdict"]
    if metric == "sim_time_ns":
        return results["sim_time_ns"]
    node = results["metrics"]
    for part in metric.split("."):  # a member of a structured metric, at any depth: throughput.node0.after_pct
        if not isinstance(node, dict) or part not in node:
            raise KeyError(metric)
        node = node[part]
    return node


def split_metric(spec):
    words = spec.split()
    if len(words) >= 2 and words[-1] in UNITS:
        return words[:-1], words[-1]
    return words, None


def main():
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--gpumodel", default=os.environ.get("GPUMODEL_BIN", os.path.join(ROOT, "build", "gpumodel")))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("-h", "--help", action="store_true")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    if a.help:
        print(__doc__)
        return 0
    if not os.access(a.gpumodel, os.X_OK):
        bad(f"--gpumodel {a.gpumodel}: not an executable")
    a.gpumodel = os.path.abspath(a.gpumodel)  # the runs start from the root: the path is the caller's
    texts = {}
    for p in pages(a.files):
        try:
            with open(p, encoding="utf-8") as f:
                texts[p] = f.read()
        except OSError as e:
            bad(f"{p}: {e.strerror}")
    keys = set()
    for t in texts.values():
        # Each figure's run and each run a term names in brackets (a figure's or a block's).
        for run, spec in [m.group(1, 2) for m in FIG.finditer(t)] + [m.group(2, 3) for m in BLOCK.finditer(t)]:
            keys.add(run_key(run))
            for word in spec.split():
                other = TERM_RUN.match(word)
                if other:
                    keys.add(run_key(other.group(1).replace(",", " ")))
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        for key, res, err in ex.map(lambda k: do_run(a.gpumodel, k), sorted(keys)):
            if err:
                bad(f"run '{' '.join(key)}': {err}")
            results[key] = res
    stale = []

    def term(run, word):
        """A number as written, or a metric of the figure's run or of the run in the term's brackets."""
        try:
            return float(word.replace(",", ""))
        except ValueError:
            pass
        other = TERM_RUN.match(word)
        if other:
            return lookup(results[run_key(other.group(1).replace(",", " "))], other.group(2))
        return lookup(results[run_key(run)], word)

    def figure(page, run, spec):
        words, unit = split_metric(spec)
        rel = os.path.relpath(page, ROOT)
        refuse = (f"{rel}: '{spec}' is not a metric, or an expression of metrics and numbers with + - * / and "
                  f"( ) as words of their own, with an optional unit ({', '.join(UNITS)})")
        if len(words) == 1:
            try:
                return fmt(term(run, words[0]), unit, words[0])
            except KeyError as e:
                bad(f"{rel}: run '{run}' has no metric '{e.args[0]}'")
        pos = 0

        def number(word):
            v = term(run, word)
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                bad(f"{rel}: '{spec}': '{word}' is not a number")
            return v

        def factor():
            nonlocal pos
            if pos >= len(words) or words[pos] in "+-*/)":
                bad(refuse)
            pos += 1
            if words[pos - 1] == "(":
                v = expr()
                if pos >= len(words) or words[pos] != ")":
                    bad(refuse)
                pos += 1
                return v
            return number(words[pos - 1])

        def apply(op, v, w):
            if op == "/" and w == 0:
                bad(f"{rel}: '{spec}': division by zero")
            return {"+": v + w, "-": v - w, "*": v * w}[op] if op != "/" else v / w

        def level(ops, operand):
            """operand (op operand)*, left to right: one precedence level."""
            nonlocal pos
            v = operand()
            while pos < len(words) and words[pos] in ops:
                op = words[pos]
                pos += 1
                v = apply(op, v, operand())
            return v

        def product():
            return level(("*", "/"), factor)

        def expr():
            return level(("+", "-"), product)

        try:
            value = expr()
        except KeyError as e:
            bad(f"{rel}: run '{run}' has no metric '{e.args[0]}'")
        if pos != len(words):
            bad(refuse)
        first = next((w for w in words if w not in "()" and TERM_RUN.sub(r"\2", w)[:1].isalpha()), words[0])
        return fmt(value, unit, first)

    for page, text in texts.items():
        rel = os.path.relpath(page, ROOT)

        def fig_sub(m):
            want = figure(page, m.group(1), m.group(2))
            if m.group(3) != want:
                line = text.count("\n", 0, m.start()) + 1
                stale.append(f"{rel}:{line}: {m.group(1)} | {m.group(2)}: the page says '{m.group(3)}', the binary gives '{want}'")
            return f"<!-- fig: {m.group(1)} | {m.group(2)} -->{want}<!-- /fig -->"

        def block_sub(m):
            rows = ["| metric | value |", "| --- | --- |"]
            for spec in m.group(3).split():
                rows.append(f"| `{spec}` | {figure(page, m.group(2), spec)} |")
            body = "\n".join(rows) + "\n"
            if m.group(4) != body:
                line = text.count("\n", 0, m.start()) + 1
                stale.append(f"{rel}:{line}: the figures of '{m.group(2)}' differ from the binary's")
            return m.group(1) + body + m.group(5)

        new = BLOCK.sub(block_sub, FIG.sub(fig_sub, text))
        if not a.check and new != text:
            with open(page, "w", encoding="utf-8") as f:
                f.write(new)
    if a.check:
        for s in stale:
            print(s)
        n = sum(len(FIG.findall(t)) for t in texts.values())
        print(f"docs_figures: {n} figures, {len(keys)} runs, {len(stale)} stale")
        return 1 if stale else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""gpumodel compare: a per-metric regression gate between two results files (or two sweeps' merged.json).
See HELP below (also `gpumodel compare --help`) and README.md, Workbench."""

import argparse
import fnmatch
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wbcommon as wb  # noqa: E402

HELP = """\
usage: gpumodel compare A.json B.json [--tol METRIC=TOL ...] [--default-tol TOL] [--tolerances FILE.json]
                                      [--with-host] [--all]

Compares B (new) against A (old): two results files of one scenario (gpumodel --results), or two
sweeps' merged.json (runs matched by point and seed; each matched run must have the same axis values).
Prints a table (metric, old, new, delta, relative delta, tolerance, status). Exit code: 1 on any
regression, 0 otherwise, 2 bad input.

A regression is: a number outside its tolerance; any other value (a string, true/false) that changed;
a metric or a run that B lacks; a verdict that was pass and is not; a monitor with more violations in
B than in A (unless B marks it expected); a bug check that changed. Not regressions, but listed: a new
metric or run in B, a fail that now passes, different parameters.

TOL: a number is relative (0.01 = 1 % of |old|); abs:X is absolute (in the metric's unit); both may be
given, rel:R,abs:X, and either suffices. The default ignores floating-point noise: a relative 1e-6 on
fractional numbers (a double in the JSON), exact on integers (counts). Means, percentiles, energies and
rates are sums over many events; evaluated in another order (another compiler, fused multiply-add, a
run sliced differently) they move in the last digits, and a 1e-7 relative difference of such a figure
is noise, not a regression. A millionth is below anything a design decision rests on (a picosecond on
a microsecond latency); --default-tol 0 makes every difference a regression, and --tol gives one
metric its own tolerance. METRIC may be a glob (present_to_scanout_ns.*); a name given exactly wins over a glob, and
globs apply in the order given. --tol may name only metrics A or B has (a typo is an error).
FILE.json: {"default": TOL, "metrics": {"METRIC": TOL, ...}}, TOL a number, a string as above, or
{"rel": R, "abs": X}; --tol and --default-tol override it. sim_time_ns is compared as a metric.

options:
  --tol METRIC=TOL     a metric's tolerance (repeatable)
  --default-tol TOL    every other metric's tolerance (default: 1e-6 relative on fractional
                       numbers, exact on integers; 0: any difference)
  --tolerances FILE    tolerances from a JSON file
  --with-host          also compare the host section (wall-clock timings; ignored by default), as
                       metrics named host.KEY
  --all                for sweeps: print every metric of every run, not only what changed
"""


class Tol:
    def __init__(self, rel=0.0, abs_=0.0):
        self.rel, self.abs = rel, abs_

    def allows(self, old, new):
        return abs(new - old) <= max(self.abs, self.rel * abs(old))

    def shown(self, old, new):
        return str(self)

    def __str__(self):
        parts = ([f"{self.rel:g}"] if self.rel or not self.abs else []) + ([f"abs {self.abs:g}"] if self.abs else [])
        return ", ".join(parts)


# Floating-point noise, relative: see HELP (TOL) for why 1e-6.
NOISE_REL = 1e-6


class NoiseTol(Tol):
    """The default: NOISE_REL on fractional numbers (a double in the JSON), exact on integers (counts,
    which no rounding touches)."""

    def __init__(self):
        super().__init__(NOISE_REL, 0.0)

    def allows(self, old, new):
        if isinstance(old, int) and isinstance(new, int):
            return old == new
        return super().allows(old, new)

    def shown(self, old, new):
        return "0" if isinstance(old, int) and isinstance(new, int) else f"{NOISE_REL:g}"


def parse_tol(spec, where):
    """'0.01' | 'rel:0.01' | 'abs:5' | 'rel:0.01,abs:5' | 0.01 | {"rel": .., "abs": ..}."""
    if isinstance(spec, bool):
        raise wb.BadInput(f"{where}: {spec!r} is not a tolerance; a number (relative), abs:X or rel:R,abs:X")
    if isinstance(spec, (int, float)):
        spec = {"rel": spec}
    if isinstance(spec, str):
        parsed = {}
        for part in spec.split(","):
            kind, sep, value = part.strip().partition(":")
            if not sep:
                kind, value = "rel", kind
            if kind not in ("rel", "abs") or kind in parsed:
                raise wb.BadInput(f"{where}: '{spec}' is not a tolerance; a number (relative), abs:X or rel:R,abs:X")
            try:
                parsed[kind] = float(value)
            except ValueError:
                raise wb.BadInput(f"{where}: '{value}' is not a number")
        spec = parsed
    if not isinstance(spec, dict) or not spec or set(spec) - {"rel", "abs"}:
        raise wb.BadInput(f"{where}: {json.dumps(spec)} is not a tolerance; a number (relative), "
                          "\"abs:X\" or {\"rel\": R, \"abs\": X}")
    for k, v in spec.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (v >= 0) or v == float("inf"):
            raise wb.BadInput(f"{where}: {k} {v!r} is not allowed; a finite number >= 0")
    return Tol(float(spec.get("rel", 0.0)), float(spec.get("abs", 0.0)))


class Tolerances:
    def __init__(self, default, exact, globs):
        self.default, self.exact, self.globs = default, exact, globs

    def for_metric(self, name):
        if name in self.exact:
            return self.exact[name]
        for pattern, tol in self.globs:
            if fnmatch.fnmatchcase(name, pattern):
                return tol
        return self.default

    def check_names(self, names):
        for pattern in list(self.exact) + [p for p, _ in self.globs]:
            if not any(fnmatch.fnmatchcase(n, pattern) for n in names):
                raise wb.BadInput(f"--tol {pattern}: no metric of A or B has this name"
                                  + wb.did_you_mean(wb.suggest(pattern, sorted(names))))


def build_tolerances(a):
    default, named = NoiseTol(), {}
    if a.tolerances:
        try:
            spec = json.loads(wb.read_bounded(a.tolerances, "--tolerances"))
        except ValueError as e:
            raise wb.BadInput(f"--tolerances {a.tolerances}: not JSON ({e})")
        if not isinstance(spec, dict) or set(spec) - {"default", "metrics"}:
            raise wb.BadInput(f"--tolerances {a.tolerances}: expected {{\"default\": TOL, \"metrics\": "
                              "{\"METRIC\": TOL}}; keys allowed: default, metrics")
        if "default" in spec:
            default = parse_tol(spec["default"], f"--tolerances {a.tolerances}: default")
        metrics = spec.get("metrics", {})
        if not isinstance(metrics, dict):
            raise wb.BadInput(f"--tolerances {a.tolerances}: metrics must be an object {{\"METRIC\": TOL}}")
        for k, v in metrics.items():
            named[k] = parse_tol(v, f"--tolerances {a.tolerances}: metrics.{k}")
    if a.default_tol is not None:
        default = parse_tol(a.default_tol, "--default-tol")
    for t in a.tol:
        name, sep, spec = t.partition("=")
        if not sep or not name:
            raise wb.BadInput(f"--tol {t}: expected METRIC=TOL")
        named[name] = parse_tol(spec, f"--tol {name}")
    exact = {k: v for k, v in named.items() if not any(c in k for c in "*?[")}
    globs = [(k, v) for k, v in named.items() if any(c in k for c in "*?[")]
    return Tolerances(default, exact, globs)


def load(path):
    raw = wb.read_bounded(path, "input", wb.MAX_DATA_BYTES)
    try:
        doc = json.loads(raw)
    except ValueError as e:
        raise wb.BadInput(f"'{path}': not JSON ({e})")
    if isinstance(doc, dict) and "runs" in doc and "sweep" in doc:
        return "sweep", doc
    if isinstance(doc, dict) and "verdict" in doc and "metrics" in doc:
        return "results", doc
    raise wb.BadInput(f"'{path}': neither a results file (gpumodel --results) nor a sweep's merged.json")


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def record_from_results(doc, with_host):
    """A results file as the fields compared: flat metrics (with sim_time_ns), verdict, monitors."""
    metrics = wb.flatten(doc.get("metrics") or {}, "", {})
    metrics["sim_time_ns"] = doc.get("sim_time_ns")
    if with_host:
        metrics.update(wb.flatten(doc.get("host") or {}, "host", {}))
    return {"verdict": doc.get("verdict"), "metrics": metrics, "monitors": doc.get("monitors") or {},
            "bugcheck": doc.get("bugcheck"), "parameters": doc.get("parameters") or {}}


def record_from_row(row, with_host):
    metrics = dict(row.get("metrics") or {})
    metrics["sim_time_ns"] = row.get("sim_time_ns")
    if with_host:
        metrics.update(wb.flatten(row.get("host") or {}, "host", {}))
    return {"verdict": row.get("verdict"), "metrics": metrics, "monitors": row.get("monitors") or {},
            "bugcheck": row.get("bugcheck"), "parameters": {}, "exit_code": row.get("exit_code")}


def show(v):
    if v is None:
        return "-"
    if is_number(v):
        return f"{v:.10g}"
    return wb.cell(v)


def compare_record(old, new, tols):
    """[(name, old, new, delta, rel, tol, status, regression)] for one results pair."""
    out = []
    if old["verdict"] != new["verdict"]:
        regress = old["verdict"] == "pass"
        out.append(("verdict", old["verdict"], new["verdict"], "", "", "",
                    "REGRESSION" if regress else ("improved" if new["verdict"] == "pass" else "changed"), regress))
    else:
        out.append(("verdict", old["verdict"], new["verdict"], "", "", "", "ok", False))
    names = list(old["metrics"]) + [k for k in new["metrics"] if k not in old["metrics"]]
    for name in names:
        a, b = old["metrics"].get(name), new["metrics"].get(name)
        tol = tols.for_metric(name)
        if name not in new["metrics"]:
            out.append((name, a, None, "", "", "", "REGRESSION: missing in B", True))
        elif name not in old["metrics"]:
            out.append((name, None, b, "", "", "", "new in B", False))
        elif is_number(a) and is_number(b):
            delta = b - a
            rel = f"{delta / abs(a):+.3g}" if a else ("" if delta == 0 else "inf")
            ok = tol.allows(a, b)
            out.append((name, a, b, f"{delta:+.6g}", rel, tol.shown(a, b), "ok" if ok else "REGRESSION", not ok))
        else:
            same = a == b
            out.append((name, a, b, "", "", "", "ok" if same else "REGRESSION: changed", not same))
    for name in list(old["monitors"]) + [k for k in new["monitors"] if k not in old["monitors"]]:
        ma, mb = old["monitors"].get(name) or {}, new["monitors"].get(name) or {}
        va, vb = ma.get("violations", 0), mb.get("violations", 0)
        label = f"monitor {name}"
        if name not in new["monitors"]:
            out.append((label, va, None, "", "", "", "not in B", False))
        elif vb > va and not mb.get("expected"):
            out.append((label, va, vb, f"+{vb - va}", "", "", "REGRESSION: new violation", True))
        else:
            out.append((label, va, vb, f"{vb - va:+}" if vb != va else "", "", "",
                        "ok" + (" (expected)" if mb.get("expected") else ""), False))
    if old["bugcheck"] != new["bugcheck"]:
        out.append(("bugcheck", json.dumps(old["bugcheck"]), json.dumps(new["bugcheck"]), "", "", "",
                    "REGRESSION: changed", True))
    return out


def print_table(entries, only_changed):
    rows = [e for e in entries if not only_changed or e[6] not in ("ok", "ok (expected)")]
    if not rows:
        return
    cells = [("metric", "old", "new", "delta", "rel", "tol", "status")]
    cells += [(n, show(a), show(b), d, r, t, s) for n, a, b, d, r, t, s, _ in rows]
    widths = [max(len(str(c[i])) for c in cells) for i in range(7)]
    for c in cells:
        print("  " + "  ".join(str(v).ljust(widths[i]) if i in (0, 6) else str(v).rjust(widths[i])
                               for i, v in enumerate(c)).rstrip())


def main(argv):
    ap = argparse.ArgumentParser(prog="gpumodel compare", usage=argparse.SUPPRESS, add_help=False)
    ap.add_argument("-h", "--help", action="store_true")
    ap.add_argument("files", nargs="*")
    ap.add_argument("--tol", action="append", default=[])
    ap.add_argument("--default-tol")
    ap.add_argument("--tolerances")
    ap.add_argument("--with-host", action="store_true")
    ap.add_argument("--all", action="store_true")
    a = ap.parse_args(argv)
    if a.help:
        print(HELP, end="")
        return 0
    if len(a.files) != 2:
        ap.error("two files are required: gpumodel compare A.json B.json (--help)")
    try:
        return compare(a)
    except wb.BadInput as e:
        wb.fail_bad_input("compare", str(e))


def compare(a):
    tols = build_tolerances(a)
    (kind_a, doc_a), (kind_b, doc_b) = load(a.files[0]), load(a.files[1])
    if kind_a != kind_b:
        raise wb.BadInput(f"'{a.files[0]}' is a {kind_a} file and '{a.files[1]}' a {kind_b} file: "
                          "compare two results files or two merged.json")
    if kind_a == "results":
        return compare_results(a, tols, doc_a, doc_b)
    return compare_sweeps(a, tols, doc_a, doc_b)


def compare_results(a, tols, doc_a, doc_b):
    if doc_a.get("scenario") != doc_b.get("scenario"):
        raise wb.BadInput(f"A is scenario {doc_a.get('scenario')} and B is {doc_b.get('scenario')}: "
                          "compare results of one scenario")
    old, new = record_from_results(doc_a, a.with_host), record_from_results(doc_b, a.with_host)
    tols.check_names(set(old["metrics"]) | set(new["metrics"]))
    print(f"compare: {doc_a.get('scenario')}, A {a.files[0]} (seed {doc_a.get('seed')}) -> "
          f"B {a.files[1]} (seed {doc_b.get('seed')})")
    pa, pb = old["parameters"], new["parameters"]
    changed = [k for k in sorted(set(pa) | set(pb)) if pa.get(k) != pb.get(k)]
    if changed:
        print("  parameters differ: " + ", ".join(f"{k} {show(pa.get(k))} -> {show(pb.get(k))}" for k in changed))
    if doc_a.get("seed") != doc_b.get("seed"):
        print(f"  seeds differ: {doc_a.get('seed')} -> {doc_b.get('seed')}")
    entries = compare_record(old, new, tols)
    print_table(entries, only_changed=False)
    regressions = sum(e[7] for e in entries)
    print(f"compare: {regressions} regression(s)" if regressions else "compare: no regression")
    return 1 if regressions else 0


def compare_sweeps(a, tols, doc_a, doc_b):
    sa, sb = doc_a.get("sweep") or {}, doc_b.get("sweep") or {}
    if sa.get("scenario") != sb.get("scenario"):
        raise wb.BadInput(f"A sweeps scenario {sa.get('scenario')} and B {sb.get('scenario')}: "
                          "compare sweeps of one scenario file")

    def index(doc, path):
        rows = {}
        for r in doc.get("runs") or []:
            key = (r.get("point"), r.get("seed"))
            if key in rows:
                raise wb.BadInput(f"'{path}': point {key[0]}, seed {key[1]} appears twice")
            rows[key] = r
        return rows

    ra, rb = index(doc_a, a.files[0]), index(doc_b, a.files[1])
    for key in ra.keys() & rb.keys():
        if (ra[key].get("params") or {}) != (rb[key].get("params") or {}):
            raise wb.BadInput(f"point {key[0]}, seed {key[1]}: A has {json.dumps(ra[key].get('params'))}, "
                              f"B has {json.dumps(rb[key].get('params'))}: not the same sweep points")
    names = set()
    for r in list(ra.values()) + list(rb.values()):
        names |= set(record_from_row(r, a.with_host)["metrics"])
    tols.check_names(names)
    print(f"compare: sweeps of {sa.get('scenario')}, A {a.files[0]} ({len(ra)} runs) -> "
          f"B {a.files[1]} ({len(rb)} runs)")
    regressions, runs_regressed = 0, 0
    for key in sorted(ra.keys() | rb.keys(), key=lambda k: (k[0], k[1])):
        params = (ra.get(key) or rb.get(key)).get("params") or {}
        title = f"point {key[0]}, seed {key[1]}" + (": " + " ".join(f"{k}={v}" for k, v in params.items())
                                                    if params else "")
        if key not in rb:
            print(f"{title}\n  REGRESSION: run missing in B")
            regressions += 1
            runs_regressed += 1
            continue
        if key not in ra:
            print(f"{title}\n  new run in B (verdict {rb[key].get('verdict')})")
            continue
        entries = compare_record(record_from_row(ra[key], a.with_host), record_from_row(rb[key], a.with_host), tols)
        n = sum(e[7] for e in entries)
        if a.all or any(e[6] not in ("ok", "ok (expected)") for e in entries):
            print(title)
            print_table(entries, only_changed=not a.all)
        regressions += n
        runs_regressed += n > 0
    print(f"compare: {regressions} regression(s) in {runs_regressed} of {len(ra)} runs" if regressions
          else f"compare: no regression ({len(ra)} runs)")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

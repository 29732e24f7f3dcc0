#!/usr/bin/env python3
"""gpumodel compare as a regression gate, on real results of the binary: identical files pass; a
metric moved past its tolerance, a pass turned fail, a new monitor violation, a lost metric and a
lost sweep run fail (exit 1); a tolerance that covers the change passes; bad input exits 2."""

import copy
import json
import os
import subprocess

from wbtest import Test

t = Test("workbench_compare")
fence = t.scenario("fence_signal")

a_path = os.path.join(t.tmp, "a.json")
p = subprocess.run([t.gpumodel, fence, "--results", a_path], capture_output=True, text=True)
t.check(p.returncode == 0, f"fence_signal runs (exit {p.returncode}: {p.stderr.strip()})")
with open(a_path) as f:
    A = json.load(f)
b_path = os.path.join(t.tmp, "b.json")
subprocess.run([t.gpumodel, fence, "--results", b_path], capture_output=True)


def variant(name, change, base=None):
    """`base` (default: the results file A) changed by `change`, written to a file of its own."""
    doc = copy.deepcopy(A if base is None else base)
    change(doc)
    path = os.path.join(t.tmp, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def compare(*args):
    return t.tool("compare", *args)


def expect(code, args, what, fragment=None):
    p = compare(*args)
    t.check(p.returncode == code, f"{what}: exit {code} (got {p.returncode}; {p.stdout[-300:]!r} {p.stderr.strip()!r})")
    if fragment:
        t.check(fragment in p.stdout + p.stderr, f"{what}: output says {fragment!r}")
    return p


p = expect(0, [a_path, b_path], "two runs of the same scenario and seed", "no regression")
t.check("signal_to_wake_ns" in p.stdout and "old" in p.stdout and "delta" in p.stdout, "the table lists the metrics")
p = expect(0, [a_path, b_path], "host timings differ between the two runs but are ignored")

moved = variant("moved", lambda d: d["metrics"].update(signal_to_wake_ns=d["metrics"]["signal_to_wake_ns"] * 1.02))
expect(1, [a_path, moved], "signal_to_wake_ns 2 % higher, default tolerance", "REGRESSION")


# The default tolerance is floating-point noise: 1e-6 relative on fractional numbers, exact on integers;
# a 1e-7 relative difference (a sum evaluated in another order) is not a regression.
def scaled(name, factor):
    return variant(name, lambda d: d["metrics"].update(signal_to_wake_ns=d["metrics"]["signal_to_wake_ns"] * factor))


t.check(isinstance(A["metrics"]["signal_to_wake_ns"], float), "signal_to_wake_ns is a fractional number")
noise = scaled("noise", 1 + 1e-12)
expect(0, [a_path, noise], "a 1e-12 relative difference is noise by default", "no regression")
expect(1, [a_path, noise, "--default-tol", "0"], "--default-tol 0 reports a 1e-12 relative difference", "REGRESSION")
expect(0, [a_path, scaled("noise_1e7", 1 + 1e-7)], "1e-7 relative is noise by default", "no regression")
expect(0, [a_path, scaled("noise_edge", 1 + 5e-7)], "5e-7 relative is within the default")
expect(1, [a_path, scaled("past_noise", 1 + 2e-6)], "2e-6 relative is past the default", "REGRESSION")
expect(1, [a_path, scaled("ps", 1 + 1e-7), "--default-tol", "0"], "--default-tol 0 reports a 1e-7 relative difference", "REGRESSION")
big = variant("big", lambda d: d["metrics"].update(interrupts_raised=10**12))
expect(1, [big, variant("big1", lambda d: d["metrics"].update(interrupts_raised=10**12 + 1))],
       "an integer one more of 1e12 (1e-12 relative) is a change: integers are exact", "REGRESSION")
expect(0, [a_path, moved, "--tol", "signal_to_wake_ns=0.03"], "the same within a 3 % tolerance")
expect(1, [a_path, moved, "--tol", "signal_to_wake_ns=0.01"], "the same past a 1 % tolerance")
expect(0, [a_path, moved, "--default-tol", "0.05"], "the same within a 5 % default tolerance")
# The move in ns: 2 % of the default run's figure (whatever the model's figure is today).
delta = A["metrics"]["signal_to_wake_ns"] * 0.02
over, under, part = f"{delta * 1.15:.0f}", f"{delta * 0.4:.0f}", f"{delta * 0.6:.0f}"
expect(0, [a_path, moved, "--tol", f"signal_*=abs:{over}"], f"an absolute tolerance by glob (delta {delta:.0f} ns)")
expect(1, [a_path, moved, "--tol", f"signal_*=abs:{under}"], "past an absolute tolerance by glob")
# Both tolerances given: either suffices, and they do not add up. The move is 2 %: 3 % alone covers it,
# 115 % of the move alone covers it; 1.5 % and 60 % of the move each fall short, and so must the pair,
# although together (135 %) they would cover it.
expect(0, [a_path, moved, "--tol", f"signal_to_wake_ns=rel:0.03,abs:{under}"], "relative suffices beside a short absolute")
expect(0, [a_path, moved, "--tol", f"signal_to_wake_ns=rel:0.01,abs:{over}"], "absolute suffices beside a short relative")
expect(1, [a_path, moved, "--tol", f"signal_to_wake_ns=rel:0.01,abs:{under}"], "neither suffices")
expect(1, [a_path, moved, "--tol", f"signal_to_wake_ns=rel:0.015,abs:{part}"], "two short tolerances do not add up")
tol_file = t.write("tol.json", json.dumps({"default": 0, "metrics": {"signal_to_wake_ns": {"rel": 0.03}}}))
expect(0, [a_path, moved, "--tolerances", tol_file], "a tolerance from a file")
expect(1, [a_path, moved, "--tolerances", tol_file, "--tol", "signal_to_wake_ns=0"], "--tol overrides the file")

failed = variant("failed", lambda d: d.update(verdict="fail", why_failed=["a check"]))
expect(1, [a_path, failed], "verdict pass -> fail", "REGRESSION")
expect(0, [failed, a_path], "verdict fail -> pass is no regression", "improved")
violated = variant("violated", lambda d: d["monitors"]["lost_interrupt"].update(violations=1))
expect(1, [a_path, violated], "a new monitor violation", "new violation")
expected = variant("expected", lambda d: d["monitors"]["lost_interrupt"].update(violations=1, expected=True))
expect(0, [a_path, expected], "a violation the scenario expects")
lost = variant("lost", lambda d: d["metrics"].pop("isr_ns"))
expect(1, [a_path, lost], "a metric missing in B", "missing in B")
expect(0, [lost, a_path], "a metric new in B", "new in B")
worded = variant("worded", lambda d: d["metrics"].update(interrupts_raised="one"))
expect(1, [a_path, worded], "a value that is no longer the same number", "changed")
other = variant("other", lambda d: d.update(scenario="gpu_wait"))

# Bad input: exit 2, one line naming what is wrong.
for args, fragment in [
    ([a_path], "two files"),
    ([a_path, os.path.join(t.tmp, "nonexistent.json")], "nonexistent.json"),
    ([a_path, t.write("not.json", "{")], "not JSON"),
    ([a_path, t.write("neither.json", "{\"x\": 1}")], "neither a results file"),
    ([a_path, other], "gpu_wait"),
    ([a_path, b_path, "--tol", "signal_to_wak=0.1"], "signal_to_wak"),
    ([a_path, b_path, "--tol", "signal_to_wak=0.1"], "did you mean 'signal_to_wake_ns'"),
    ([a_path, b_path, "--tol", "signal_to_wake_ns=-1"], "signal_to_wake_ns"),
    ([a_path, b_path, "--tol", "signal_to_wake_ns=lots"], "lots"),
    ([a_path, b_path, "--default-tol", "abs:"], "--default-tol"),
    ([a_path, b_path, "--tolerances", t.write("badtol.json", "{\"metric\": {}}")], "default, metrics"),
]:
    p = compare(*args)
    lines = p.stderr.strip().splitlines()
    t.check(p.returncode == 2 and len(lines) == 1 and fragment in p.stderr,
            f"bad input {args[1:]}: exit 2, one line naming {fragment!r} (got {p.returncode}: {p.stderr.strip()!r})")

# Two sweeps' merged.json, matched by point and seed.
sweep = t.write("two.ini", f"[sweep]\nscenario = {fence}\nseeds = 1, 2\n[axes]\ncpu.idle_state = C1, C6\n")
outs = []
for name in ("s1", "s2"):
    out = os.path.join(t.tmp, name)
    p = t.tool("sweep", sweep, "--out", out)
    t.check(p.returncode == 0, f"sweep {name} runs (exit {p.returncode}: {p.stderr.strip()})")
    outs.append(os.path.join(out, "merged.json"))
expect(0, outs, "two runs of one sweep", "no regression (4 runs)")
with open(outs[1]) as f:
    S = json.load(f)


def sweep_variant(name, change):
    return variant(name, change, S)


def slower(d):
    d["runs"][3]["metrics"]["signal_to_wake_ns"] *= 1.5


expect(1, [outs[0], sweep_variant("sw_moved", slower)], "one run's metric moved", "point 1, seed 2")
expect(1, [outs[0], sweep_variant("sw_fail", lambda d: d["runs"][0].update(verdict="fail"))], "one run pass -> fail")
expect(1, [outs[0], sweep_variant("sw_lost", lambda d: d["runs"].pop(2))], "a run missing in B", "run missing in B")
expect(0, [sweep_variant("sw_lost2", lambda d: d["runs"].pop(2)), outs[0]], "a run new in B", "new run in B")
p = compare(outs[0], sweep_variant("sw_points", lambda d: d["runs"][0]["params"].update({"cpu.idle_state": "C3"})))
t.check(p.returncode == 2 and "not the same sweep points" in p.stderr, f"other axis values at a point: exit 2 ({p.stderr.strip()!r})")
p = compare(a_path, outs[0])
t.check(p.returncode == 2 and "merged.json" in p.stderr, f"a results file against a sweep: exit 2 ({p.stderr.strip()!r})")

t.done()

#!/usr/bin/env python3
"""gpumodel sensitivity on real runs of fence_signal: each assumed parameter's swing equals what the
model's own derivation gives, the table is ordered by swing, --versus computes the answer as a
difference and names what flips its sign, the stated uncertainty of a source is honoured, and bad input
is refused with exit 2 before anything runs."""

import csv
import os
import sys

from wbtest import WORKBENCH, Test

sys.path.insert(0, WORKBENCH)
import sensitivity as sens  # noqa: E402

t = Test("workbench_sensitivity")


def rows_of(out):
    with open(os.path.join(out, "tornado.csv")) as f:
        return list(csv.DictReader(f))


# fence_signal's warm signal-to-wake holds cpu.isr_ns and cpu.dpc_ns once each (the ISR and the DPC of
# its one interrupt: tests/test_fence_scenarios.cpp's knob test moves the total by exactly each change).
# Both are assumptions (A, Q/A) with no stated uncertainty: x0.5 and x2 of 2000 and 1000 ns. So
# cpu.isr_ns: 1000 -> 4000 ns moves the total by -1000 and +2000 ns, a swing of 3000 ns; cpu.dpc_ns:
# 500 -> 2000 ns, -500 and +1000 ns, a swing of 1500 ns; the ISR first.
out = os.path.join(t.tmp, "isr_dpc")
p = t.tool("sensitivity", "fence_signal", "--metric", "signal_to_wake_ns", "--keys", "cpu.isr_ns", "--keys",
           "cpu.dpc_ns", "--out", out, "--jobs", "2")
t.check(p.returncode == 0, f"a study of two parameters exits 0 (got {p.returncode}: {p.stderr.strip()})")
if p.returncode == 0:
    rows = rows_of(out)
    t.check([r["parameter"] for r in rows] == ["cpu.isr_ns", "cpu.dpc_ns"],
            f"largest swing first: {[r['parameter'] for r in rows]}")
    base = float(rows[0]["answer_default"])
    want = {"cpu.isr_ns": ("1000", "4000", -1000, 2000, 3000), "cpu.dpc_ns": ("500", "2000", -500, 1000, 1500)}
    for r in rows:
        lo, hi, d_lo, d_hi, swing = want[r["parameter"]]
        t.check((r["low"], r["high"]) == (lo, hi), f"{r['parameter']}: x0.5 and x2 of its default: {r['low']}, {r['high']}")
        t.check(abs(float(r["answer_low"]) - (base + d_lo)) < 1e-3, f"{r['parameter']} low: {r['answer_low']}")
        t.check(abs(float(r["answer_high"]) - (base + d_hi)) < 1e-3, f"{r['parameter']} high: {r['answer_high']}")
        t.check(abs(float(r["swing"]) - swing) < 1e-3, f"{r['parameter']} swing {r['swing']}, want {swing}")
        t.check(r["flips"] == "", f"{r['parameter']}: no --versus, no flip column")
    with open(os.path.join(out, "sweep.ini")) as f:
        t.check("mode = one_at_a_time" in f.read(), "the study is a one-at-a-time sweep")
    for name in ("tornado.markdown", "tornado.png", "tornado.svg"):
        t.check(os.path.getsize(os.path.join(out, name)) > 0, f"{name} written")
    t.check("cpu.isr_ns" in p.stdout and "3000" in p.stdout, "the table printed")

# --versus: the answer is the difference; a key that moves both sides alike leaves it where it is. With
# cpu.thread_wake_ns = 3000 on the other side (1000 ns more than the default 2000 ns, once per wake),
# the answer is -1000 ns at every value of cpu.isr_ns: swing 0, no flip.
out = os.path.join(t.tmp, "versus")
p = t.tool("sensitivity", "fence_signal", "--metric", "signal_to_wake_ns", "--versus", "cpu.thread_wake_ns=3000",
           "--keys", "cpu.isr_ns", "--out", out, "--jobs", "2")
t.check(p.returncode == 0, f"--versus exits 0 (got {p.returncode}: {p.stderr.strip()})")
if p.returncode == 0:
    r = rows_of(out)[0]
    for col in ("answer_default", "answer_low", "answer_high"):
        t.check(abs(float(r[col]) + 1000) < 1e-3, f"--versus: {col} = {r[col]}, want -1000")
    t.check(abs(float(r["swing"])) < 1e-3 and r["flips"] == "", f"--versus: swing {r['swing']}, flips '{r['flips']}'")
    t.check("flip the answer's sign: none" in p.stdout, "--versus: says no assumption flips the answer")

# The sign rule, and a source's own uncertainty.
t.check(sens.flips(-1, 2, -3) == "low" and sens.flips(-1, -2, 3) == "high" and sens.flips(5, -1, -2) == "both"
        and sens.flips(5, 1, 9) == "" and sens.flips(0, 0, 1) == "high", "flips: which end changes the sign")
t.check(sens.stated_factors("A: a guess, uncertainty x0.5-x3") == (0.5, 3.0), "stated factors x0.5-x3")
t.check(sens.stated_factors("A: a guess, uncertainty \u00b130 %") == (0.7, 1.3), "stated factors +-30 %")
t.check(sens.stated_factors("A: a guess") is None, "no stated uncertainty")
t.check(sens.is_assumption("A: x") and sens.is_assumption("Q/A: x") and not sens.is_assumption("Q: x")
        and not sens.is_assumption("D: x") and not sens.is_assumption("Q (low confidence): x"), "kind tags")
varied, skipped = sens.plan([{"name": "a.b_ns", "kind": "real", "default": "100", "unit": "ns",
                              "allowed": "a number in [60, 150] ns", "source": "A: uncertainty x0.5-x3"}],
                            [], {}, (0.5, 2.0))
t.check(varied and (varied[0]["lo"], varied[0]["hi"]) == ("60", "150"), f"clipped to the allowed range: {varied}")

# A platform file's own figure and source: idle_desktop runs on laptop_hybrid, whose file sets
# power.platform_rest_mw = 1200 as an assumption with its uncertainty x0.5-x2 (the built-in default is 0,
# tagged D), so the study varies 600 and 2400; its LPDDR read energy is `source: derived` there, so it is
# left alone. On the desktop (fence_signal) the same key is the built-in 0: nothing to vary.
out = os.path.join(t.tmp, "platform")
p = t.tool("sensitivity", "idle_desktop", "--metric", "energy.total_mj", "--keys", "power.platform_rest_mw", "--keys",
           "power.sysmem_read_pj_per_bit", "--out", out, "--dry-run")
t.check(p.returncode == 0, f"a platform's assumption is varied (got {p.returncode}: {p.stderr.strip()})")
if p.returncode == 0:
    with open(os.path.join(out, "sweep.ini")) as f:
        text = f.read()
    t.check("power.platform_rest_mw = 600, 2400" in text, f"the platform's value at its stated factors: {text}")
    t.check("power.sysmem_read_pj_per_bit" not in text, "a platform's derived value is not varied")
    t.check("power.sysmem_read_pj_per_bit (not an assumption: kind D)" in p.stdout, f"and says why: {p.stdout}")
p = t.tool("sensitivity", "fence_signal", "--metric", "signal_to_wake_ns", "--keys", "power.platform_rest_mw",
           "--out", os.path.join(t.tmp, "desk"), "--dry-run")
t.check(p.returncode == 2 and "power.platform_rest_mw" in p.stderr, f"the desktop's 0 is not varied: {p.stderr}")

# The number of cores shapes the platform: never varied (nothing to vary, and it says why).
p = t.tool("sensitivity", "fence_signal", "--metric", "signal_to_wake_ns", "--keys", "cpu.cores", "--out",
           os.path.join(t.tmp, "cores"), "--dry-run")
t.check(p.returncode == 2 and "cpu.cores: a count of the platform's structure" in p.stderr,
        f"cpu.cores is structure, not an assumption to vary: {p.stderr}")

# Bad input: exit 2, one line naming what is wrong, nothing run.
for args, fragment in [
        (["--metric", "no_such_metric", "--keys", "cpu.isr_ns"], "--metric no_such_metric: not a numeric metric"),
        (["--metric", "signal_to_wake_ns", "--keys", "cpu.c1_exit_ns"], "cpu.c1_exit_ns: not an assumption"),
        (["--metric", "signal_to_wake_ns", "--keys", "nosuch.*"], "--keys nosuch.*: matches no parameter"),
        (["--metric", "signal_to_wake_ns", "--set", "cpu.isr=5"], "--set cpu.isr: not a parameter"),
        (["--metric", "signal_to_wake_ns", "--factors", "2,3"], "--factors 2,3: allowed"),
        (["--metric", "signal_to_wake_ns", "--versus", "cpu.isr_ns"], "--versus cpu.isr_ns: not KEY=VALUE")]:
    out = os.path.join(t.tmp, "bad")
    p = t.tool("sensitivity", "fence_signal", *args, "--out", out)
    t.check(p.returncode == 2, f"{args}: exit 2 (got {p.returncode})")
    t.check(fragment in p.stderr and p.stderr.count("\n") == 1, f"{args}: one line with '{fragment}': {p.stderr!r}")
    t.check(not os.path.exists(os.path.join(out, "base")), f"{args}: nothing run")

# A folder that is not a study's is never overwritten.
keep = os.path.join(t.tmp, "mine")
os.makedirs(keep)
t.write("mine/notes.txt", "mine")
p = t.tool("sensitivity", "fence_signal", "--metric", "signal_to_wake_ns", "--keys", "cpu.isr_ns", "--out", keep)
t.check(p.returncode == 2 and "is not a sensitivity study's output" in p.stderr, f"foreign --out refused: {p.stderr}")
t.check(os.listdir(keep) == ["notes.txt"], "the foreign folder is unchanged")

t.done()

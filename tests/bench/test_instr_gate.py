#!/usr/bin/env python3
"""bench/instr.py's gate on counts it is given (--measured), without running cachegrind: a path over
the tolerance fails the check naming it, one within it passes, one cheaper by more is told to update the
baseline, and bad input (a count missing, a tolerance out of range) is refused with exit 2."""
import copy
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INSTR = os.path.join(ROOT, "bench", "instr.py")
BASE = os.path.join(ROOT, "bench", "instructions.json")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def run(tmp, scale=None, drop=None, extra=()):
    d = json.load(open(BASE))
    m = copy.deepcopy(d)
    for name, f in (scale or {}).items():
        m["paths"][name]["instructions"] = round(d["paths"][name]["instructions"] * f)
    if drop:
        del m["paths"][drop]
    path = os.path.join(tmp, "measured.json")
    json.dump(m, open(path, "w"))
    p = subprocess.run([sys.executable, INSTR, "--check", BASE, "--measured", path, *extra], capture_output=True,
                       text=True)
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory() as tmp:
    # 4 % is the default tolerance: 5 % over fails naming the path, 3.9 % over passes.
    code, out, err = run(tmp, {"game_frame": 1.05})
    check(code == 1, "5 %% over: exit %d, not 1" % code)
    check("REGRESSION: game_frame" in err, "5 %% over: the path not named: %r" % err)
    code, out, err = run(tmp, {"game_frame": 1.039})
    check(code == 0 and "REGRESSION" not in err, "3.9 %% over: exit %d, %r" % (code, err))
    # Cheaper by more than the tolerance (5 %) passes and says to update the baseline.
    code, out, err = run(tmp, {"signal_logged": 0.95})
    check(code == 0, "5 %% cheaper: exit %d" % code)
    check("cheaper: update the baseline" in out, "5 %% cheaper: not told: %r" % out)
    # --tolerance moves the bound: 5 % over passes at 6 %.
    code, out, err = run(tmp, {"tdr": 1.05}, extra=("--tolerance", "6"))
    check(code == 0, "5 %% over at --tolerance 6: exit %d" % code)
    # Bad input: a measured file without a path's count, a tolerance out of range, an unknown path.
    code, out, err = run(tmp, drop="tdr")
    check(code == 2 and "no count for 'tdr'" in err, "a missing count: exit %d, %r" % (code, err))
    code, out, err = run(tmp, extra=("--tolerance", "0"))
    check(code == 2 and "--tolerance" in err, "tolerance 0: exit %d, %r" % (code, err))
    code, out, err = run(tmp, extra=("--only", "frames"))
    check(code == 2 and "'frames'" in err, "unknown path: exit %d, %r" % (code, err))

for f in failures:
    print("FAIL:", f)
print("test_instr_gate: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)

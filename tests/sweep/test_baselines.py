#!/usr/bin/env python3
"""extremes_sweep --baselines-only: one run a scenario file (its reduced run, no key), refused with --key,
and a reduced run that fails is a finding (exit 1, named), not a fail the sweep would tell a key's from.

    tests/sweep/test_baselines.py --sweep BIN --scenarios DIR
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", required=True)
    ap.add_argument("--scenarios", required=True)
    a = ap.parse_args()
    failures = []
    files = sorted(glob.glob(os.path.join(a.scenarios, "*.ini")))
    # One command a file, the file's own: no swept key among them.
    r = subprocess.run([a.sweep, "--baselines-only", "--dry-run", "--scenarios", a.scenarios],
                       capture_output=True, text=True)
    lines = r.stdout.splitlines()
    if r.returncode != 0 or len(lines) != len(files):
        failures.append(f"--baselines-only --dry-run: {len(lines)} runs for {len(files)} files (exit {r.returncode})")
        return report(failures)  # the runs below would be a whole file's sweep: minutes
    # With --key: refused, naming --baselines-only.
    r = subprocess.run([a.sweep, "--baselines-only", "--key", "link.gen", "--dry-run", "--scenarios", a.scenarios],
                       capture_output=True, text=True)
    if r.returncode != 2 or "drop --key" not in r.stderr:
        failures.append(f"--baselines-only --key was not refused: exit {r.returncode} {r.stderr.strip()}")
    # fence_race_no_barrier expects lost interrupts; with the CMP's barrier back on its reduced run loses
    # none and fails (with a reason): a finding, exit 1, not a fail every key of the file would hide behind.
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            shutil.copy(f, tmp)
        path = os.path.join(tmp, "fence_race_no_barrier.ini")
        text = open(path, encoding="utf-8").read()
        if "barrier = false" not in text:
            failures.append("fence_race_no_barrier.ini no longer turns the CMP's barrier off: update this test")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace("barrier = false", "barrier = true", 1))
        r = subprocess.run([a.sweep, "--baselines-only", "--scenarios", tmp, "--only", "fence_race_no_barrier.ini"],
                           capture_output=True, text=True, timeout=50)
        if r.returncode != 1 or "the reduced baseline fails" not in r.stdout + r.stderr:
            failures.append(f"a failing reduced run was no finding: exit {r.returncode}\n{r.stdout[-600:]}{r.stderr[-300:]}")
    return report(failures)


def report(failures):
    for f in failures:
        print("FAIL: " + f)
    print(f"test_baselines: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""extremes_sweep --pairwise --interactions on one scenario file, through a gpumodel that is the real
binary except for what this test plants: it crashes on one pair of values, fails its verdict (with a
reason) on another pair, and fails on one value alone. The crash must be the sweep's only finding and
the pair's fail the only fail no key gives alone, each reduced to exactly its two keys with the command
that reproduces it; the rows that fail because of the one value are that value's fail. Every other run
is the real model's, which must give neither. Also: --pairwise refuses --key, and its dry run sets each
planted pair in some row.

    tests/sweep/test_pairwise.py --sweep BIN --gpumodel BIN --only FILE
        --crash K1=V1 K2=V2 --fail K3=V3 K4=V4 --fail-alone K5=V5
"""
import argparse
import os
import re
import stat
import subprocess
import sys
import tempfile

# The real binary first: what it refuses (exit 2) stays refused, as a model's defect lies past the
# command line's checks; then the planted defects.
FAKE = """#!/usr/bin/env python3
import json, os, signal, subprocess, sys
crash, fail, alone = {crash!r}, {fail!r}, {alone!r}
real = subprocess.run([{real!r}] + sys.argv[1:], capture_output=True, text=True)
sys.stdout.write(real.stdout)
sys.stderr.write(real.stderr)
if real.returncode == 2:
    sys.exit(2)
if all(p in sys.argv for p in crash):
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGABRT)
why = "planted: the pair fails" if all(p in sys.argv for p in fail) else \\
      "planted: the value fails alone" if alone in sys.argv else None
if why is None:
    sys.exit(real.returncode)
results = sys.argv[sys.argv.index("--results") + 1]
json.dump({{"verdict": "fail", "checks_failed": [why], "metrics": {{}}}}, open(results, "w"))
print("FAILED: " + why)
sys.exit(1)
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", required=True)
    ap.add_argument("--gpumodel", required=True)
    ap.add_argument("--only", required=True)
    ap.add_argument("--crash", nargs=2, required=True, metavar="KEY=VALUE")
    ap.add_argument("--fail", nargs=2, required=True, metavar="KEY=VALUE")
    ap.add_argument("--fail-alone", required=True, metavar="KEY=VALUE")
    a = ap.parse_args()
    failures = []
    crash, fail = ["--" + kv for kv in a.crash], ["--" + kv for kv in a.fail]

    r = subprocess.run([a.sweep, "--pairwise", "--key", "link.gen", "--dry-run"], capture_output=True, text=True)
    if r.returncode != 2 or "--pairwise" not in r.stderr:
        failures.append(f"--pairwise --key was not refused: exit {r.returncode} {r.stderr.strip()}")

    # The covering array's promise on the real file: some row sets both values of each pair (each
    # differs from the file's, so it is on the row's command line).
    r = subprocess.run([a.sweep, "--pairwise", "--only", a.only, "--dry-run"], capture_output=True, text=True)
    rows = [line.split() for line in r.stdout.splitlines()]
    for pair in (crash, fail):
        if r.returncode != 0 or not any(all(p in row for p in pair) for row in rows):
            failures.append(f"no row of the dry run ({len(rows)} commands, exit {r.returncode}) sets {pair}")

    with tempfile.TemporaryDirectory() as tmp:
        fake = os.path.join(tmp, "gpumodel")
        with open(fake, "w", encoding="utf-8") as f:
            f.write(FAKE.format(crash=crash, fail=fail, alone="--" + a.fail_alone, real=a.gpumodel))
        os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
        r = subprocess.run([a.sweep, "--pairwise", "--interactions", "--only", a.only, "--jobs", "2", "--gpumodel", fake],
                           capture_output=True, text=True, timeout=50)
    out = r.stdout
    print(out[-4000:])
    if r.returncode != 1:
        failures.append(f"exit {r.returncode}, not 1 (a finding)")
    reduced = sorted(re.findall(r"^  row \d+ reduced to (.*) \(\d+ runs\)$", out, re.M))
    if reduced != sorted([" ".join(a.crash), " ".join(a.fail)]):
        failures.append(f"the planted pairs' rows were reduced to {reduced}, not to exactly the two pairs")
    for f in re.findall(r"^FINDING .*$", out, re.M):
        if "killed by signal 6" not in f:
            failures.append(f"a finding that is not the planted crash: {f}")
    if not re.search(r"[1-9]\d* row fails a value gives alone", out):
        failures.append("no row was found failing for the value that fails alone")
    for title, pair, what in (("pairwise findings", crash, "killed by signal 6"),
                              ("fails no key gives alone", fail, "planted: the pair fails")):
        section = re.search("^" + title + r"[^\n]*\n((?:  .*\n)*)", out, re.M)
        entries = re.findall(r"^  (\S+\.ini .*)\n    reproduce: (.*)$", section.group(1), re.M) if section else []
        if len(entries) != 1 or what not in entries[0][0]:
            failures.append(f"'{title}' does not list exactly the planted {what!r}: {entries}")
        elif sorted(w for w in entries[0][1].split() if w in crash + fail) != sorted(pair):
            failures.append(f"'{title}': the command does not set exactly {pair}: {entries[0][1]}")
    for f in failures:
        print("FAIL: " + f)
    print(f"test_pairwise: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

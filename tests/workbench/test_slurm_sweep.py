#!/usr/bin/env python3
"""The 48-run sweep (sweeps/fence_wake_48.ini) locally through GNU parallel and as one Slurm job
array (five runs a task) on the one-node local Slurm (workbench/slurm/start-local-slurm.sh, started here; root, Debian's
slurm-wlm and munge): both merged CSVs must be identical but for the host_ columns, and compare must
find no regression between them. Prints both wall times. Label `slurm` (`ctest -L slurm` runs it
alone). Skipped (exit 77) where it cannot run: not root, or slurm-wlm or munge not installed; the
README's install line leaves them to CI and to whoever wants --slurm."""

import os
import shutil
import subprocess
import sys
import time

from wbtest import SOURCE_DIR, Test, read_csv, without_host

missing = [x for x in ("sbatch", "slurmctld", "slurmd", "munged") if not shutil.which(x)]
if missing or os.geteuid() != 0:
    print("SKIP: " + ("not installed: " + ", ".join(missing) + " (apt-get install slurm-wlm munge)" if missing
                      else "needs root to start the local Slurm"))
    sys.exit(77)

t = Test("slurm_sweep_fence_wake_48")
start = os.path.join(SOURCE_DIR, "workbench", "slurm", "start-local-slurm.sh")
p = subprocess.run([start], capture_output=True, text=True)
print(p.stdout.strip())
if not t.check(p.returncode == 0, f"the local Slurm starts (exit {p.returncode}): {p.stderr.strip()}"):
    t.done()

sweep = os.path.join(SOURCE_DIR, "sweeps", "fence_wake_48.ini")
walls, csvs = {}, {}
# Five runs a task: ten tasks, the last with three, so the array's chunking is exercised too (Slurm on
# one node starts tasks once a second per CPU: one run a task took 26 s of the test's 34).
for name, extra in (("local", []), ("slurm", ["--slurm", "--runs-per-task", "5"])):
    out = os.path.join(t.tmp, name)
    t0 = time.monotonic()
    p = t.tool("sweep", sweep, "--out", out, *extra)
    walls[name] = time.monotonic() - t0
    print(p.stdout.strip())
    t.check(p.returncode == 0, f"{name}: every run passes (exit {p.returncode}: {p.stderr.strip()})")
    csvs[name] = os.path.join(out, "merged.csv")
    if os.path.exists(csvs[name]):
        _, rows = read_csv(csvs[name])
        t.check(len(rows) == 48 and all(r["verdict"] == "pass" for r in rows), f"{name}: 48 passing rows")
        t.check([int(r["run"]) for r in rows] == list(range(48)), f"{name}: rows in run order")

if all(os.path.exists(c) for c in csvs.values()):
    a, b = without_host(csvs["local"]), without_host(csvs["slurm"])
    t.check(a == b, "local and Slurm merged.csv are identical but for the host_ columns"
            + "".join(f"\n  local {x}\n  slurm {y}" for x, y in zip(a, b) if x != y))
    p = t.tool("compare", *(os.path.join(os.path.dirname(c), "merged.json") for c in csvs.values()))
    t.check(p.returncode == 0, f"compare finds no regression between them: {p.stdout[-500:]}")
subprocess.run([os.path.join(SOURCE_DIR, "workbench", "slurm", "stop-local-slurm.sh")], capture_output=True)
print(f"48-run sweep wall time: local (GNU parallel, {len(os.sched_getaffinity(0))} jobs) "
      f"{walls.get('local', 0):.1f} s; Slurm job array {walls.get('slurm', 0):.1f} s")
t.done()

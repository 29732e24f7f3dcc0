#!/usr/bin/env python3
"""gpumodel sweep --dry-run: how a sweep file expands into points and runs (cartesian and zip, lists
and ranges, seeds, fixed overrides), jobs.txt's command lines, points.json, and the committed sweep
files (each must expand, with keys its scenario has)."""

import json
import os
import shlex
import subprocess

from wbtest import SOURCE_DIR, Test

t = Test("workbench_sweep_expand")
fence = t.scenario("fence_signal")


def dry_run(name, text):
    path = t.write(name + ".ini", text)
    out = os.path.join(t.tmp, name)
    p = t.tool("sweep", path, "--out", out, "--dry-run")
    t.check(p.returncode == 0, f"{name}: dry run exits 0 (got {p.returncode}: {p.stderr.strip()})")
    if p.returncode != 0:
        return None, None
    with open(os.path.join(out, "jobs.txt")) as f:
        jobs = [shlex.split(line) for line in f.read().splitlines()]
    with open(os.path.join(out, "points.json")) as f:
        points = json.load(f)
    t.check(not os.path.exists(os.path.join(out, "merged.csv")), f"{name}: a dry run merges nothing")
    t.check(not any(os.scandir(os.path.join(out, "runs"))), f"{name}: a dry run runs nothing")
    return jobs, points


def overrides(argv):
    """{key: value} of a jobs.txt command line's --section.key=value arguments, and its seed."""
    ov = dict(a[2:].split("=", 1) for a in argv if a.startswith("--") and "=" in a)
    return ov, argv[argv.index("--seed") + 1]


# Cartesian: 2 x 3 points x 2 seeds = 12 runs, the first axis outermost, seeds innermost.
jobs, points = dry_run("cartesian", f"""
# comments: whole lines, and after a space
[sweep]
scenario = {fence}  # the scenario
mode = cartesian
seeds = 7, 9 ; two seeds
[axes]
cpu.idle_state = C1, C6
cpu.thread_wake_ns = 1000, 2000, 4000    # ns
[fixed]
workload.signal_delay_us = 20
""")
if jobs:
    t.check(len(jobs) == 12, f"cartesian 2 x 3 x 2 seeds: 12 command lines (got {len(jobs)})")
    t.check(len(points["points"]) == 6 and len(points["runs"]) == 12, "points.json: 6 points, 12 runs")
    want = [(s, w, seed) for s in ("C1", "C6") for w in ("1000", "2000", "4000") for seed in ("7", "9")]
    got = []
    for argv in jobs:
        ov, seed = overrides(argv)
        got.append((ov.get("cpu.idle_state"), ov.get("cpu.thread_wake_ns"), seed))
        t.check(ov.get("workload.signal_delay_us") == "20", f"fixed override on every line: {argv}")
        t.check(argv[0] == t.gpumodel and argv[1] == fence, f"line runs the binary on the scenario: {argv[:2]}")
    t.check(got == want, f"cartesian order: first axis outermost, seeds innermost\n  got  {got}\n  want {want}")
    for i, r in enumerate(points["runs"]):
        t.check(r["run"] == i and r["point"] == i // 2 and r["seed"] == (7, 9)[i % 2],
                f"points.json run {i}: point-major numbering ({r})")
        t.check(jobs[i][jobs[i].index("--results") + 1].endswith(f"runs/{i:04d}.json"),
                f"run {i} writes runs/{i:04d}.json")

# Zip: the i-th values together; 3 points x 2 seeds (a range) = 6 runs.
jobs, points = dry_run("zip", f"""
[sweep]
scenario = {fence}
mode = zip
seeds = 1..2
[axes]
cpu.idle_state = C1, C3, C6
cpu.thread_wake_ns = 500..1500 step 500
""")
if jobs:
    t.check(len(jobs) == 6, f"zip of two 3-value axes x 2 seeds: 6 lines (got {len(jobs)})")
    got = [(overrides(a)[0]["cpu.idle_state"], overrides(a)[0]["cpu.thread_wake_ns"], overrides(a)[1]) for a in jobs]
    want = [("C1", "500", "1"), ("C1", "500", "2"), ("C3", "1000", "1"), ("C3", "1000", "2"),
            ("C6", "1500", "1"), ("C6", "1500", "2")]
    t.check(got == want, f"zip pairs the i-th values: got {got}")

# Ranges: both ends included, decimal steps exact (no 0.30000000000000004), step 1 by default.
jobs, points = dry_run("ranges", f"""
[sweep]
scenario = {fence}
seeds = 3..6
[axes]
cpu.memcpy_gbps = 0.1..0.5 step 0.1
link.hop_ns = 100..400 step 25
""")
if jobs:
    axes = points["sweep"]["axes"]
    t.check(axes["cpu.memcpy_gbps"] == ["0.1", "0.2", "0.3", "0.4", "0.5"],
            f"0.1..0.5 step 0.1 gives five exact decimals: {axes['cpu.memcpy_gbps']}")
    t.check(len(axes["link.hop_ns"]) == 13 and axes["link.hop_ns"][-1] == "400",
            f"100..400 step 25: 13 values, 400 included: {axes['link.hop_ns']}")
    t.check(points["sweep"]["seeds"] == ["3", "4", "5", "6"], f"seeds 3..6: {points['sweep']['seeds']}")
    t.check(len(jobs) == 5 * 13 * 4, f"5 x 13 points x 4 seeds = 260 runs (got {len(jobs)})")
    t.check(jobs[-1][jobs[-1].index("--results") + 1].endswith("runs/0259.json"), "last run is 0259")

# A sweep with no axes: one point per seed; the default seed is 1.
jobs, points = dry_run("no_axes", f"[sweep]\nscenario = {fence}\n")
if jobs:
    t.check(len(jobs) == 1 and overrides(jobs[0])[1] == "1", f"no axes, no seeds: one run, seed 1 ({jobs})")

# --slurm --dry-run: the one sbatch command (an array of every run, --jobs as its %N limit, extra
# sbatch options passed through) and the array script that picks line TASK_ID+1 of jobs.txt.
out = os.path.join(t.tmp, "slurm_dry")
p = t.tool("sweep", t.write("slurm.ini", f"[sweep]\nscenario = {fence}\nseeds = 1..12\n"), "--out", out,
           "--dry-run", "--slurm", "--jobs", "4", "--sbatch-arg=--partition=fast", "--sbatch-arg=--time=5")
sbatch = [shlex.split(line) for line in p.stdout.splitlines() if line.startswith("sbatch ")]
t.check(p.returncode == 0 and len(sbatch) == 1, f"--slurm --dry-run prints one sbatch command ({p.stderr.strip()})")
if sbatch:
    cmd = sbatch[0]
    t.check("--wait" in cmd and "--array=0-11%4" in cmd, f"one array of 12 tasks, 4 at a time, waited for: {cmd}")
    t.check(cmd[-3:] == ["--partition=fast", "--time=5", os.path.join(out, "slurm-array.sh")],
            f"--sbatch-arg options passed through before the script: {cmd[-3:]}")
    with open(os.path.join(out, "slurm-array.sh")) as f:
        script = f.read()
    t.check("run-point.sh" in script and "SLURM_ARRAY_TASK_ID" in script, "the array script runs run-point.sh for its task")
    with open(os.path.join(out, "run-point.sh")) as f:
        t.check("$((i + 1))p" in f.read(), "run-point.sh picks line I+1 of jobs.txt")

# --runs-per-task 5 on 12 runs: an array of 3 tasks (5, 5 and the 2 left), each running its runs in
# turn. Each task, run here as Slurm would start it, runs exactly its own runs (0-4, 5-9, then the 10 and
# 11 left), and asks run-point.sh for no run past the last (which would say so on stderr).
out = os.path.join(t.tmp, "slurm_per_task")
p = t.tool("sweep", t.write("per.ini", f"[sweep]\nscenario = {fence}\nseeds = 1..12\n"), "--out", out,
           "--dry-run", "--slurm", "--runs-per-task", "5")
sbatch = [shlex.split(line) for line in p.stdout.splitlines() if line.startswith("sbatch ")]
t.check(p.returncode == 0 and len(sbatch) == 1 and "--array=0-2" in sbatch[0],
        f"12 runs, 5 a task: --array=0-2 ({p.stdout.strip()[-300:]} {p.stderr.strip()})")
if sbatch:
    done = set()
    for task, runs in ((0, range(0, 5)), (1, range(5, 10)), (2, range(10, 12))):
        env = dict(os.environ, SLURM_ARRAY_TASK_ID=str(task))
        r = subprocess.run(["bash", os.path.join(out, "slurm-array.sh")], env=env, capture_output=True, text=True)
        rc = set(f for f in os.listdir(os.path.join(out, "runs")) if f.endswith(".rc")) if os.path.isdir(
            os.path.join(out, "runs")) else set()
        ran, done = sorted(rc - done), rc
        t.check(r.returncode == 0 and ran == [f"{i:04d}.rc" for i in runs] and r.stderr == "",
                f"task {task} runs runs {runs.start}..{runs.stop - 1} only: {ran} {r.stderr[-300:]}")
for bad_args, why in ((["--runs-per-task", "0", "--slurm"], "at least 1"), (["--runs-per-task", "2"], "only with --slurm")):
    p = t.tool("sweep", t.write("per_bad.ini", f"[sweep]\nscenario = {fence}\nseeds = 1..2\n"), "--dry-run", *bad_args)
    t.check(p.returncode == 2 and why in p.stderr, f"{bad_args}: exit 2 naming '{why}' ({p.returncode}: {p.stderr.strip()})")

# A second sweep into the same directory replaces the first's files (none may leak into a merge).
out = os.path.join(t.tmp, "reuse")
t.tool("sweep", t.write("a.ini", f"[sweep]\nscenario = {fence}\nseeds = 1..5\n"), "--out", out, "--dry-run")
stale = os.path.join(out, "runs", "0004.json")
open(stale, "w").write("{}")
p = t.tool("sweep", t.write("b.ini", f"[sweep]\nscenario = {fence}\nseeds = 1\n"), "--out", out, "--dry-run")
t.check(p.returncode == 0 and not os.path.exists(stale), "a rerun into the same --out removes the earlier runs")

# The committed sweep files expand (their scenario paths and keys are real), with the sizes the README
# and the Slurm test rely on.
sizes = {"fence_wake_48": 48, "wake_vs_idle": 16, "present_vs_link": 6, "underflow_vs_fifo": 39}
os.makedirs(os.path.join(t.tmp, "committed"))  # --out's parent must exist, as for every output
for stem, n in sizes.items():
    out = os.path.join(t.tmp, "committed", stem)
    p = t.tool("sweep", os.path.join(SOURCE_DIR, "sweeps", stem + ".ini"), "--out", out, "--dry-run")
    ok = t.check(p.returncode == 0, f"sweeps/{stem}.ini expands (exit {p.returncode}: {p.stderr.strip()})")
    if ok:
        with open(os.path.join(out, "jobs.txt")) as f:
            lines = f.read().splitlines()
        t.check(len(lines) == n, f"sweeps/{stem}.ini: {n} runs (got {len(lines)})")

# `gpumodel sweep` dispatches to this tree's workbench with GPUMODEL_BIN set to itself. A binary built
# from another checkout runs that checkout's workbench: then there is nothing of this tree to check.
p = subprocess.run([t.gpumodel, "sweep", "--help"], capture_output=True, text=True)
if "cannot read" in p.stderr and os.path.join(SOURCE_DIR, "workbench") not in p.stderr:
    print(f"note: {t.gpumodel} belongs to another source tree ({p.stderr.strip()}); dispatch not checked")
else:
    t.check(p.returncode == 0 and "[axes]" in p.stdout, f"gpumodel sweep --help prints the file format ({p.stderr.strip()})")
    env = dict(os.environ, GPUMODEL_BIN="/nonexistent")
    p = subprocess.run([t.gpumodel, "sweep", os.path.join(SOURCE_DIR, "sweeps", "wake_vs_idle.ini"),
                        "--out", os.path.join(t.tmp, "dispatch"), "--dry-run"], capture_output=True, text=True, env=env)
    t.check(p.returncode == 0 and os.path.realpath(p.stdout.split()[0]) == os.path.realpath(t.gpumodel),
            f"gpumodel sweep sets GPUMODEL_BIN to itself (exit {p.returncode}: {p.stderr.strip()})")

# one_at_a_time: the scenario's own values first, then each axis value alone: 1 + 2 + 3 = 6 points.
jobs, points = dry_run("one_at_a_time", f"""
[sweep]
scenario = {fence}
mode = one_at_a_time
[axes]
cpu.idle_state = C1, C6
cpu.thread_wake_ns = 1000, 2000, 4000
[fixed]
workload.signal_delay_us = 20
""")
if jobs:
    got = [{k: v for k, v in overrides(argv)[0].items() if k != "workload.signal_delay_us"} for argv in jobs]
    want = [{}, {"cpu.idle_state": "C1"}, {"cpu.idle_state": "C6"}, {"cpu.thread_wake_ns": "1000"},
            {"cpu.thread_wake_ns": "2000"}, {"cpu.thread_wake_ns": "4000"}]
    t.check(got == want, f"one_at_a_time: the base, then each value alone: {got}")
    t.check(all(overrides(argv)[0].get("workload.signal_delay_us") == "20" for argv in jobs),
            "one_at_a_time: fixed overrides on every line")

t.done()

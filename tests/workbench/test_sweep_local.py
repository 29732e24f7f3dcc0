#!/usr/bin/env python3
"""A real local sweep (GNU parallel, the gpumodel binary): 4 runs of fence_signal, 2 refused by the
model (an out-of-range value), merged into one row per run in run order with every failed run kept
and saying why; the passing rows carry exactly what the binary reports when run by hand; the merge
is the same whatever order the runs finish in; a crashed run and a run with no results are rows too."""

import json
import os
import shlex
import subprocess

from wbtest import Test, read_csv, without_host

t = Test("workbench_sweep_local")
fence = t.scenario("fence_signal")

sweep = t.write("four.ini", f"""
[sweep]
scenario = {fence}
seeds = 1
[axes]
cpu.idle_state = C1, C6
cpu.thread_wake_ns = 1000, -5
""")
out = os.path.join(t.tmp, "four runs, Bob's")  # a space and a quote: every command line quotes its paths
p = t.tool("sweep", sweep, "--out", out, "--jobs", "2")
t.check(p.returncode == 1, f"a sweep with a refused run exits 1 (got {p.returncode}: {p.stderr.strip()})")
t.check("2 of 4 runs passed, 2 failed" in p.stdout, f"the summary counts the failed runs: {p.stdout!r}")
t.check(p.stdout.count("refused, exit 2") == 2, "the summary lists both refused runs")

header, rows = read_csv(os.path.join(out, "merged.csv"))
t.check(header[:5] == ["run", "point", "seed", "cpu.idle_state", "cpu.thread_wake_ns"]
        and header[5:9] == ["exit_code", "verdict", "why", "sim_time_ns"],
        f"merged.csv starts run, point, seed, the axes, exit_code, verdict, why, sim_time_ns: {header[:9]}")
t.check(len(rows) == 4, f"one row per run, failed ones kept: 4 rows (got {len(rows)})")
t.check([r["run"] for r in rows] == ["0", "1", "2", "3"], f"rows in run order: {[r['run'] for r in rows]}")
want = [("C1", "1000"), ("C1", "-5"), ("C6", "1000"), ("C6", "-5")]
t.check([(r["cpu.idle_state"], r["cpu.thread_wake_ns"]) for r in rows] == want, "each row's axis values")
for col in ("signal_to_wake_ns", "idle_exit_ns", "monitor.lost_interrupt.violations", "host_wall_s"):
    t.check(col in header, f"column {col}")
for r in rows:
    if r["cpu.thread_wake_ns"] == "-5":
        t.check(r["exit_code"] == "2" and r["verdict"] == "refused", f"run {r['run']}: refused, exit 2 ({r})")
        t.check("cpu.thread_wake_ns" in r["why"] and "out of range" in r["why"],
                f"run {r['run']}: why is the model's refusal naming the key: {r['why']!r}")
        t.check(r.get("signal_to_wake_ns") == "" and r.get("host_wall_s") == "", f"run {r['run']}: no figures")
        continue
    if not t.check(r["exit_code"] == "0" and r["verdict"] == "pass" and r["why"] == "", f"run {r['run']}: pass ({r})"):
        continue
    # The row holds what the binary says for the same command, run here by hand.
    direct = os.path.join(t.tmp, f"direct{r['run']}.json")
    d = subprocess.run([t.gpumodel, fence, f"--cpu.idle_state={r['cpu.idle_state']}",
                        f"--cpu.thread_wake_ns={r['cpu.thread_wake_ns']}", "--seed", "1", "--results", direct],
                       capture_output=True, text=True)
    with open(direct) as f:
        res = json.load(f)
    for m in ("signal_to_wake_ns", "idle_exit_ns", "thread_wake_ns", "interrupts_raised"):
        t.check(float(r[m]) == float(res["metrics"][m]), f"run {r['run']}: {m} {r[m]} = the binary's {res['metrics'][m]}")
    t.check(float(r["sim_time_ns"]) == res["sim_time_ns"], f"run {r['run']}: sim_time_ns")
c1, c6 = (rows + [{}, {}, {}])[0], (rows + [{}, {}, {}])[2]
t.check(float(c6.get("idle_exit_ns") or 0) > float(c1.get("idle_exit_ns") or 0), "C6's exit costs more than C1's")

with open(os.path.join(out, "merged.json")) as f:
    merged = json.load(f)
t.check([(r["run"], r["verdict"]) for r in merged["runs"]] == [(0, "pass"), (1, "refused"), (2, "pass"), (3, "refused")],
        "merged.json: the same runs, failed ones kept")
t.check(merged["host"]["backend"] == "local" and merged["host"]["jobs"] == 2, f"merged.json host: {merged['host']}")
with open(os.path.join(out, "jobs.txt")) as f:
    jobs = f.read().splitlines()
t.check(len(jobs) == 4 and all(shlex.split(j)[0] == t.gpumodel for j in jobs), "jobs.txt: 4 command lines")
t.check(os.path.getsize(os.path.join(out, "joblog.txt")) > 0, "GNU parallel's job log written")

# Deterministic: one job at a time (another finishing order) gives the same CSV but for host_ columns.
out1 = os.path.join(t.tmp, "four_serial")
t.tool("sweep", sweep, "--out", out1, "--jobs", "1")
t.check(without_host(os.path.join(out, "merged.csv")) == without_host(os.path.join(out1, "merged.csv")),
        "--jobs 1 and --jobs 2 merge to the same CSV (host_ columns aside)")

# A crashed run and a run that exits 0 without results are rows too: a stand-in binary that runs the
# real one except for two values. Run 0 is made to finish last, so a merge in finishing order shows.
fixture = t.write("crashing-gpumodel", f"""#!/bin/sh
case "$*" in
  *--cpu.thread_wake_ns=1000*) sleep 0.5 ;;
  *--cpu.thread_wake_ns=3000*) kill -SEGV $$ ;;
  *--cpu.thread_wake_ns=4000*) echo "no results from me" >&2; exit 0 ;;
esac
exec {shlex.quote(t.gpumodel)} "$@"
""")
os.chmod(fixture, 0o755)
bad = t.write("crash.ini", f"[sweep]\nscenario = {fence}\n[axes]\ncpu.thread_wake_ns = 1000, 3000, 4000\n")
out2 = os.path.join(t.tmp, "crash")
p = t.tool("sweep", bad, "--out", out2, "--gpumodel", fixture, "--jobs", "3")
t.check(p.returncode == 1, f"a sweep with a crashed run exits 1 (got {p.returncode}: {p.stderr.strip()})")
_, rows = read_csv(os.path.join(out2, "merged.csv"))
t.check(len(rows) == 3, f"crash sweep: 3 rows (got {len(rows)})")
if len(rows) == 3:
    t.check([r["run"] for r in rows] == ["0", "1", "2"], f"rows in run order, not finishing order: {[r['run'] for r in rows]}")
    t.check(rows[0]["verdict"] == "pass" and rows[0]["exit_code"] == "0", f"run 0 passes: {rows[0]}")
    t.check(rows[1]["verdict"] == "crashed" and rows[1]["exit_code"] == "139" and "SIGSEGV" in rows[1]["why"],
            f"run 1: crashed, exit 139, why names SIGSEGV: {rows[1]['verdict']}, {rows[1]['exit_code']}, {rows[1]['why']!r}")
    t.check(rows[2]["verdict"] == "no_results" and rows[2]["exit_code"] == "0"
            and "no results file" in rows[2]["why"] and "no results from me" in rows[2]["why"],
            f"run 2: exit 0 without results is a failed row quoting stderr: {rows[2]['why']!r}")

t.done()

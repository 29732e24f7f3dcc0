#!/usr/bin/env python3
"""gpumodel sweep: run one scenario over a grid of parameter values and seeds, locally through GNU
parallel or as one Slurm job array, and merge every run's results into one CSV and one JSON file.
See HELP below (also `gpumodel sweep --help`) and README.md, Workbench."""

import argparse
import csv
import io
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wbcommon as wb  # noqa: E402
from sweepfile import Sweep  # noqa: E402

HELP = """\
usage: gpumodel sweep SWEEP.ini [--out DIR] [--jobs N] [--slurm [--runs-per-task K] [--sbatch-arg=ARG ...]]
                                [--dry-run]
                                [--gpumodel PATH]

Runs SWEEP.ini's scenario once per point and seed, then merges the runs into DIR/merged.csv and
DIR/merged.json. Exit code: 0 every run passed; 1 a run failed (a fail verdict, a refusal, a crash
or missing results: the run is still a row of the merge, with why); 2 bad sweep input.

SWEEP.ini (a comment starts with # or ; at the start of a line or after a space):

  [sweep]
  scenario = ../scenarios/fence_signal.ini   # required; relative to the sweep file's directory, or
                                             # a bare NAME: the source tree's scenarios/NAME.ini
  mode = cartesian                           # or zip, or one_at_a_time; default cartesian
  seeds = 1, 2, 3                            # or a range 1..3; default 1

  [axes]                                     # one line per swept parameter
  cpu.idle_state = C1, C1E, C3, C6           # a list of values
  cpu.thread_wake_ns = 1000..4000 step 1000  # or a numeric range, both ends included (step 1 if omitted)

  [fixed]                                    # optional: overrides given to every run
  workload.signal_delay_us = 50

  cartesian: every combination of the axes, the first axis outermost (the last varies fastest).
  zip:       the i-th value of every axis together; every axis must have the same number of values.
  one_at_a_time: point 0 runs the scenario's own values, then each value of each axis alone (the
             other axes at the scenario's values: an empty cell in merged.csv); a sensitivity study.
  Every point runs once per seed; runs are numbered point-major: run = point x seeds + seed index.
  An axis or fixed key must be a parameter the scenario sees (gpumodel --list-params); a key may not
  be both an axis and fixed. Values are passed to gpumodel as written: a value the model refuses
  makes that run a refused row (exit 2), not a refused sweep.

DIR (default build/sweeps/<SWEEP stem> under the working directory, never in the source tree;
replaced if it holds an earlier sweep, refused if it holds anything else):
  jobs.txt        one full gpumodel command line per run, in run order
  points.json     the expanded sweep: axes, points, runs
  run-point.sh    runs line I+1 of jobs.txt and records its exit code in runs/NNNN.rc
  runs/NNNN.json  each run's results; NNNN.out, NNNN.err its stdout and stderr
  joblog.txt      GNU parallel's job log (local); slurm/ the array's logs (--slurm)
  merged.csv      one row per run: run, point, seed, each axis, exit_code, verdict, why, sim_time_ns,
                  every metric (nested ones flattened: name.sub), monitor.NAME.violations, bugcheck,
                  then host_* wall-clock timings (the only columns that differ between two sweeps)
  merged.json     the same rows with their sections, and the sweep's own wall time under "host"

options:
  --out DIR           output directory
  --jobs N            runs at a time: locally (default: every CPU this process may use), or
                      with --slurm tasks at a time, the array's limit (--array=0-(tasks-1)%N;
                      default: no limit)
  --slurm             run as one Slurm job array: sbatch --wait --array=0-(tasks-1), one CPU a
                      task, a task a run unless --runs-per-task says more
  --runs-per-task K   with --slurm, K runs one after another in each array task (the last task
                      takes what is left), so a sweep of short runs pays Slurm's per-task start-up
                      once per K runs: on the one-node local Slurm tasks start once a second per CPU
                      (48 runs of 0.05 s took 26 s one a task, 6 s five a task); default 1
  --sbatch-arg=ARG    an extra sbatch option, repeatable (--sbatch-arg=--partition=debug)
  --dry-run           write jobs.txt and points.json (with --slurm slurm-array.sh), print the
                      commands (and the sbatch command), run nothing
  --gpumodel PATH     the binary (default: $GPUMODEL_BIN, which `gpumodel sweep` sets, else
                      build/gpumodel)
"""

OUTPUT_NAMES = ("jobs.txt", "points.json", "run-point.sh", "slurm-array.sh", "joblog.txt",
                "merged.csv", "merged.json", "runs", "slurm")


# ----------------------------------------------------------------------------------------------
# The output directory and the generated files


def prepare_out(out, given, inputs):
    """The output directory: made (its parent must exist when --out names it, as for every output),
    or an earlier sweep's, whose files are removed; an input of this sweep among them is refused."""
    parent = os.path.dirname(out)
    if given and not os.path.isdir(parent):
        raise wb.BadInput(f"--out {given}: no such directory '{os.path.dirname(given) or '.'}'; make it first")
    for what, path in inputs:
        rel = os.path.relpath(os.path.realpath(path), os.path.realpath(out))
        if rel.split(os.sep, 1)[0] in OUTPUT_NAMES or wb.same_file(path, out):
            raise wb.BadInput(f"--out {given or out}: would replace {what} {path}, which the sweep reads; "
                              "give another directory")
    if os.path.exists(out):
        if not os.path.isdir(out):
            raise wb.BadInput(f"--out {out}: exists and is not a directory")
        entries = os.listdir(out)
        if entries and "points.json" not in entries:
            raise wb.BadInput(f"--out {out}: exists, is not empty and is not a sweep's output (no "
                              "points.json); give another directory or empty it")
        for name in OUTPUT_NAMES:  # an earlier sweep's files: none may leak into this merge
            p = os.path.join(out, name)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            elif os.path.lexists(p):
                os.remove(p)
    try:
        os.makedirs(os.path.join(out, "runs"), exist_ok=True)
    except OSError as e:
        raise wb.BadInput(f"--out {out}: cannot create: {e.strerror}")


def run_name(index, width):
    return str(index).zfill(width)


def write_generated(sweep, out, gpumodel, width):
    runs_dir = os.path.join(out, "runs")
    lines = []
    for i, (p, seed) in enumerate(sweep.runs):
        base = os.path.join(runs_dir, run_name(i, width))
        args = [gpumodel, sweep.scenario]
        args += [f"--{k}={v}" for k, v in sweep.fixed.items()]
        args += [f"--{k}={v}" for k, v in sweep.points[p].items()]
        args += ["--seed", seed, "--results", base + ".json"]
        lines.append(" ".join(shlex.quote(a) for a in args)
                     + f" >{shlex.quote(base + '.out')} 2>{shlex.quote(base + '.err')}")
    with open(os.path.join(out, "jobs.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    points = {
        "sweep": sweep.describe(),
        "points": [{"point": i, "params": p} for i, p in enumerate(sweep.points)],
        "runs": [{"run": i, "point": p, "seed": int(s), "results": f"runs/{run_name(i, width)}.json"}
                 for i, (p, s) in enumerate(sweep.runs)],
    }
    with open(os.path.join(out, "points.json"), "w") as f:
        json.dump(points, f, indent=1)
        f.write("\n")
    script = f"""#!/bin/bash
# Written by workbench/sweep.py: runs line I+1 of jobs.txt (run I) and records its exit code in
# runs/I.rc (zero-padded to {width} digits), then exits with it. usage: run-point.sh I
dir=$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)
i=$1
line=$(sed -n "$((i + 1))p" "$dir/jobs.txt")
if [ -z "$line" ]; then echo "run-point.sh: jobs.txt has no line $((i + 1))" >&2; exit 127; fi
bash -c "$line"
rc=$?
name=$(printf '%0{width}d' "$i")
echo "$rc" >"$dir/runs/$name.rc.tmp" && mv "$dir/runs/$name.rc.tmp" "$dir/runs/$name.rc"
exit "$rc"
"""
    path = os.path.join(out, "run-point.sh")
    with open(path, "w") as f:
        f.write(script)
    os.chmod(path, 0o755)
    return lines


# ----------------------------------------------------------------------------------------------
# Running: GNU parallel or one Slurm job array


def run_local(out, n_runs, jobs):
    if shutil.which("parallel") is None:
        raise wb.BadInput("GNU parallel is not installed (apt-get install parallel); or use --slurm")
    # -q: parallel quotes the command's words (a directory may hold spaces or quotes).
    cmd = ["parallel", "--will-cite", "-q", "--jobs", str(jobs), "--joblog", os.path.join(out, "joblog.txt"),
           "--halt", "never", "bash", os.path.join(out, "run-point.sh")]
    indices = "".join(f"{i}\n" for i in range(n_runs))
    # parallel's exit code counts failed jobs: a failed run is a row of the merge, not an error here.
    subprocess.run(cmd, input=indices.encode(), check=False)


def slurm_command(out, n_runs, sweep, jobs, sbatch_args, per_task=1):
    """Writes slurm-array.sh; returns the sbatch command that submits it as one job array of
    ceil(runs / per_task) tasks, task T running runs T*per_task .. T*per_task + per_task - 1."""
    os.makedirs(os.path.join(out, "slurm"), exist_ok=True)
    script = os.path.join(out, "slurm-array.sh")
    point = shlex.quote(os.path.join(out, "run-point.sh"))
    with open(script, "w") as f:
        f.write(f"""#!/bin/bash
# Written by workbench/sweep.py: array task T runs lines T*{per_task}+1 .. T*{per_task}+{per_task} of jobs.txt
# (at most line {n_runs}), one after another, through run-point.sh, which records each run's exit code.
# The task itself succeeds, so Slurm reports only its own failures.
first=$((SLURM_ARRAY_TASK_ID * {per_task}))
for ((i = first; i < first + {per_task} && i < {n_runs}; i++)); do
  bash {point} "$i" || true
done
""")
    os.chmod(script, 0o755)
    tasks = -(-n_runs // per_task)
    array = f"0-{tasks - 1}" + (f"%{jobs}" if jobs else "")  # %N: at most N tasks at a time
    return ["sbatch", "--wait", "--parsable", f"--array={array}", f"--job-name=gpumodel-sweep-{sweep.stem}",
            f"--chdir={out}", f"--output={os.path.join(out, 'slurm', '%A_%a.out')}", "--ntasks=1",
            "--cpus-per-task=1", *sbatch_args, script]


def run_slurm(cmd):
    if shutil.which("sbatch") is None:
        raise wb.BadInput("--slurm: sbatch is not installed (apt-get install slurm-client, or "
                          "workbench/slurm/start-local-slurm.sh for a one-node Slurm)")
    print("sweep: " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    job = p.stdout.strip().split(";")[0]
    if not re.fullmatch(r"[0-9]+", job or ""):
        msg = " ".join(p.stderr.split()) or f"exit {p.returncode}, no job id"
        raise wb.BadInput(f"--slurm: sbatch did not submit the array: {msg}")
    if p.returncode != 0 or p.stderr.strip():
        print(f"sweep: sbatch --wait for job {job} ended with exit {p.returncode}: "
              f"{' '.join(p.stderr.split())}", file=sys.stderr)
    return job


# ----------------------------------------------------------------------------------------------
# Merging


def first_lines(path, limit=400):
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return ""
    text = " | ".join(line.strip() for line in text.splitlines() if line.strip())
    return text if len(text) <= limit else text[:limit] + " ..."


def signal_name(n):
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


def merge_run(out, width, i, point, seed, params):
    """One run as a row: what its results say, or why there are none."""
    base = os.path.join(out, "runs", run_name(i, width))
    rc = None
    try:
        with open(base + ".rc") as f:
            rc = int(f.read().strip())
    except (OSError, ValueError):
        pass
    row = {"run": i, "point": point, "seed": int(seed), "params": params, "exit_code": rc}
    results, problem = None, None
    if os.path.exists(base + ".json"):
        try:
            with open(base + ".json") as f:
                results = json.load(f)
            if not isinstance(results, dict) or "verdict" not in results:
                results, problem = None, "the results file has no verdict"
        except (OSError, ValueError) as e:
            problem = f"the results file is not valid JSON ({e})"
    stderr = first_lines(base + ".err")
    if results is not None:
        verdict = results.get("verdict")
        why = [str(w) for w in results.get("why_failed") or []]
        expected = {"pass": 0, "fail": 1}.get(verdict)
        if rc != expected:
            why.append(f"exit code {rc if rc is not None else 'not recorded'} with verdict {verdict}")
        row.update(verdict=verdict, why="; ".join(why), sim_time_ns=results.get("sim_time_ns"),
                   metrics=wb.flatten(results.get("metrics") or {}, "", {}),
                   monitors=results.get("monitors") or {}, bugcheck=results.get("bugcheck"),
                   host=wb.flatten(results.get("host") or {}, "", {}))
    else:
        if rc is None:
            verdict, why = "not_run", "no exit code recorded: the run did not start or did not finish"
        elif rc == 2:
            verdict, why = "refused", stderr or "exit 2 with nothing on stderr"
        elif rc > 128:
            verdict, why = "crashed", f"killed by {signal_name(rc - 128)}"
        else:
            verdict, why = "no_results", f"exit {rc} and no results file"
        if problem:
            why = f"{problem}; {why}"
        if rc is not None and rc != 2 and stderr:
            why += f"; stderr: {stderr}"
        row.update(verdict=verdict, why=why, sim_time_ns=None, metrics={}, monitors={}, bugcheck=None,
                   host={})
    row["failed"] = not (rc == 0 and row["verdict"] == "pass")
    return row


def csv_columns(sweep, rows):
    head = [wb.RUN, wb.POINT, wb.SEED, *sweep.axes, wb.EXIT_CODE, wb.VERDICT, wb.WHY, "sim_time_ns"]
    taken = set(head)
    metric_cols, monitor_cols, bug_cols, host_cols = {}, {}, {}, {}
    for r in rows:  # first appearance in run order: deterministic, and the scenario's own order
        for k in r["metrics"]:
            if k not in metric_cols:
                metric_cols[k] = f"metrics.{k}" if k in taken else k  # never shadow an axis
        for k in wb.flatten(r["monitors"], "monitor", {}):
            monitor_cols.setdefault(k, k)
        for k in wb.flatten(r["bugcheck"], "bugcheck", {}):
            bug_cols.setdefault(k, k)
        for k in r["host"]:
            host_cols.setdefault(k, wb.HOST_PREFIX + k)
    return head, metric_cols, monitor_cols, bug_cols or {"bugcheck": "bugcheck"}, host_cols


def write_merged(sweep, out, rows, host):
    head, metric_cols, monitor_cols, bug_cols, host_cols = csv_columns(sweep, rows)
    header = head + list(metric_cols.values()) + list(monitor_cols) + list(bug_cols) + list(host_cols.values())
    f = io.StringIO()  # both merged files appear whole or not at all (wb.write_whole)
    w = csv.writer(f, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        cells = [r["run"], r["point"], r["seed"], *(r["params"].get(k) for k in sweep.axes),
                 r["exit_code"], r["verdict"], " ".join(r["why"].split()), r["sim_time_ns"]]
        cells += [r["metrics"].get(k) for k in metric_cols]
        mon = wb.flatten(r["monitors"], "monitor", {})
        cells += [mon.get(k) for k in monitor_cols]
        bug = wb.flatten(r["bugcheck"], "bugcheck", {})
        cells += [bug.get(k) for k in bug_cols]
        cells += [r["host"].get(k) for k in host_cols]
        w.writerow([wb.cell(c) for c in cells])
    wb.write_whole("merged.csv", os.path.join(out, "merged.csv"), f.getvalue())
    merged = {"sweep": sweep.describe(), "host": host,
              "runs": [{k: v for k, v in r.items() if k != "failed"} for r in rows]}
    wb.write_whole("merged.json", os.path.join(out, "merged.json"), json.dumps(merged, indent=1) + "\n")


# ----------------------------------------------------------------------------------------------


def plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="gpumodel sweep", usage=argparse.SUPPRESS, add_help=False,
                                 formatter_class=argparse.RawDescriptionHelpFormatter, description=HELP)
    ap.add_argument("-h", "--help", action="store_true")
    ap.add_argument("sweep_file", nargs="?")
    wb.add_run_options(ap)
    a = ap.parse_args(argv)
    if a.help:
        print(HELP, end="")
        sys.exit(0)
    if not a.sweep_file:
        ap.error("a sweep file is required: gpumodel sweep SWEEP.ini (--help shows its format)")
    wb.check_run_options(ap, a)
    return a


def main(argv):
    a = parse_args(argv)
    t0 = time.monotonic()
    try:
        sweep = Sweep(a.sweep_file)
        gpumodel = wb.find_gpumodel(a.gpumodel)
        sweep.check_keys_against(gpumodel)
        out = os.path.abspath(a.out or wb.default_out("--out DIR", "sweeps", sweep.stem))
        prepare_out(out, a.out, [("the sweep file", a.sweep_file), ("the scenario file", sweep.scenario)])
        width = max(4, len(str(len(sweep.runs) - 1)))
        lines = write_generated(sweep, out, gpumodel, width)
        n = len(sweep.runs)
        shape = (f"{plural(len(sweep.points), 'point')} x {plural(len(sweep.seeds), 'seed')}, "
                 f"{sweep.mode}")
        per_task = a.runs_per_task or 1
        sbatch = slurm_command(out, n, sweep, a.jobs, a.sbatch_arg, per_task) if a.slurm else None
        if a.dry_run:
            print("\n".join(lines))
            if sbatch:
                print(" ".join(shlex.quote(c) for c in sbatch))
            print(f"sweep: {n} runs ({shape}); dry run: {out}/jobs.txt, nothing run")
            return 0
        t_run = time.monotonic()
        if a.slurm:
            print(f"sweep: {n} runs ({shape}) as one Slurm job array of {plural(-(-n // per_task), 'task')}"
                  + (f", {per_task} runs a task" if per_task > 1 else ""), flush=True)
            job = run_slurm(sbatch)
            backend = {"backend": "slurm", "job": job, "jobs": a.jobs, "runs_per_task": per_task,
                       "sbatch_args": a.sbatch_arg}
        else:
            jobs = a.jobs or len(os.sched_getaffinity(0))
            print(f"sweep: {n} runs ({shape}) with GNU parallel, {jobs} at a time", flush=True)
            run_local(out, n, jobs)
            backend = {"backend": "local", "jobs": jobs}
    except wb.BadInput as e:
        wb.fail_bad_input("sweep", str(e))
    run_wall = time.monotonic() - t_run
    rows = [merge_run(out, width, i, p, s, sweep.points[p]) for i, (p, s) in enumerate(sweep.runs)]
    try:
        write_merged(sweep, out, rows, dict(backend, run_wall_s=round(run_wall, 3),
                                            total_wall_s=round(time.monotonic() - t0, 3)))
    except wb.BadInput as e:  # a full disk: the run's outputs could not be written
        wb.fail_bad_input("sweep", str(e))
    failed = [r for r in rows if r["failed"]]
    print(f"sweep: {n - len(failed)} of {n} runs passed, {len(failed)} failed; runs took {run_wall:.1f} s "
          f"of wall time ({backend['backend']}); {out}/merged.csv")
    for r in failed[:20]:
        params = " ".join(f"{k}={v}" for k, v in r["params"].items())
        print(f"  run {r['run']} (point {r['point']}, seed {r['seed']}{', ' + params if params else ''}): "
              f"{r['verdict']}, exit {r['exit_code']}: {r['why']}")
    if len(failed) > 20:
        print(f"  ... and {len(failed) - 20} more (merged.csv, column why)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""The simulator's speed as counted instructions, which the machine's load does not move.

    bench/instr.py [--gpumodel BIN] [--jobs N] [--only NAME[,NAME]] [--check FILE | --write FILE]
                   [--tolerance PCT] [--measured FILE]

Each path runs twice under cachegrind (`valgrind --tool=cachegrind --cache-sim=no`), at two run lengths
that differ only in how many units they do (signals, frames, TDRs, presents); the difference of the two
instruction counts over the difference of the units is the cost of one unit, with the setup (adapter
start, fences and queues created, elaboration) cancelled. Wall time on a shared two-core machine varies
tenfold with its load; this count varies by a few instructions.

--write FILE records the counts as the baseline (bench/instructions.json is the committed one);
--check FILE fails (exit 1) when a path costs more than --tolerance percent (default 4) over its
baseline, and says so for a path that got cheaper by as much (update the baseline in the same commit,
with the reason, either way). --measured FILE takes the counts from a file --write made (another
build's) instead of running anything: two builds compared without measuring again. Exit 2 on bad input:
an unknown path name, a baseline or measured file that cannot be read or lacks a path.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name: (what one unit is, scenario, fixed overrides, the key that sets the run's length, the two lengths,
# units per length step). Every run's verdict must pass: a count of a failing run measures something else.
PATHS = {
    "signal_logged": ("a SIGNAL with native fence logs (the default)", "fence_stress",
                      ["--vidsch.native_fence_logs=true"], "workload.signals", (2000, 12000), 1),
    "signal_unlogged": ("a SIGNAL without logs", "fence_stress", ["--vidsch.native_fence_logs=false"],
                        "workload.signals", (2000, 12000), 1),
    # start_jitter_us = 12 ms keeps each frame within its refresh (CPU 12 ms + render 4 ms + copy
    # 0.63 ms < 16.67 ms): a frame a refresh.
    "hybrid_present_frame": ("a 1080p60 frame presented with one copy across the link", "hybrid_present",
                             ["--workload.start_jitter_us=12000", "--present.path=one_copy"], "workload.frames",
                             (10, 30), 1),
    "game_frame": ("a frame of the shipped game (frame_loop)", "frame_loop", [], "workload.frames", (20, 40), 1),
    "video_frame": ("a 30 fps video frame decoded and shown", "video_playback", [], "workload.frames", (10, 30), 1),
    # Each timeout past the first is one more TDR (engine reset and its recovery) before the bug check.
    "tdr": ("a TDR: timeout, engine reset, recovery", "tdr_limit", [], "vidsch.tdr_limit_count", (2, 5), 1),
    "replayed_present": ("a present of the shipped PresentMon capture replayed", "presentmon_replay", [],
                         "workload.frames", (200, 400), 1),
}


def count(gpumodel, scenario, extra, key, n):
    """Instructions of one run and its verdict."""
    with tempfile.TemporaryDirectory() as tmp:
        res = os.path.join(tmp, "r.json")
        cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", gpumodel,
               os.path.join(ROOT, "scenarios", scenario + ".ini"), *extra, "--%s=%d" % (key, n), "--results", res]
        p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        m = re.search(r"I\s+refs:\s+([\d,]+)", p.stderr)
        if not m or not os.path.exists(res):
            raise RuntimeError("%s failed (exit %d):\n%s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
        verdict = json.load(open(res))["verdict"]
        return int(m.group(1).replace(",", "")), verdict, " ".join(
            ["scenarios/%s.ini" % scenario, *extra, "--%s=%d" % (key, n)])


def measure(gpumodel, name):
    what, scenario, extra, key, (n1, n2), per = PATHS[name]
    (i1, v1, c1), (i2, v2, c2) = (count(gpumodel, scenario, extra, key, n) for n in (n1, n2))
    for v, c in ((v1, c1), (v2, c2)):
        if v != "pass":
            raise RuntimeError("%s: the run's verdict is %s, not pass: %s" % (name, v, c))
    return {"what": what, "instructions": round((i2 - i1) / ((n2 - n1) * per)), "runs": [c1, c2],
            "totals": [i1, i2]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpumodel", default=os.path.join(ROOT, "build", "gpumodel"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--check")
    g.add_argument("--write")
    ap.add_argument("--tolerance", type=float, default=4.0)
    ap.add_argument("--measured")
    a = ap.parse_args()
    a.gpumodel = os.path.abspath(a.gpumodel)  # the runs start in a scratch directory
    names = [n for n in a.only.split(",") if n] or list(PATHS)
    for n in names:
        if n not in PATHS:
            print("bench/instr.py: --only names '%s', not a path; allowed: %s" % (n, ", ".join(PATHS)),
                  file=sys.stderr)
            return 2
    if not 0 < a.tolerance <= 100:
        print("bench/instr.py: --tolerance = %g is out of range; allowed: above 0, at most 100" % a.tolerance,
              file=sys.stderr)
        return 2
    def counts(opt, path):
        try:
            c = json.load(open(path))["paths"]
            for n in names:
                int(c[n]["instructions"])
            return c
        except (OSError, ValueError, TypeError) as e:
            print("bench/instr.py: %s %s cannot be read as counts: %s; allowed: a file --write made"
                  % (opt, path, e), file=sys.stderr)
        except KeyError as e:
            print("bench/instr.py: %s %s has no count for %s; allowed: a file --write made with that path"
                  % (opt, path, e), file=sys.stderr)
        return None

    base = None
    if a.check:
        base = counts("--check", a.check)
        if base is None:
            return 2
    if a.measured:
        got = counts("--measured", a.measured)
        if got is None:
            return 2
    else:
        with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as ex:
            futs = {n: ex.submit(measure, a.gpumodel, n) for n in names}
            got = {}
            for n in names:
                try:
                    got[n] = futs[n].result()
                except RuntimeError as e:
                    print("bench/instr.py: %s" % e, file=sys.stderr)
                    return 1
    worse = []
    print("%-22s %14s %14s %8s  %s" % ("path", "instructions", "baseline", "change", "one unit"))
    for n in names:
        r = got[n]
        line = "%-22s %14s" % (n, format(r["instructions"], ","))
        if base:
            b = base[n]["instructions"]
            pct = 100.0 * (r["instructions"] - b) / b
            line += " %14s %+7.1f%%" % (format(b, ","), pct)
            if pct > a.tolerance:
                worse.append("%s costs %+.1f %% over its baseline (%s instructions, baseline %s; tolerance %g %%)"
                             % (n, pct, format(r["instructions"], ","), format(b, ","), a.tolerance))
            elif pct < -a.tolerance:
                line += "  cheaper: update the baseline"
        else:
            line += " %14s %8s" % ("", "")
        print(line + "  " + r["what"])
    if a.write and not a.measured:
        tmp = a.write + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"how": "bench/instr.py: instructions per unit, the difference of two run lengths under "
                              "cachegrind; RelWithDebInfo build with Debian 12's g++ and SystemC 2.3.4",
                       "paths": got}, f, indent=1)
            f.write("\n")
        os.replace(tmp, a.write)
        print("wrote %s" % a.write)
    for w in worse:
        print("REGRESSION: " + w, file=sys.stderr)
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())

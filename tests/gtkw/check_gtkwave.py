#!/usr/bin/env python3
"""GTKWave itself reads the save files a run writes: under Xvfb, GTKWave 3.3 opens each key scenario's
waveform with its save file and a Tcl script (-S) prints what it shows (the window's start and end
time, the zoom, the primary and named markers, the wave pane's width, the rows), then quits. Checked:
the view GTKWave opens is the file's ([timestart], zoom), it shows every event the view is for, the
markers are the file's, and every row names a signal of the dump (GTKWave drops the rest).

Needs gtkwave and xvfb-run (skipped, exit 77, without them); about a second a scenario, 7 s in all.
usage: check_gtkwave.py --gpumodel BIN --scenarios DIR [SCENARIO[:--key=value ...] ...]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

PROBE = r"""
puts "GW wavewidth [gtkwave::getWaveWidth]"
puts "GW start [gtkwave::getWindowStartTime]"
puts "GW end [gtkwave::getWindowEndTime]"
puts "GW zoom [gtkwave::getZoomFactor]"
puts "GW marker [gtkwave::getMarker]"
set named {}
foreach m {A B C D E F G H I J K L M N O P Q R S T U V W X Y Z} { lappend named [gtkwave::getNamedMarker $m] }
puts "GW named $named"
puts "GW rows [llength [gtkwave::getDisplayedSignals]]"
gtkwave::/File/Quit
"""


def parse_gtkw(text):
    f = {"rows": 0}
    for line in text.splitlines():
        if line.startswith("[timestart] "):
            f["timestart"] = int(line.split()[1])
        elif line.startswith("*"):
            w = line[1:].split()
            f["zoom"], f["marker"], f["named"] = float(w[0]), int(w[1]), [int(x) for x in w[2:]]
        elif line.startswith("+"):
            f["rows"] += 1
    return f


def probe(gtkwave_args, tmp):
    tcl = os.path.join(tmp, "probe.tcl")
    with open(tcl, "w") as fh:
        fh.write(PROBE)
    out = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", "gtkwave", "-S", tcl] + gtkwave_args,
                         capture_output=True, text=True, timeout=60).stdout
    got = {}
    for line in out.splitlines():
        if line.startswith("GW "):
            key, _, value = line[3:].partition(" ")
            got[key] = value
    return got


def check(gpumodel, scenarios_dir, spec, tmp):
    name, _, overrides = spec.partition(":")  # NAME or NAME:--key=value ...
    base = os.path.join(tmp, name)
    rc = subprocess.run([gpumodel, os.path.join(scenarios_dir, name + ".ini"), "--quiet", "--vcd", base + ".vcd",
                         "--results", base + ".json"] + overrides.split(), stdout=subprocess.DEVNULL).returncode
    if rc not in (0, 1):
        return [f"{name}: gpumodel exited {rc}"]
    f = parse_gtkw(open(base + ".gtkw").read())
    events = json.load(open(base + ".json")).get("events", [])
    got = probe([base + ".vcd", base + ".gtkw"], tmp)
    errors = []
    def expect(ok, what):
        if not ok:
            errors.append(f"{name}: {what} (GTKWave: {got})")
    if "start" not in got:
        return [f"{name}: GTKWave printed nothing (is the X server up?)"]
    start, end = int(got["start"]), int(got["end"])
    expect(start == f["timestart"], f"window starts at {start}, the file's [timestart] is {f['timestart']}")
    expect(abs(float(got["zoom"]) - f["zoom"]) < 1e-6, f"zoom {got['zoom']}, the file's {f['zoom']}")
    expect(int(got["marker"]) == f["marker"], f"primary marker {got['marker']}, the file's {f['marker']}")
    expect([int(x) for x in got["named"].split()] == f["named"], "named markers differ from the file's")
    # The layout's assumption (app/gtkw.h): at [size] 1400 800 the wave pane is 1,100 pixels wide.
    expect(int(got["wavewidth"]) >= 1100, f"wave pane {got['wavewidth']} pixels wide, under 1100")
    # Inside the view by at least a pixel, its marker and label clear of the window's edge (the dump runs
    # to the run's end, so an event at a run's last change, fence_signal's wake, has room after it).
    pixel = (end - start) / int(got["wavewidth"])
    for e in events:
        if e["in_view"]:
            expect(start + pixel <= e["ps"] <= end - pixel,
                   f"event {e['name']} at {e['ps']} ps is not inside the view {start}..{end} by a pixel")
    # Every row is shown: none dropped for a signal the dump lacks.
    expect(int(got["rows"]) == f["rows"], f"{got['rows']} signals shown, the file has {f['rows']}")
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumodel", required=True)
    ap.add_argument("--scenarios", required=True)
    ap.add_argument("names", nargs="*", metavar="SCENARIO[:OVERRIDES]",
                    default=["fence_signal", "gpu_wait", "tdr_engine_reset", "hybrid_present:--workload.frames=4",
                             "fence_race_no_barrier:--workload.signals=15000"])
    a = ap.parse_args()
    missing = [t for t in ("gtkwave", "xvfb-run") if not shutil.which(t)]
    if missing:
        print("skipped: no " + ", ".join(missing))
        return 77
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.names:
            errors += check(a.gpumodel, a.scenarios, name, tmp)
    for e in errors:
        print("FAIL " + e)
    print(f"{len(a.names)} save files read by GTKWave, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

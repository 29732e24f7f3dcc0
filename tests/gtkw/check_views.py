#!/usr/bin/env python3
"""Every shipped scenario's GTKWave save file opens on its key events, with a marker at each.

Reads the runs tests/viewers/timelines.sh made of every scenarios/*.ini (shortened; each with --vcd and
--results into DIR): each run's results must name at least one key event the view must show, and its
save file must hold the primary marker at the first of them and a named marker labelled with each, so a newcomer's GTKWave opens on the
mechanism, not on a run-long window where it is one pixel. A new scenario file without key events
fails here.
usage: check_views.py --scenarios DIR_OF_INI --runs DIR
"""
import argparse
import glob
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenarios", required=True)
    ap.add_argument("--runs", required=True)
    a = ap.parse_args()
    names = sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(a.scenarios, "*.ini")))
    problems = []
    for s in names:
        results, gtkw = os.path.join(a.runs, s + ".results.json"), os.path.join(a.runs, s + ".gtkw")
        try:
            events = [e for e in json.load(open(results)).get("events", []) if e.get("in_view")]
            lines = open(gtkw).read().splitlines()
        except (OSError, ValueError) as e:
            problems.append(f"{s}: no run to read ({e}); the viewer_timelines test writes them")
            continue
        if not events:
            problems.append(f"{s}: the run names no key event its save file's view must show (Results::event)")
            continue
        star = next((l for l in lines if l.startswith("*")), "")
        fields = star[1:].split()
        marker, named = (int(fields[1]), [int(x) for x in fields[2:]]) if len(fields) > 2 else (-1, [])
        first = min(e["ps"] for e in events)
        if marker != first:
            problems.append(f"{s}: the primary marker is at {marker} ps, the first key event at {first} ps")
        # Named markers A..Z, each labelled with its events (events a few pixels apart share one:
        # "copy done, flip").
        labels = set()
        for l in lines:
            if l.startswith("[markername] "):
                labels.update(x.strip() for x in l[len("[markername] ") + 1:].split(", "))
        if len([m for m in named if m >= 0]) == 0:
            problems.append(f"{s}: no named marker")
        for e in events:
            if e["name"] not in labels:
                problems.append(f"{s}: no named marker labelled '{e['name']}' (a key event at {e['ps']} ps)")
    for p in problems:
        print("FAIL " + p)
    print(f"check_views: {len(names)} scenario files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# The traces' memory: fence_race with the waveform and the timeline on, at 10^5 and 10^6 signals, peak
# resident memory (GNU time's %M) and wall time. The record waits on disk (hw_model/core/spill.h), so
# the peak should not grow with the run; the files are large (about 5.2 GB of timeline and 1.4 GB of
# VCD at 10^6 signals): point TMPDIR and the output directory at a disk that holds them.
# usage: bench/trace_memory.sh [build-dir] [output-dir]
set -euo pipefail
build=${1:-build}
out=${2:-$(mktemp -d)}
cd "$(dirname "$0")/.."
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (Debian package 'time')"; exit 2; }
for n in 100000 1000000; do
  /usr/bin/time -f "fence_race $n signals, --vcd --timeline: %M KB peak resident, %e s wall" \
    "$build/gpumodel" scenarios/fence_race.ini --workload.signals=$n --sim.limit_ms=10000 --quiet \
    --vcd "$out/fence_race.vcd" --timeline "$out/fence_race.json" --results "$out/r.json" >/dev/null
  ls -l "$out/fence_race.vcd" "$out/fence_race.json" | awk '{printf "  %s: %.0f MB\n", $NF, $5/1e6}'
  rm -f "$out/fence_race.vcd" "$out/fence_race.json"
done

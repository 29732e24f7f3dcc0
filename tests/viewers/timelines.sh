#!/bin/sh
# Writes every shipped scenario's timeline (scenarios/*.ini, each run with --timeline) into OUT_DIR, for
# the viewer tests to open: a new scenario file is covered without a change here. The long scenarios
# are shortened (fewer signals or frames) so the set stays small (tens of MB) and quick; what a
# timeline holds (tracks, slices, instants, flows, counters) does not depend on the run's length.
# Also writes OUT_DIR/flows.txt: the files that must hold fence flows (a scenario of fence signals
# the CPU waits on), so a viewer's flow check cannot pass on a file that has none; and each run's
# waveform, GTKWave save file and results in OUT_DIR/waveforms/ (tests/gtkw/check_views.py reads them).
# usage: timelines.sh GPUMODEL SCENARIOS_DIR OUT_DIR
set -eu
gpumodel=$1 scenarios=$2 out=$3
mkdir -p "$out/waveforms"
rm -f "$out"/*.json "$out/flows.txt" "$out"/waveforms/*
n=0
for ini in "$scenarios"/*.ini; do
  s=$(basename "$ini" .ini)
  case $s in
    fence_race | fence_race_log_barrier) set -- --workload.signals=500 --workload.bulk_copy_bytes=65536 ;;
    fence_race_no_barrier) set -- --workload.signals=500 ;;
    fence_stress) set -- --workload.signals=1000 --workload.fences=64 ;;  # each fence signalled twice or more
    copy_bandwidth) set -- --copy.bytes=1048576 ;;
    conditional_interrupt) set -- --workload.signals=20 ;;
    hybrid_present | frame_loop | game_laptop | hybrid_game | video_playback | video_playback_laptop | idle_desktop | \
      presentmon_replay) set -- --workload.frames=4 ;;
    scanout_underflow) set -- --workload.frames=1 --display.mode=1920x1080@240 ;;  # the bulk load fills the run: a short refresh
    paging_va_size) set -- --workload.alloc_mb=16 --kmd.paging_va_answer=override --kmd.paging_va_mb=4 ;;
    dgpu_runtime_d3) set -- --gpu.runtime_d3_idle_ms=5 --workload.long_gap_ms=10 --workload.short_gap_ms=1 ;;
    tdr_paging_hit | tdr_reset_fails) set -- --vidsch.tdr_delay_ms=2 --workload.after_ms=1 --cmp.adapter_reset_ms=1000 ;;
    *) set -- ;;
  esac
  rc=0
  "$gpumodel" "$ini" "$@" --timeline "$out/$s.json" --vcd "$out/waveforms/$s.vcd" \
    --results "$out/waveforms/$s.results.json" --quiet >"$out/$s.log" 2>&1 || rc=$?
  # Exit 1 is a verdict (a scenario whose failure is its data, e.g. a TDR limit); 2 is bad input.
  if [ "$rc" -gt 1 ] || [ ! -s "$out/$s.json" ]; then
    echo "timelines.sh: $s exited $rc without a timeline (see $out/$s.log)" >&2
    exit 1
  fi
  case $s in
    fence_signal | gpu_wait | fence_race* | fence_stress | conditional_interrupt | hybrid_present) echo "$s.json" >>"$out/flows.txt" ;;
  esac
  n=$((n + 1))
done
echo "timelines.sh: $n timelines in $out ($(du -sk "$out" | cut -f1) KB)"

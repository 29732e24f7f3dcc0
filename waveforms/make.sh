#!/usr/bin/env bash
# Regenerates the committed GTKWave save files (waveforms/<scenario>.gtkw) from a default run of each
# scenario: a run with --vcd FILE writes FILE.gtkw beside it, its view and markers on the run's key events
# (app/gtkw.h). With --screenshots it also opens the key scenarios' waveforms in GTKWave under Xvfb and
# writes docs/img/<scenario>.png (a cropped grab of the window, reduced to 64 colours).
# usage: waveforms/make.sh [--gpumodel PATH] [--screenshots] [--only SCENARIO]
#        (default binary: $GPUMODEL_BIN, else build/gpumodel; runs go to build/waveforms/)
# Needs: gtkwave, and for --screenshots xvfb (xvfb-run), xauth, x11-apps (xwd) and imagemagick (convert).
# Deterministic: the runs are; a grab depends on GTKWave's fonts and version only (Debian 12's gtkwave 3.3.118).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${GPUMODEL_BIN:-build/gpumodel}
shots=0
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --gpumodel) bin=$2; shift 2 ;;
    --screenshots) shots=1; shift ;;
    --only) only=$2; shift 2 ;;
    *) echo "waveforms/make.sh: unknown argument '$1'; allowed: --gpumodel PATH, --screenshots, --only SCENARIO" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "waveforms/make.sh: no gpumodel binary at '$bin' (build it, or give --gpumodel PATH)" >&2; exit 2; }
out=build/waveforms
mkdir -p "$out" docs/img

# The scenarios with a committed save file; the screenshots' are the key ones.
all="caso_caps conditional_interrupt copy_bandwidth cross_adapter_fence eviction_notify fence_race
     fence_race_no_barrier fence_signal gpu_wait hybrid_present mmio_roundtrip scanout_underflow tdr_engine_reset"
key="fence_signal gpu_wait tdr_engine_reset fence_race_no_barrier"

run() {  # scenario: a default run, its waveform and save file in build/waveforms/
  local s=$1 rc=0
  "$bin" "scenarios/$s.ini" --quiet --vcd "$out/$s.vcd" --results "$out/$s.json" > "$out/$s.log" || rc=$?
  # Exit 1 is a verdict (a scenario whose failure is its data); 2 is bad input.
  if [ "$rc" -gt 1 ]; then echo "waveforms/make.sh: $s exited $rc (see $out/$s.log)" >&2; exit 1; fi
}

shoot() {  # scenario: GTKWave on the run's waveform and save file under Xvfb, the window grabbed
  local s=$1 tcl="$out/$s.shot.tcl" xwd="$out/$s.xwd"
  # The Tcl script runs once the window is laid out: it lets GTKWave draw (gtkwave::nop runs its main
  # loop once), grabs the screen (xwd on the root window: no window manager, the window is at 0,0) and
  # quits. Tcl's own event loop does not run inside GTKWave ('after' never fires): the waits are sleeps.
  cat > "$tcl" <<EOF
for {set i 0} {\$i < 30} {incr i} { gtkwave::nop; after 50 }
exec xwd -root -silent -out {$xwd}
gtkwave::/File/Quit
EOF
  rm -f "$xwd"
  timeout 60 xvfb-run -a -s "-screen 0 1400x800x24" gtkwave -S "$tcl" "$out/$s.vcd" "$out/$s.gtkw" \
    > "$out/$s.gtkwave.log" 2>&1 || { echo "waveforms/make.sh: gtkwave failed on $s (see $out/$s.gtkwave.log)" >&2; exit 1; }
  [ -s "$xwd" ] || { echo "waveforms/make.sh: no grab of $s's window" >&2; exit 1; }
  # The signal and wave panes (the title and tool bars cropped), 32 colours: a PNG of a few tens of KB.
  convert "$xwd" -crop 1400x700+0+100 +repage -colors 32 -strip "png8:docs/img/$s.png"
  rm -f "$xwd"
  echo "docs/img/$s.png: $(stat -c %s "docs/img/$s.png") bytes"
}

for s in $all; do
  [ -n "$only" ] && [ "$s" != "$only" ] && continue
  run "$s"
  # The committed save file names its dump by base name, as the run's does: the same file.
  cp "$out/$s.gtkw" "waveforms/$s.gtkw"
done
if [ "$shots" = 1 ]; then
  for s in $key; do
    [ -n "$only" ] && [ "$s" != "$only" ] && continue
    shoot "$s"
  done
fi

#!/usr/bin/env bash
# Regenerates the user guide's four plots (docs/plots/*.png and *.svg; docs/workbench.md shows three,
# docs/studies/energy.md energy_psr): runs sweeps/wake_vs_idle.ini,
# sweeps/present_vs_link.ini, sweeps/underflow_vs_fifo.ini and sweeps/energy_psr.ini locally and plots
# each. The axes' labels and units come from the column names (gpumodel plot --help); titles name no unit.
# usage: workbench/make-readme-plots.sh [--gpumodel PATH] [--jobs N]
#        (default binary: $GPUMODEL_BIN, else build/gpumodel; sweeps go to build/sweeps/<name>)
set -euo pipefail
cd "$(dirname "$0")/.."
sweep_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --gpumodel|--jobs) sweep_args+=("$1" "$2"); shift 2 ;;
    *) echo "make-readme-plots: unknown argument '$1'; allowed: --gpumodel PATH, --jobs N" >&2; exit 2 ;;
  esac
done
mkdir -p docs/plots

sweep() {  # name, exit codes allowed (a sweep whose failing runs are its data exits 1)
  local name=$1 allowed=$2 rc=0
  python3 workbench/sweep.py "sweeps/$name.ini" --out "build/sweeps/$name" "${sweep_args[@]}" || rc=$?
  case " $allowed " in
    *" $rc "*) ;;
    *) echo "make-readme-plots: sweeps/$name.ini exited $rc (allowed: $allowed)" >&2; exit 1 ;;
  esac
}

sweep wake_vs_idle 0
python3 workbench/plot.py build/sweeps/wake_vs_idle/merged.csv --x cpu.idle_state --y signal_to_wake_ns \
  --lines cpu.idle_governor --out docs/plots/wake_vs_idle \
  --title "fence_signal: signal to wake against the CPU's idle state, by idle governor"

sweep present_vs_link 0
python3 workbench/plot.py build/sweeps/present_vs_link/merged.csv --x link.gen \
  --y present_to_scanout_ns.mean --lines present.path --out docs/plots/present_vs_link \
  --title "hybrid_present: mean present to scan-out against the dGPU's link (x8), 120 frames"

# Runs below the buffer the latency needs underflow and fail their monitor: exit 1 is this sweep's data.
sweep underflow_vs_fifo 1
python3 workbench/plot.py build/sweeps/underflow_vs_fifo/merged.csv --x display.fifo_bytes \
  --y underflows --lines link.gen --out docs/plots/underflow_vs_fifo \
  --title "scanout_underflow: underflows in three refreshes against the display's fetch buffer, by link generation (x8)"

sweep energy_psr 0
python3 workbench/plot.py build/sweeps/energy_psr/merged.csv --x workload.fps --y energy.avg_power_mw \
  --lines display.psr --logx --out docs/plots/energy_psr \
  --title "Video player: platform power against frame rate, panel self refresh off and on"
ls -l docs/plots

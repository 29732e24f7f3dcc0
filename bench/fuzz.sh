#!/usr/bin/env bash
# Fuzzing (fuzz/README.md): builds the libFuzzer targets with clang++ in build-fuzz and runs each from
# its committed seed corpus and dictionary, then reports executions, speed and crashes per target.
# usage: bench/fuzz.sh [-runs=N | -max_total_time=S] [target ...]
#   default: -runs=1000000 for every target. CI runs a bounded time: bench/fuzz.sh -max_total_time=60
# New inputs go to a scratch corpus (the committed one is not touched); a crash, leak, timeout or
# sanitizer report is written to build-fuzz/findings/<target>/ and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=-runs=1000000
if [[ ${1:-} == -* ]]; then limit=$1; shift; fi
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(fuzz_scenario_loader fuzz_packet_decoder)
jobs=${JOBS:-$(nproc)}
# FUZZ_BUILD names the build directory (default build-fuzz); CI reuses .ci/sanitize's clang build-san,
# whose libraries are already instrumented for the fuzzer, so nothing is compiled twice.
bf=${FUZZ_BUILD:-build-fuzz}
if [[ ! -f $bf/CMakeCache.txt ]]; then
  cmake -S . -B "$bf" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUMODEL_FUZZ=ON >/dev/null
fi
cmake --build "$bf" -j"$jobs" --target "${targets[@]}" >/dev/null
status=0
for t in "${targets[@]}"; do
  scratch=$bf/corpus/$t findings=$bf/findings/$t log=$bf/$t.log
  rm -rf "$scratch" "$findings"
  mkdir -p "$scratch" "$findings"
  start=$(date +%s.%N)
  # -timeout: one input running over 10 s is a hang; -rss_limit_mb: one over 2 GB is a finding too.
  if ./"$bf"/fuzz/"$t" "$limit" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -dict=fuzz/"$t".dict -artifact_prefix="$findings"/ "$scratch" fuzz/corpus/"$t" >"$log" 2>&1; then
    rc=0
  else
    rc=$?
  fi
  wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  crashes=$(find "$findings" -type f | wc -l)
  printf '%-22s %s: %s executions in %s s (%s exec/s), %s crash(es), exit %s  (log %s)\n' \
    "$t" "$limit" "${execs:-?}" "$wall" "${speed:-?}" "$crashes" "$rc" "$log"
  if [[ $rc -ne 0 || $crashes -ne 0 ]]; then
    status=1
    ls "$findings"
    grep -m5 -E 'ERROR|runtime error|fuzz_[a-z_]+: ' "$log" || true
  fi
done
exit $status

#!/usr/bin/env bash
# The installation stands on its own (cmake --install, as the .deb does under /usr): installed into a
# fresh prefix, run from an empty folder, `gpumodel NAME` runs the installed scenario files, which find
# their workloads, captures and platforms in the installed data, not in the source tree; the workbench's
# tools run from there too. Usage: check_install.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
bin="$tmp/prefix/bin/gpumodel"
data="$tmp/prefix/share/gpumodel"
fail() { echo "check_install: $*" >&2; exit 1; }
for d in scenarios platforms workloads/captures sweeps workbench; do [ -d "$data/$d" ] || fail "no $data/$d"; done
ls "$tmp/prefix/share/doc/gpumodel" | grep -qx README.md || fail "no README.md in share/doc/gpumodel"
[ -z "$(find "$data/scenarios" -name '*.cpp' -o -name '*.h')" ] || fail "sources installed with the scenario files"
mkdir "$tmp/empty" && cd "$tmp/empty"
# By name, from the installed scenario files (the results record which file ran).
"$bin" fence_signal --quiet --results r.json > /dev/null || fail "fence_signal did not pass"
grep -q "\"$data/scenarios/fence_signal.ini\"" r.json || fail "fence_signal did not run the installed file: $(grep -o '"scenario_file"[^,]*' r.json)"
# A workload file and a capture, each named by a relative path in its scenario file; a platform by name.
"$bin" frame_loop --workload.frames=10 --quiet > /dev/null || fail "frame_loop did not pass"
"$bin" presentmon_replay --workload.frames=60 --quiet > /dev/null || fail "presentmon_replay did not pass"
"$bin" idle_desktop --workload.frames=2 --quiet > /dev/null || fail "idle_desktop (platform laptop_hybrid) did not pass"
"$bin" fence_signal --platform=laptop_hybrid --quiet > /dev/null || fail "--platform=laptop_hybrid did not pass"
# A name it does not have: the message names the installed folder.
out=$("$bin" no_such_scenario 2>&1) && fail "no_such_scenario ran"
echo "$out" | grep -q "$data/scenarios/no_such_scenario.ini" || fail "the refusal does not name the installed folder: $out"
# The workbench's tools, from the installed data.
"$bin" sweep --help > /dev/null || fail "gpumodel sweep --help failed"
# --list-scenarios lists the installed files; the user's own scenarios/ folder comes first for a name.
"$bin" --list-scenarios > list.txt
grep -q "^video_playback_laptop " list.txt || fail "--list-scenarios misses video_playback_laptop"
mkdir scenarios && printf 'scenario = mmio_roundtrip\n' > scenarios/fence_signal.ini
"$bin" fence_signal --quiet --results mine.json > /dev/null || fail "the user's scenarios/fence_signal.ini did not run"
grep -q '"scenario": "mmio_roundtrip"' mine.json || fail "gpumodel NAME did not prefer ./scenarios/NAME.ini"
echo "check_install: the installed gpumodel runs from an empty folder"

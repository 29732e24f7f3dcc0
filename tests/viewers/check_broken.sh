#!/bin/sh
# The viewer checks' own test: each consumer must refuse the broken timelines in tests/viewers/broken/,
# naming the fault, so a check that stopped looking (a warning filtered out, a walk dropped) fails here:
#   rebase.json     back-to-back slices in decimal microseconds, exact for DevTools but past the next
#                   slice once speedscope rebases the track on its first slice (at 3: 2 + 0.1 > 2.1)
#   overlap.json    two slices that overlap without nesting
#   flow_on_i.json  a flow whose ends lie on instants of the older letter "i", which DevTools draws on no thread
# Exit 77 (skipped) without node or the viewers installed, as the viewer tests.
# usage: check_broken.sh VIEWERS_DIR
set -u
viewers=$1
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null 2>&1 || { echo "SKIP: no node on PATH"; exit 77; }
[ -d "$viewers/node_modules" ] || { echo "SKIP: the viewers are not installed in $viewers (tests/viewers/install.sh)"; exit 77; }
failed=0
expect() {  # checker fixture text: the checker exits 1 on the fixture and says text
  out=$(node "$here/$1" --modules "$viewers" ${4:-} "$here/broken/$2" 2>&1)
  rc=$?
  if [ "$rc" -ne 1 ] || ! printf '%s' "$out" | grep -q "$3"; then
    echo "FAIL $1 on broken/$2: exit $rc, wanted 1 and '$3'"
    printf '%s\n' "$out" | head -5
    failed=$((failed + 1))
  fi
}
expect check_speedscope.mjs rebase.json "Tried to end"
expect check_speedscope.mjs overlap.json "Tried to end"
expect check_tracing_model.cjs overlap.json "that it opened inside"
expect check_timeline.mjs overlap.json "dropped from its tree" "--flows-from /dev/null"
expect check_timeline.mjs flow_on_i.json "not its own fence slice or instant" "--flows-from /dev/null"
echo "check_broken: 5 refusals wanted, $failed missing"
[ "$failed" -eq 0 ]

#!/bin/sh
# A viewer test over every scenario's timeline (timelines.sh wrote them, the viewer_timelines fixture):
# opens them all with one consumer (CHECKER: check_timeline.mjs, check_speedscope.mjs or
# check_tracing_model.cjs). Exit 77 (skipped) without node or the consumer installed, saying how to
# install; the checker itself skips likewise when its package is missing.
# usage: run_viewer_all.sh VIEWERS_DIR TIMELINES_DIR CHECKER
set -eu
viewers=$1 timelines=$2 checker=$3
if ! command -v node >/dev/null 2>&1; then
  echo "SKIP: no node on PATH; install it and the viewers with: apt-get install nodejs npm && tests/viewers/install.sh $(dirname "$viewers")"
  exit 77
fi
[ -d "$viewers/node_modules" ] || { echo "SKIP: the viewers are not installed in $viewers; install them with: tests/viewers/install.sh $(dirname "$viewers")"; exit 77; }
set -- "$timelines"/*.json
[ -f "$1" ] || { echo "no timelines in $timelines (the viewer_timelines test writes them)"; exit 1; }
case $checker in
  check_timeline.mjs) exec node "$(dirname "$0")/$checker" --modules "$viewers" --flows-from "$timelines/flows.txt" "$@" ;;
  *) exec node "$(dirname "$0")/$checker" --modules "$viewers" "$@" ;;
esac

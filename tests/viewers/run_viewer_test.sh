#!/bin/sh
# A viewer test: runs a scenario with --timeline and opens the file with the DevTools trace engine
# (check_timeline.mjs). Exit 77 (skipped) without node or the engine installed, saying how to install.
# usage: run_viewer_test.sh GPUMODEL VIEWERS_DIR [--no-flows] TIMELINE.json SCENARIO.ini [--key=value ...]
set -eu
gpumodel=$1 viewers=$2
shift 2
flows=
if [ "$1" = --no-flows ]; then
  flows=--no-flows
  shift
fi
out=$1
shift
if ! command -v node >/dev/null 2>&1; then
  echo "SKIP: no node on PATH; install it and the engine with: apt-get install nodejs npm && tests/viewers/install.sh $(dirname "$viewers")"
  exit 77
fi
if [ ! -f "$viewers/node_modules/@paulirish/trace_engine/package.json" ]; then
  echo "SKIP: the DevTools trace engine is not installed in $viewers; install it with: tests/viewers/install.sh $(dirname "$viewers")"
  exit 77
fi
"$gpumodel" "$@" --timeline "$out" --quiet >/dev/null
exec node "$(dirname "$0")/check_timeline.mjs" --modules "$viewers" $flows "$out"

#!/bin/sh
# Installs the trace parsers the viewer tests open the timelines with (the Chrome DevTools Performance
# panel's trace engine; speedscope's published app and jsdom to run it in; the 2017 DevTools front end
# through devtools-timeline-model), at the exact versions package-lock.json pins, into BUILD_DIR/viewers:
# the build tree, never the source tree. Needs node and npm (Debian 12: apt-get install nodejs npm) and
# the npm registry; runs no package's install script (none is needed).
# usage: tests/viewers/install.sh [BUILD_DIR]    (default: build)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
mkdir -p "$build/viewers"
cp "$here/package.json" "$here/package-lock.json" "$build/viewers/"
cd "$build/viewers"
npm ci --no-audit --no-fund --ignore-scripts
echo "installed in $(pwd)/node_modules: ctest -L viewers runs the viewer tests"

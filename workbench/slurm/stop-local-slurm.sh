#!/usr/bin/env bash
# Stops the one-node Slurm that start-local-slurm.sh started: slurmd, slurmctld, and munged if that
# script started it. Each daemon is stopped by the pid in its own pid file, never by name. Idempotent;
# slurm.conf and the state directory stay (a later start reuses them).
set -euo pipefail
state=${GPUMODEL_SLURM_DIR:-/var/lib/gpumodel-slurm}

say() { echo "stop-local-slurm: $*"; }
stop_pid() {  # pid file, name
  local pid
  if [ -s "$1" ] && pid=$(cat "$1") && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "stop-local-slurm: $2 (pid $pid) did not stop on SIGTERM" >&2
      return 1
    fi
    say "stopped $2 (pid $pid)"
  else
    say "$2 not running"
  fi
}
stop_pid "$state/slurmd.pid" slurmd
stop_pid "$state/slurmctld.pid" slurmctld
if [ -e "$state/munged.started-here" ]; then
  stop_pid /run/munge/munged.pid munged
  rm -f "$state/munged.started-here"
else
  say "munged left alone (not started by start-local-slurm.sh)"
fi

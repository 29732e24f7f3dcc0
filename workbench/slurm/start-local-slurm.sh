#!/usr/bin/env bash
# A one-node Slurm on this machine, for the workbench's tests and CI (`gpumodel sweep --slurm`).
# Debian 12 as root, after `apt-get install -y slurm-wlm munge`; no systemd: the daemons are started
# directly. Writes a minimal slurm.conf for this host with its CPU count (select/cons_tres, CPUs
# consumable, so a job array's tasks run side by side; proctrack/linuxproc, no cgroups), creates a
# munge key if there is none, starts munged, slurmctld and slurmd, and waits until sinfo shows the node
# idle. Idempotent: what already runs is left running (a daemon is restarted only if the written
# slurm.conf changed). Stop with workbench/slurm/stop-local-slurm.sh.
#
#   SLURM_CONF            where slurm.conf goes (default /etc/slurm/slurm.conf). A file there that this
#                         script did not write is never overwritten. Export the same SLURM_CONF for
#                         sbatch and sinfo when it is not the default.
#   GPUMODEL_SLURM_DIR    state, spool, pid and log files (default /var/lib/gpumodel-slurm)
set -euo pipefail
conf=${SLURM_CONF:-/etc/slurm/slurm.conf}
state=${GPUMODEL_SLURM_DIR:-/var/lib/gpumodel-slurm}
marker="# gpumodel local Slurm: written by workbench/slurm/start-local-slurm.sh"
export SLURM_CONF=$conf

die() { echo "start-local-slurm: $*" >&2; exit 1; }
say() { echo "start-local-slurm: $*"; }

[ "$(id -u)" = 0 ] || die "run as root (munged, slurmctld and slurmd are started here)"
for tool in munge unmunge munged mungekey slurmctld slurmd sinfo scontrol sbatch runuser; do
  command -v "$tool" >/dev/null || die "$tool not found: apt-get install -y slurm-wlm munge"
done

if [ -e "$conf" ] && ! grep -qxF "$marker" "$conf"; then
  die "$conf exists and was not written by this script; not overwriting a Slurm configuration (set SLURM_CONF to another path)"
fi
host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$state/ctld" "$state/slurmd" "$(dirname "$conf")"

# --- munge: a key if there is none, then the daemon (as the munge user, as Debian's unit does)
key=/etc/munge/munge.key
if [ ! -s "$key" ]; then
  install -d -o munge -g munge -m 0700 /etc/munge
  mungekey --create --keyfile="$key"
  chown munge:munge "$key" && chmod 0400 "$key"
  say "created $key"
fi
munge_ok() { munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; }
if munge_ok; then
  say "munged already running"
else
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
  runuser -u munge -- munged
  for _ in $(seq 50); do munge_ok && break; sleep 0.2; done
  munge_ok || die "munged did not start: see /var/log/munge/munged.log"
  touch "$state/munged.started-here"  # stop-local-slurm.sh stops only a munged this script started
  say "started munged"
fi

# --- slurm.conf
new=$(mktemp)
cat >"$new" <<EOF
$marker
# One node: this host, $cpus CPUs, every CPU a consumable resource.
ClusterName=gpumodel
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
# A finished task's CPU goes to the next array task at once: the main scheduler otherwise waits up
# to batch_sched_delay (3 s) after a completion, and each task of a sweep runs for milliseconds.
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# The node's CPUs are what this file says, whatever slurmd detects (a container's CPU set).
SlurmdParameters=config_overrides
ReturnToService=2
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/slurmd
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
# sbatch --wait polls every 2 s only while 2 s < MinJobAge / 2; with the default (300 s) it backs
# off to 8 s and 32 s, which would dominate a sweep of a few seconds. 4 s keeps a finished job's
# record long enough for that 2 s poll.
MinJobAge=4
MaxArraySize=100001
MaxJobCount=200000
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
changed=0
if ! cmp -s "$new" "$conf" 2>/dev/null; then
  mv "$new" "$conf" && chmod 0644 "$conf"
  changed=1
  say "wrote $conf ($host, $cpus CPUs)"
else
  rm -f "$new"
fi

# --- the daemons
running() {  # pid file
  [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}
stop_pid() {  # pid file, name
  if running "$1"; then
    local pid; pid=$(cat "$1")
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && die "$2 (pid $pid) did not stop"
    say "stopped $2 (pid $pid): its configuration changed"
  fi
}
if [ "$changed" = 1 ]; then
  stop_pid "$state/slurmd.pid" slurmd
  stop_pid "$state/slurmctld.pid" slurmctld
fi
if running "$state/slurmctld.pid"; then
  say "slurmctld already running"
else
  # -c: no job state from a previous slurmctld. This Slurm holds only the workbench's short job arrays;
  # one a stopped Slurm left behind (slurmd stopped under it, a run cut short) would be recovered as
  # running and hold the node's CPUs for good, so every later array waits forever.
  slurmctld -c -f "$conf" || die "slurmctld did not start: see $state/slurmctld.log"
  say "started slurmctld"
fi
for _ in $(seq 50); do scontrol ping >/dev/null 2>&1 && break; sleep 0.2; done
scontrol ping 2>/dev/null | grep -q UP || die "slurmctld does not answer: see $state/slurmctld.log"
if running "$state/slurmd.pid"; then
  say "slurmd already running"
else
  slurmd -f "$conf" || die "slurmd did not start: see $state/slurmd.log"
  say "started slurmd"
fi

# --- wait for the node to be idle (a node left down or drained by an earlier run is resumed once)
resumed=0
for _ in $(seq 120); do
  s=$(sinfo -h -n "$host" -o %T 2>/dev/null | head -1)
  case "$s" in
    idle|mixed|allocated) say "node $host is $s ($cpus CPUs)"; exit 0 ;;
    down*|drain*|fail*)
      if [ "$resumed" = 0 ]; then scontrol update NodeName="$host" State=RESUME >/dev/null 2>&1 || true; resumed=1; fi ;;
  esac
  sleep 0.5
done
die "node $host is not idle after 60 s (sinfo says '${s:-nothing}'): see $state/slurmctld.log and $state/slurmd.log"

#!/usr/bin/env bash
# Bring up a throw-away one-node SLURM cluster on this machine (munged, slurmctld, slurmd) for
# the workflow's cluster test (tests/workflow/test_slurm.py), and wait until its node is idle.
#
#   bash .ci/slurm/start.sh      # installs Debian's packages when missing, writes the config, starts
#   bash .ci/slurm/stop.sh       # stops exactly the daemons this script started (by PID)
#
# Everything it makes lives in $COOKPROC_SLURM_DIR (default /tmp/cookproc-slurm): daemon logs,
# state, the PIDs it started, and jobcomp.log, the record of every finished job (jobcomp/filetxt
# gives such records without accounting storage, which a test machine does not have).
#
# The cluster: one node (this host, addressed on 127.0.0.1) with a fake GPU (gres gpu:1 backed by
# /dev/null), and two partitions on it, `cpu` and `gpu`, named like profiles/slurm/partitions.yaml
# so that the profile's partition routing is exercised unchanged.
set -euo pipefail

STATE_DIR=${COOKPROC_SLURM_DIR:-/tmp/cookproc-slurm}
SLURM_CONF=/etc/slurm/slurm.conf   # the slurm executor strips SLURM_CONF, so it must be here
GRES_CONF=/etc/slurm/gres.conf
MARKER="# Written by cookproc .ci/slurm/start.sh: a throw-away test cluster."
WAIT_S=${COOKPROC_SLURM_WAIT_S:-90}

log() { echo "[slurm-start] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

install_packages() {
  local missing=0
  for cmd in slurmctld slurmd sbatch squeue munged; do
    command -v "$cmd" >/dev/null 2>&1 || missing=1
  done
  if [[ $missing == 1 ]]; then
    log "installing slurmctld slurmd slurm-client munge"
    apt-get update -qq
    # policy-rc.d / no systemd: the packages' own service start is refused, which is what we want.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      slurmctld slurmd slurm-client munge >/dev/null
  fi
}

# Refuse to touch a SLURM configuration this script did not write (a real cluster's, say).
check_ours() {
  local f=$1
  if [[ -e $f ]] && ! grep -qF "$MARKER" "$f"; then
    die "$f exists and was not written by this script; not overwriting it"
  fi
}

pid_alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

write_config() {
  local host cpus mem_mb
  host=$(hostname -s)
  cpus=$(nproc)
  # What slurmd detects, less 10% so that the node is never drained for "low RealMemory".
  mem_mb=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
  mem_mb=$(( mem_mb * 9 / 10 ))
  check_ours "$SLURM_CONF"
  check_ours "$GRES_CONF"
  mkdir -p /etc/slurm
  cat >"$SLURM_CONF" <<CONF
$MARKER
ClusterName=cookproc
SlurmctldHost=${host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$STATE_DIR/state/ctld
SlurmdSpoolDir=$STATE_DIR/state/d
SlurmctldPidFile=$STATE_DIR/run/slurmctld.pid
SlurmdPidFile=$STATE_DIR/run/slurmd.pid
SlurmctldLogFile=$STATE_DIR/log/slurmctld.log
SlurmdLogFile=$STATE_DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups in a container: track processes through /proc, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
SchedulerType=sched/backfill
MpiDefault=none
SwitchType=switch/none
GresTypes=gpu
# No accounting storage (sacct fails): finished jobs are recorded by jobcomp/filetxt, and stay
# visible to squeue for MinJobAge seconds, well above the executor's status-check interval, so
# that its squeue status command sees every job finish.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$STATE_DIR/log/jobcomp.log
MinJobAge=3600
ReturnToService=2
InactiveLimit=0
KillWait=5
Waittime=0
NodeName=${host} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${mem_mb} Gres=gpu:1 State=UNKNOWN
PartitionName=cpu Nodes=${host} Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=${host} MaxTime=INFINITE State=UP
CONF
  cat >"$GRES_CONF" <<CONF
$MARKER
# A fake GPU: slurmd only needs a device file to count; jobs get CUDA_VISIBLE_DEVICES for it.
AutoDetect=off
NodeName=${host} Name=gpu File=/dev/null
CONF
}

start_munged() {
  # Reuse a munged that already answers (not ours: stop.sh leaves it alone).
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "munged already running; using it"
    return
  fi
  [[ -s /etc/munge/munge.key ]] || setpriv --reuid=munge --regid=munge --clear-groups mungekey --create
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
  # setpriv execs (no fork), so $! is munged itself.
  setpriv --reuid=munge --regid=munge --clear-groups munged --foreground \
    >"$STATE_DIR/log/munged.out" 2>&1 &
  echo $! >"$STATE_DIR/pids/munged.pid"
  for _ in $(seq 50); do
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return
    sleep 0.2
  done
  die "munged did not answer; see $STATE_DIR/log/munged.out"
}

start_slurmctld() {
  slurmctld -D >"$STATE_DIR/log/slurmctld.out" 2>&1 &
  echo $! >"$STATE_DIR/pids/slurmctld.pid"
  for _ in $(seq "$WAIT_S"); do
    scontrol ping 2>/dev/null | grep -q "is UP" && return
    pid_alive "$STATE_DIR/pids/slurmctld.pid" || break
    sleep 1
  done
  tail -20 "$STATE_DIR/log/slurmctld.log" >&2 || true
  die "slurmctld did not come up"
}

start_slurmd() {
  slurmd -D >"$STATE_DIR/log/slurmd.out" 2>&1 &
  echo $! >"$STATE_DIR/pids/slurmd.pid"
  local host state
  host=$(hostname -s)
  for _ in $(seq "$WAIT_S"); do
    state=$(sinfo -h -N -n "$host" -o %T 2>/dev/null | head -1)
    [[ $state == idle ]] && { log "node $host is idle"; return; }
    pid_alive "$STATE_DIR/pids/slurmd.pid" || break
    sleep 1
  done
  scontrol show node "$host" >&2 || true
  tail -20 "$STATE_DIR/log/slurmd.log" >&2 || true
  die "node $host is not idle (state: ${state:-unknown})"
}

main() {
  for name in munged slurmctld slurmd; do
    if pid_alive "$STATE_DIR/pids/$name.pid"; then
      die "$name from an earlier start is still running; run .ci/slurm/stop.sh first"
    fi
  done
  install_packages
  # Fresh state each time: no jobs or job ids left over from an earlier run.
  rm -rf "$STATE_DIR/state" "$STATE_DIR/log" "$STATE_DIR/run"
  mkdir -p "$STATE_DIR"/{state/ctld,state/d,log,run,pids}
  write_config
  start_munged
  start_slurmctld
  start_slurmd
  sinfo >&2
}

main "$@"

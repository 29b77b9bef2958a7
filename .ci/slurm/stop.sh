#!/usr/bin/env bash
# Stop the daemons that .ci/slurm/start.sh started, and only those: by the PIDs it recorded, each
# checked to still be the program it was (a recycled PID is left alone). Jobs still on the test
# cluster are cancelled first so that no job step outlives its slurmd.
set -uo pipefail

STATE_DIR=${COOKPROC_SLURM_DIR:-/tmp/cookproc-slurm}
PIDS=$STATE_DIR/pids

log() { echo "[slurm-stop] $*" >&2; }

stop_one() {
  local name=$1 file=$PIDS/$1.pid pid comm
  [[ -f $file ]] || return 0
  pid=$(cat "$file")
  comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
  if [[ $comm != "$name"* ]]; then
    log "$name (pid $pid) is not running"
    rm -f "$file"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "$name (pid $pid) ignored SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null
  fi
  log "stopped $name (pid $pid)"
  rm -f "$file"
}

if [[ -f $PIDS/slurmctld.pid ]] && kill -0 "$(cat "$PIDS/slurmctld.pid")" 2>/dev/null; then
  # Every job on this throw-away cluster is ours.
  scancel --full --quiet --state=PENDING 2>/dev/null
  scancel --full --quiet --state=RUNNING 2>/dev/null
  sleep 1
fi
stop_one slurmd
stop_one slurmctld
stop_one munged

# Remove the configuration start.sh wrote (recognised by its marker line), so that the machine is
# left as it was: with a slurm.conf whose controller is gone, every `scontrol` call (the slurm
# executor plugin runs one when Snakemake starts) waits ~10 s for a connection.
MARKER="# Written by cookproc .ci/slurm/start.sh: a throw-away test cluster."
for conf in /etc/slurm/slurm.conf /etc/slurm/gres.conf; do
  if [[ -f $conf ]] && grep -qF "$MARKER" "$conf"; then
    rm -f "$conf"
    log "removed $conf"
  fi
done
exit 0

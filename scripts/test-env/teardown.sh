#!/usr/bin/env bash
# Stops what setup.sh started: the test sshd, found by its PID file and only if that PID is still
# an sshd running our config. Installed packages, users and keys stay (setup.sh reuses them).
set -euo pipefail

STATE_DIR="${SITEPLANE_TEST_STATE_DIR:-/var/lib/siteplane-test}"
CONFIG="$STATE_DIR/ssh/sshd_config"
PIDFILE="$STATE_DIR/ssh/sshd.pid"

if [ ! -f "$PIDFILE" ]; then
  echo "test sshd not running (no $PIDFILE)"
  exit 0
fi
pid="$(cat "$PIDFILE")"
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$CONFIG"; then
  # SIGTERM to the listener only: open test sessions (its children) end with their connections.
  kill -TERM "$pid"
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "stopped test sshd (pid $pid)"
else
  echo "stale $PIDFILE (pid $pid is not our sshd); removed"
fi
rm -f "$PIDFILE"

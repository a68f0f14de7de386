#!/usr/bin/env bash
# Stops the Pebble, Pebble (EAB) and pebble-challtestsrv processes that pebble.sh started, by the
# PIDs it recorded, and nothing else. Keeps the state dir (test CA, EAB key) for the next start.
set -euo pipefail

STATE_DIR="${SITEPLANE_PEBBLE_DIR:-/var/lib/siteplane-test/pebble}"

stop() { # pidfile expected-binary
  local file="$STATE_DIR/$1" pid
  [ -f "$file" ] || return 0
  pid="$(cat "$file")"
  # Only signal the PID if it still is the program we started (PIDs get reused).
  if [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$2"; then
    kill "$pid"
    for _ in $(seq 1 50); do
      [ -d "/proc/$pid" ] || break
      sleep 0.1
    done
    if [ -d "/proc/$pid" ]; then kill -9 "$pid" || true; fi
    echo "stopped $1 (pid $pid)"
  fi
  rm -f "$file"
}

stop pebble.pid /usr/bin/pebble
stop pebble-eab.pid /usr/bin/pebble
stop challtestsrv.pid /usr/bin/pebble-challtestsrv

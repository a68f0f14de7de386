#!/usr/bin/env bash
# Prepares this machine (Debian 12, no systemd, run as root) for Siteplane's system tests:
#   - installs the few packages the harness itself uses (only those missing; apt-get update only
#     when needed) — nothing a site needs: the sites suites run on the pristine test host,
#   - creates the users the tests log in as / run as (spdeploy with passwordless sudo, spsite),
#   - starts a dedicated sshd on 127.0.0.1:2222 with its own config, host key and client key
#     under $STATE_DIR/ssh, unless it is already running.
# Idempotent and quiet; prints what it installed or started. teardown.sh stops what this started.
# MariaDB (3306) and PostgreSQL (5432) are already running on this machine kind: not touched.
set -euo pipefail

STATE_DIR="${SITEPLANE_TEST_STATE_DIR:-/var/lib/siteplane-test}"
SSH_DIR="$STATE_DIR/ssh"
SSH_PORT="${SITEPLANE_TEST_SSH_PORT:-2222}"
# Only what the tests themselves use on this machine: the loopback sshd of the executor tests and
# the clients the suites check with. Everything a site needs (nginx, PHP, databases, Node, PM2,
# WordPress, phpMyAdmin) is installed by Siteplane itself on the pristine test host
# (test-host.sh), never here.
PACKAGES=(openssh-server openssh-client git curl sudo coreutils util-linux procps debootstrap iptables zstd zsh tmux)

if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh must run as root" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -qq -y -o DPkg::Lock::Timeout=600 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
mkdir -p "$STATE_DIR"
chmod 0755 "$STATE_DIR"
APT_LOG="$STATE_DIR/apt.log"

# --- packages -------------------------------------------------------------------------------------
missing=()
for pkg in "${PACKAGES[@]}"; do
  if [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" != "install ok installed" ]; then
    missing+=("$pkg")
  fi
done

apt_update() {
  if ! "${APT[@]}" update >>"$APT_LOG" 2>&1; then
    echo "apt-get update failed; see $APT_LOG" >&2
    tail -n 20 "$APT_LOG" >&2
    exit 1
  fi
}

if [ "${#missing[@]}" -gt 0 ]; then
  : >"$APT_LOG"
  updated=0
  # Update only when the package lists do not know a package we need (fresh machine, empty lists).
  for pkg in "${missing[@]}"; do
    if ! apt-cache show --no-all-versions "$pkg" >/dev/null 2>&1; then
      apt_update
      updated=1
      break
    fi
  done
  if ! "${APT[@]}" install --no-install-recommends "${missing[@]}" >>"$APT_LOG" 2>&1; then
    # Stale lists point at files the mirror no longer has: refresh once and retry.
    if [ "$updated" -eq 0 ]; then
      apt_update
      "${APT[@]}" install --no-install-recommends "${missing[@]}" >>"$APT_LOG" 2>&1 || {
        echo "apt-get install failed; see $APT_LOG" >&2
        tail -n 20 "$APT_LOG" >&2
        exit 1
      }
    else
      echo "apt-get install failed; see $APT_LOG" >&2
      tail -n 20 "$APT_LOG" >&2
      exit 1
    fi
  fi
  echo "installed: ${missing[*]}"
fi

# --- users ----------------------------------------------------------------------------------------
# '*' instead of the locked '!' useradd leaves: with UsePAM no, sshd refuses keys of locked accounts.
ensure_user() {
  local name="$1"
  if ! id -u "$name" >/dev/null 2>&1; then
    useradd --create-home --shell /bin/bash "$name"
    echo "created user $name"
  fi
  usermod -p '*' "$name"
}
ensure_user spdeploy
ensure_user spsite

SUDOERS=/etc/sudoers.d/siteplane-test-spdeploy
if [ ! -f "$SUDOERS" ]; then
  printf 'spdeploy ALL=(ALL:ALL) NOPASSWD: ALL\n' >"$SUDOERS.tmp"
  chmod 0440 "$SUDOERS.tmp"
  visudo -cqf "$SUDOERS.tmp"
  mv "$SUDOERS.tmp" "$SUDOERS"
  echo "granted spdeploy passwordless sudo ($SUDOERS)"
fi

# --- keys -----------------------------------------------------------------------------------------
mkdir -p "$SSH_DIR"
chmod 0755 "$SSH_DIR"
[ -f "$SSH_DIR/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C siteplane-test-host -f "$SSH_DIR/ssh_host_ed25519_key"
[ -f "$SSH_DIR/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C siteplane-test-client -f "$SSH_DIR/id_ed25519"
# Test processes (run as root) read the client key; the key must not be readable by others.
chmod 0600 "$SSH_DIR/id_ed25519" "$SSH_DIR/ssh_host_ed25519_key"
# One authorized_keys for every user (root, spdeploy): root-owned and not writable by others,
# which StrictModes accepts for any user.
install -m 0644 "$SSH_DIR/id_ed25519.pub" "$SSH_DIR/authorized_keys"
# The keys of servers a running suite registered through the API (test/system/sites appends each
# generated public key and removes it afterwards). A second file, never rewritten here: running
# setup.sh while a suite runs must not revoke them.
[ -f "$SSH_DIR/authorized_keys.servers" ] || install -m 0644 /dev/null "$SSH_DIR/authorized_keys.servers"

# --- sshd -----------------------------------------------------------------------------------------
CONFIG="$SSH_DIR/sshd_config"
PIDFILE="$SSH_DIR/sshd.pid"
cat >"$CONFIG.new" <<EOF
# Written by scripts/test-env/setup.sh: a test-only sshd, loopback only.
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $SSH_DIR/ssh_host_ed25519_key
PidFile $PIDFILE
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
AuthorizedKeysFile $SSH_DIR/authorized_keys $SSH_DIR/authorized_keys.servers
UsePAM no
PrintMotd no
X11Forwarding no
Subsystem sftp internal-sftp
# bash sources ~/.bashrc for a command sshd runs only as a top-level shell (SHLVL unset). This
# machine's root .bashrc runs pyenv init (1-3 s per command), a stock server's does not:
# SHLVL=1 keeps every command's cost stock-like.
SetEnv SHLVL=1
EOF
# sshd's privilege-separation directory; /run is empty on a fresh container.
mkdir -p /run/sshd
chmod 0755 /run/sshd

/usr/sbin/sshd -t -f "$CONFIG.new"
config_changed=0
if ! cmp -s "$CONFIG.new" "$CONFIG" 2>/dev/null; then config_changed=1; fi
mv "$CONFIG.new" "$CONFIG"

# Running means: the PID file names a live sshd started with our config file.
running_pid() {
  local pid
  [ -f "$PIDFILE" ] || return 1
  pid="$(cat "$PIDFILE")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$CONFIG" || return 1
  echo "$pid"
}

if pid="$(running_pid)"; then
  if [ "$config_changed" -eq 1 ]; then
    kill -HUP "$pid"
    echo "sshd (pid $pid) reloaded with $CONFIG"
  else
    echo "sshd already running (pid $pid) on 127.0.0.1:$SSH_PORT"
  fi
else
  if (exec 3<>"/dev/tcp/127.0.0.1/$SSH_PORT") 2>/dev/null; then
    echo "127.0.0.1:$SSH_PORT is taken by another process; set SITEPLANE_TEST_SSH_PORT" >&2
    exit 1
  fi
  rm -f "$PIDFILE"
  /usr/sbin/sshd -f "$CONFIG" -E "$SSH_DIR/sshd.log"
  for _ in $(seq 1 50); do
    if [ -s "$PIDFILE" ] && (exec 3<>"/dev/tcp/127.0.0.1/$SSH_PORT") 2>/dev/null; then break; fi
    sleep 0.1
  done
  pid="$(running_pid)" || {
    echo "sshd did not start; see $SSH_DIR/sshd.log" >&2
    exit 1
  }
  echo "started sshd (pid $pid) on 127.0.0.1:$SSH_PORT, config $CONFIG"
fi
echo "host key $(ssh-keygen -lf "$SSH_DIR/ssh_host_ed25519_key.pub" | cut -d' ' -f2), client key $SSH_DIR/id_ed25519"

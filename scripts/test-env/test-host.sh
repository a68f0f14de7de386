#!/usr/bin/env bash
# A pristine Debian server for the system tests: a debootstrap minbase root (openssh-server, sudo,
# ca-certificates and nothing else — no nginx, PHP, Node, PM2 or database), run in its own mount,
# PID, UTS, IPC and network namespaces with its own address, reached only over SSH, and reaching
# only the package registries this machine reaches (Debian's and npm's), as a new VPS would.
#
#   test-host.sh start NAME [--os debian12|debian13] [--index N] [--umask 027] [--init sshd|systemd]
#        builds (or reuses the cached) root filesystem, starts the host and prints shell
#        assignments: TEST_HOST_ADDRESS, TEST_HOST_PORT, TEST_HOST_KEY, TEST_HOST_PID, TEST_HOST_ROOT
#        --init systemd boots the host's own systemd as PID 1 (systemd-nspawn, from Debian's
#        systemd-container) instead of running sshd alone: a machine as an operator gets one, for
#        the guide that installs Siteplane itself under systemd (docs/operating.md). --umask applies
#        to sshd's hosts only (systemd sets its own).
#   test-host.sh stop NAME      stops it and removes its namespace, firewall rules and files
#   test-host.sh exec NAME -- CMD…   runs CMD inside the host (as root, in its namespaces)
#   test-host.sh build [--os …] only builds the cached root filesystem
#
# What is the test harness's and not the product's: the CA this machine's registry proxy uses
# (trusted by the host, and NODE_EXTRA_CA_CERTS for Node processes), the registries' addresses in
# the host's /etc/hosts (no DNS answers inside the namespace, as on a server without it), and root's
# umask (027 by default, as CIS-hardened images set it: Siteplane must not depend on it).
# Only what this script started is stopped, by the PIDs and names it recorded.
set -euo pipefail

CACHE_DIR="${SITEPLANE_TEST_CACHE_DIR:-/var/cache/siteplane-test}"
STATE_ROOT="${SITEPLANE_TEST_STATE_DIR:-/var/lib/siteplane-test}/hosts"
MIRROR="${SITEPLANE_TEST_MIRROR:-http://deb.debian.org/debian}"
SECURITY_MIRROR="${SITEPLANE_TEST_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
# The names a host may reach (TCP 80 and 443 only); everything else is refused at once.
REGISTRIES=(deb.debian.org security.debian.org registry.npmjs.org)
SUBNET_PREFIX=10.231

die() {
  echo "test-host: $*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || die "must run as root"

suite_of() {
  case "$1" in
    debian12) echo bookworm ;;
    debian13) echo trixie ;;
    *) die "unknown --os $1 (debian12 or debian13)" ;;
  esac
}

ensure_tools() {
  local missing=()
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  command -v iptables >/dev/null || missing+=(iptables)
  command -v zstd >/dev/null || missing+=(zstd)
  command -v nsenter >/dev/null || missing+=(util-linux)
  [ "${1:-}" != systemd ] || command -v systemd-nspawn >/dev/null || missing+=(systemd-container)
  [ -e /usr/share/keyrings/debian-archive-keyring.gpg ] || missing+=(debian-archive-keyring)
  if [ "${#missing[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get -qq -o DPkg::Lock::Timeout=600 update >/dev/null
    apt-get -qq -y -o DPkg::Lock::Timeout=600 install --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# --- the cached root filesystem --------------------------------------------------------------------
image_path() { echo "$CACHE_DIR/rootfs-$1.tar.zst"; }

build_image() {
  local os="$1" suite image tmp
  suite="$(suite_of "$os")"
  image="$(image_path "$os")"
  mkdir -p "$CACHE_DIR"
  exec 9>"$CACHE_DIR/build-$os.lock"
  flock 9
  if [ -s "$image" ]; then
    flock -u 9
    return 0
  fi
  tmp="$(mktemp -d "$CACHE_DIR/build-$os.XXXXXX")"
  echo "test-host: building the $os root filesystem (debootstrap minbase, about a minute)" >&2
  if ! debootstrap --variant=minbase --include=openssh-server,ca-certificates,sudo \
    --keyring=/usr/share/keyrings/debian-archive-keyring.gpg "$suite" "$tmp/root" "$MIRROR" >"$tmp/debootstrap.log" 2>&1; then
    tail -n 20 "$tmp/debootstrap.log" >&2
    rm -rf "$tmp"
    die "debootstrap $suite failed"
  fi
  # A cloud image's sources (main, updates, security) and, like many of them, no package lists yet.
  cat >"$tmp/root/etc/apt/sources.list" <<EOF
deb $MIRROR $suite main
deb $MIRROR $suite-updates main
deb $SECURITY_MIRROR $suite-security main
EOF
  rm -rf "$tmp/root/var/lib/apt/lists" "$tmp/root/var/cache/apt/"*.bin
  mkdir -p "$tmp/root/var/lib/apt/lists/partial"
  chroot "$tmp/root" apt-get clean
  # Host keys are made per start; the image carries none.
  rm -f "$tmp/root/etc/ssh/ssh_host_"*
  tar -C "$tmp/root" --numeric-owner -cf - . | zstd -q -T0 -3 -o "$tmp/rootfs.tar.zst"
  mv "$tmp/rootfs.tar.zst" "$image"
  rm -rf "$tmp"
  flock -u 9
  echo "test-host: cached $image ($(du -h "$image" | cut -f1))" >&2
}

# --- one host --------------------------------------------------------------------------------------
host_dir() {
  [[ "$1" =~ ^[a-z0-9][a-z0-9-]{0,15}$ ]] || die "host name must be 1-16 of [a-z0-9-]"
  echo "$STATE_ROOT/$1"
}

# The unshare process that holds the host's namespaces, when it is alive and ours.
host_pid() {
  local dir="$1" pid
  [ -f "$dir/pid" ] || return 1
  pid="$(cat "$dir/pid")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$dir/root" || return 1
  echo "$pid"
}

# PID 1 of the host's PID namespace (sshd or systemd), as this machine numbers it. systemd-nspawn's
# first child is a helper that exits once the host's systemd runs: the child is waited for by name.
init_pid() {
  local outer="$1" init="${2:-sshd}" child
  for _ in $(seq 1 100); do
    child="$(cat /proc/"$outer"/task/*/children 2>/dev/null | tr ' ' '\n' | grep -m1 . || true)"
    if [ -n "$child" ] && { [ "$init" != systemd ] || [ "$(cat "/proc/$child/comm" 2>/dev/null)" = systemd ]; }; then
      echo "$child"
      return 0
    fi
    sleep 0.05
  done
  return 1
}

start_host() {
  local name="$1" os="$2" index="$3" umask_value="$4" init="$5"
  local dir root ns veth address gateway subnet pid inner
  dir="$(host_dir "$name")"
  if pid="$(host_pid "$dir")"; then
    cat "$dir/env"
    return 0
  fi
  stop_host "$name" quiet
  build_image "$os"
  [[ "$index" =~ ^[0-9]+$ ]] && [ "$index" -ge 1 ] && [ "$index" -le 250 ] || die "--index must be 1-250"
  ns="sp-$name"
  veth="spv$index"
  subnet="$SUBNET_PREFIX.$index.0/30"
  gateway="$SUBNET_PREFIX.$index.1"
  address="$SUBNET_PREFIX.$index.2"
  ip link show "$veth" >/dev/null 2>&1 && die "$veth exists: index $index is taken by another host"

  mkdir -p "$dir"
  root="$dir/root"
  mkdir -p "$root"
  zstd -q -d -c "$(image_path "$os")" | tar -C "$root" --numeric-owner -xf -
  printf '%s\n' "$name" >"$dir/name"

  # The harness's part: trust this machine's registry proxy CA, name the registries, no DNS.
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null 2>&1
  fi
  {
    printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n' "$name"
    for registry in "${REGISTRIES[@]}"; do
      getent ahostsv4 "$registry" | awk -v n="$registry" 'NR==1 {print $1 "\t" n}'
    done
  } >"$root/etc/hosts"
  : >"$root/etc/resolv.conf"
  printf '%s\n' "$name" >"$root/etc/hostname"

  # SSH: a key for the harness, fresh host keys, root by key only.
  ssh-keygen -q -t ed25519 -N '' -C "siteplane-test-$name" -f "$dir/client_ed25519" <<<y >/dev/null
  install -d -m 0700 "$root/root/.ssh"
  install -m 0600 "$dir/client_ed25519.pub" "$root/root/.ssh/authorized_keys"
  chroot "$root" ssh-keygen -A >/dev/null
  chroot "$root" usermod -p '*' root
  cat >"$root/etc/ssh/sshd_config.d/siteplane-test.conf" <<'EOF'
# The test harness's: key logins only, no PAM (no logind in a namespace), and this machine's
# registry proxy CA for Node processes (a real server needs none of this).
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
SetEnv NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
EOF
  mkdir -p "$root/run/sshd"

  # Network: a veth pair, NAT through this machine, and only the registries' web ports outside.
  ip netns add "$ns"
  ip link add "$veth" type veth peer name "${veth}p"
  ip link set "${veth}p" netns "$ns"
  ip addr add "$gateway/30" dev "$veth"
  ip link set "$veth" up
  ip -n "$ns" link set "${veth}p" name eth0
  ip -n "$ns" addr add "$address/30" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  ip -n "$ns" route add default via "$gateway"
  echo 1 >/proc/sys/net/ipv4/ip_forward
  local chain="SPTEST-$index"
  iptables -N "$chain"
  iptables -A "$chain" -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT
  for registry in "${REGISTRIES[@]}"; do
    for ip4 in $(getent ahostsv4 "$registry" | awk '{print $1}' | sort -u); do
      iptables -A "$chain" -d "$ip4" -p tcp -m multiport --dports 80,443 -j ACCEPT
    done
  done
  iptables -A "$chain" -p tcp -j REJECT --reject-with tcp-reset
  iptables -A "$chain" -j REJECT
  iptables -I FORWARD -i "$veth" -j "$chain"
  # Nothing on this machine itself is the host's to reach, but answers to what this machine opened.
  iptables -I INPUT -i "$veth" -j "$chain"
  iptables -t nat -A POSTROUTING -s "$subnet" ! -d "$subnet" -j MASQUERADE
  printf 'ns=%s\nveth=%s\nchain=%s\nsubnet=%s\n' "$ns" "$veth" "$chain" "$subnet" >"$dir/net"

  if [ "$init" = systemd ]; then
    boot_systemd "$dir" "$root" "$ns" "$name"
  else
    run_sshd "$dir" "$root" "$ns" "$name" "$umask_value"
  fi
  pid="$(cat "$dir/pid")"
  for _ in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/$address/22") 2>/dev/null; then break; fi
    kill -0 "$pid" 2>/dev/null || {
      cat "$dir/sshd.log" >&2
      die "the host did not start"
    }
    sleep 0.1
  done
  (exec 3<>"/dev/tcp/$address/22") 2>/dev/null || die "sshd on $address:22 does not answer; see $dir/sshd.log"
  cat >"$dir/env" <<EOF
TEST_HOST_NAME=$name
TEST_HOST_OS=$os
TEST_HOST_ADDRESS=$address
TEST_HOST_PORT=22
TEST_HOST_KEY=$dir/client_ed25519
TEST_HOST_PID=$(init_pid "$pid" "$init")
TEST_HOST_ROOT=$root
TEST_HOST_UMASK=$umask_value
TEST_HOST_INIT=$init
EOF
  cat "$dir/env"
}

# PID 1 is sshd, started under root's umask of a hardened image.
run_sshd() {
  local dir="$1" root="$2" ns="$3" name="$4" umask_value="$5" inner
  inner="mount -t proc proc '$root/proc' && mount -t sysfs sysfs '$root/sys' \
    && mount -t tmpfs -o mode=0755 tmpfs '$root/dev' && for d in null zero full random urandom tty; do touch '$root/dev/'\$d && mount --bind /dev/\$d '$root/dev/'\$d; done \
    && mkdir -p '$root/dev/pts' '$root/dev/shm' && mount -t devpts -o newinstance,ptmxmode=0666 devpts '$root/dev/pts' && ln -s pts/ptmx '$root/dev/ptmx' \
    && mount -t tmpfs -o mode=1777 tmpfs '$root/dev/shm' && mount -t tmpfs -o mode=0755 tmpfs '$root/run' && mkdir -p '$root/run/sshd' \
    && hostname '$name' && umask $umask_value && exec chroot '$root' /usr/sbin/sshd -D -e"
  setsid ip netns exec "$ns" unshare --mount --pid --uts --ipc --fork --kill-child=SIGKILL --propagation private \
    sh -c "$inner" </dev/null >"$dir/sshd.log" 2>&1 &
  printf '%s\n' "$!" >"$dir/pid"
}

# PID 1 is the host's own systemd, which starts its ssh.service like any Debian machine's. This
# machine runs no systemd, so systemd-nspawn registers nothing (--register=no, --keep-unit) and gives
# the host a cgroup v2 hierarchy of its own (Debian 13's systemd refuses v1). It joins the host's
# network namespace; /etc/hosts and the empty resolv.conf stay as written above.
boot_systemd() {
  local dir="$1" root="$2" ns="$3" name="$4" command
  # What Debian's systemd-sysv adds to a machine booted with systemd (the image has systemd alone):
  # /sbin/init, without which invoke-rc.d takes it for a machine with no init system and a package's
  # install does not start its service, and the power commands.
  ln -sfn ../lib/systemd/systemd "$root/usr/sbin/init"
  for command in halt poweroff reboot shutdown; do ln -sfn ../bin/systemctl "$root/usr/sbin/$command"; done
  setsid env SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 systemd-nspawn --quiet --boot --register=no --keep-unit \
    --directory="$root" --machine="$name" --network-namespace-path="/run/netns/$ns" \
    --resolv-conf=off --timezone=off --link-journal=no --console=read-only </dev/null >"$dir/sshd.log" 2>&1 &
  printf '%s\n' "$!" >"$dir/pid"
}

stop_host() {
  local name="$1" quiet="${2:-}" dir pid
  dir="$(host_dir "$name")"
  [ -d "$dir" ] || return 0
  if pid="$(host_pid "$dir")"; then
    # systemd-nspawn takes SIGTERM as a power-off: the host's systemd stops its services first.
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  # systemd-nspawn killed (here or by anyone) does not take its host with it, as unshare's
  # --kill-child does: the host's PID 1 goes, and every process of its PID namespace with it, when
  # it is still this host's (its root is this host's directory).
  local init
  init="$(sed -n 's/^TEST_HOST_PID=//p' "$dir/env" 2>/dev/null || true)"
  if [ -n "$init" ] && [ "/proc/$init/root/" -ef "$dir/root" ]; then
    kill -9 "$init" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$init" 2>/dev/null || break; sleep 0.1; done
  fi
  # What systemd-nspawn leaves of a host of this name (an empty directory it does not remove).
  rmdir "/run/systemd/nspawn/propagate/$1" 2>/dev/null || true
  if [ -f "$dir/net" ]; then
    local ns veth chain subnet
    # shellcheck disable=SC1091
    . "$dir/net"
    iptables -D FORWARD -i "$veth" -j "$chain" 2>/dev/null || true
    iptables -D INPUT -i "$veth" -j "$chain" 2>/dev/null || true
    iptables -F "$chain" 2>/dev/null || true
    iptables -X "$chain" 2>/dev/null || true
    iptables -t nat -D POSTROUTING -s "$subnet" ! -d "$subnet" -j MASQUERADE 2>/dev/null || true
    ip link del "$veth" 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  fi
  # The mounts lived in the host's own mount namespace and went with it: nothing is mounted here.
  rm -rf --one-file-system "$dir"
  [ -n "$quiet" ] || echo "test-host: stopped $name" >&2
}

exec_in_host() {
  local name="$1" dir pid
  shift
  dir="$(host_dir "$name")"
  pid="$(host_pid "$dir")" || die "host $name is not running"
  # shellcheck disable=SC1091
  . "$dir/env"
  exec nsenter -t "$TEST_HOST_PID" -m -u -i -n -p -r -w -- env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"
}

command="${1:-}"
shift || true
case "$command" in
  build)
    os=debian12
    while [ $# -gt 0 ]; do
      case "$1" in --os) os="$2"; shift 2 ;; *) die "unknown option $1" ;; esac
    done
    ensure_tools
    build_image "$os"
    ;;
  start)
    name="${1:-}"
    [ -n "$name" ] || die "usage: test-host.sh start NAME [--os debian12|debian13] [--index N] [--umask 027] [--init sshd|systemd]"
    shift
    os=debian12 index=1 umask_value=027 init=sshd
    while [ $# -gt 0 ]; do
      case "$1" in
        --os) os="$2"; shift 2 ;;
        --index) index="$2"; shift 2 ;;
        --umask) umask_value="$2"; shift 2 ;;
        --init) init="$2"; shift 2 ;;
        *) die "unknown option $1" ;;
      esac
    done
    [[ "$umask_value" =~ ^[0-7]{3,4}$ ]] || die "--umask must be octal like 027"
    [[ "$init" =~ ^(sshd|systemd)$ ]] || die "--init must be sshd or systemd"
    ensure_tools "$init"
    start_host "$name" "$os" "$index" "$umask_value" "$init"
    ;;
  stop) stop_host "${1:?usage: test-host.sh stop NAME}" ;;
  exec)
    name="${1:?usage: test-host.sh exec NAME -- CMD…}"
    shift
    [ "${1:-}" = "--" ] && shift
    exec_in_host "$name" "$@"
    ;;
  *) die "usage: test-host.sh build|start|stop|exec …" ;;
esac

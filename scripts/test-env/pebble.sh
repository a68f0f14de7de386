#!/usr/bin/env bash
# Starts Let's Encrypt's ACME test server (Pebble) and its mock DNS (pebble-challtestsrv) on
# loopback for the TLS system tests. Idempotent: installs only what is missing, creates the test CA
# once, starts only what is not already running. Run as root; no prompts.
#
#   pebble            https://127.0.0.1:14000/dir   management https://127.0.0.1:15000
#   pebble (EAB)      https://127.0.0.1:14001/dir   management https://127.0.0.1:15001
#   challtestsrv      DNS 127.0.0.1:8053 (udp+tcp)  management http://127.0.0.1:8055
#
# Pebble validates HTTP-01 on port 5002 and TLS-ALPN-01 on 5001 of whatever the mock DNS answers;
# challtestsrv's own HTTP/TLS challenge servers are off so the tests (later nginx) serve 5002.
# Stop with scripts/test-env/pebble-stop.sh.
set -euo pipefail

STATE_DIR="${SITEPLANE_PEBBLE_DIR:-/var/lib/siteplane-test/pebble}"
CA_CERT="$STATE_DIR/ca.pem"

if [ "$(id -u)" -ne 0 ]; then
  echo "pebble.sh: run as root (it installs packages)" >&2
  exit 1
fi

# --- packages -------------------------------------------------------------------------------
need=()
command -v pebble >/dev/null 2>&1 || need+=(pebble)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ "${#need[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  # The package lists may be missing on a fresh machine; update only when the install fails.
  if ! apt-get -o DPkg::Lock::Timeout=600 install -y "${need[@]}"; then
    apt-get -o DPkg::Lock::Timeout=600 update
    apt-get -o DPkg::Lock::Timeout=600 install -y "${need[@]}"
  fi
fi

mkdir -p "$STATE_DIR"
chmod 700 "$STATE_DIR"
cd "$STATE_DIR"

running() { # pidfile expected-binary
  local pid
  [ -f "$1" ] || return 1
  pid="$(cat "$1")"
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  # The PID may have been reused by another program since: check it is still ours.
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$2"
}

stop_one() { # pidfile expected-binary
  if running "$1" "$2"; then
    kill "$(cat "$1")" || true
  fi
  rm -f "$1"
}

# --- test CA for Pebble's own HTTPS (what ACME_CA_CERTS points at) -------------------------------
# Regenerated only when missing or about to expire; a running Pebble still holds the old
# certificate then, so it is restarted below.
regenerated=0
if [ ! -s ca.pem ] || [ ! -s cert.pem ] || ! openssl x509 -checkend 86400 -noout -in cert.pem >/dev/null 2>&1 \
  || ! openssl x509 -checkend 86400 -noout -in ca.pem >/dev/null 2>&1; then
  umask 077
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -keyout ca-key.pem -out ca.pem -subj "/CN=Siteplane test CA for Pebble" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout key.pem -out cert.csr -subj "/CN=localhost" 2>/dev/null
  printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1" "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >cert.ext
  openssl x509 -req -in cert.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 825 \
    -extfile cert.ext -out cert.pem 2>/dev/null
  rm -f cert.csr cert.ext
  chmod 644 ca.pem cert.pem
  umask 022
  regenerated=1
fi

# --- EAB key for the second instance (ZeroSSL-style) ------------------------------------------------
if [ ! -s eab.json ]; then
  # Pebble decodes the MAC key as unpadded base64url.
  hmac="$(openssl rand -base64 32 | tr '+/' '-_' | tr -d '=\n')"
  printf '{"kid":"siteplane-test-kid","hmacKey":"%s"}\n' "$hmac" >eab.json
fi
eab_kid="$(sed -E 's/.*"kid":"([^"]*)".*/\1/' eab.json)"
eab_key="$(sed -E 's/.*"hmacKey":"([^"]*)".*/\1/' eab.json)"

write_config() { # file listen management eabRequired
  local macs=""
  if [ "$4" = true ]; then
    macs=", \"externalAccountMACKeys\": { \"$eab_kid\": \"$eab_key\" }"
  fi
  cat >"$1.tmp" <<JSON
{
  "pebble": {
    "listenAddress": "$2",
    "managementListenAddress": "$3",
    "certificate": "$STATE_DIR/cert.pem",
    "privateKey": "$STATE_DIR/key.pem",
    "httpPort": 5002,
    "tlsPort": 5001,
    "ocspResponderURL": "",
    "externalAccountBindingRequired": $4$macs
  }
}
JSON
  mv "$1.tmp" "$1"
}
write_config pebble.json 127.0.0.1:14000 127.0.0.1:15000 false
write_config pebble-eab.json 127.0.0.1:14001 127.0.0.1:15001 true

if [ "$regenerated" = 1 ]; then
  stop_one pebble.pid /usr/bin/pebble
  stop_one pebble-eab.pid /usr/bin/pebble
fi

# start NAME PIDFILE LOG CMD...: detached (own session) so it outlives this script; the child
# writes its own PID before exec so the file names the server, not a wrapper.
start() {
  local name="$1" pidfile="$2" log="$3"
  shift 3
  if running "$pidfile" "$1"; then
    echo "$name already running (pid $(cat "$pidfile"))"
    return
  fi
  setsid sh -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" >"$log" 2>&1 </dev/null &
  for _ in $(seq 1 50); do
    [ -s "$pidfile" ] && break
    sleep 0.1
  done
  echo "$name started (pid $(cat "$pidfile"))"
}

# Any HTTP answer means the server is up; for Pebble it also proves the CA file matches its cert.
wait_http() { # url [curl args]
  local url="$1"
  shift
  for _ in $(seq 1 100); do
    if curl -sS -o /dev/null "$@" "$url" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "pebble.sh: $url did not answer; see the logs in $STATE_DIR" >&2
  return 1
}

# Empty default addresses: a name resolves only after a test adds it (/add-a), so a test that
# forgets to point a domain fails instead of silently hitting 127.0.0.1 or ::1.
start pebble-challtestsrv challtestsrv.pid challtestsrv.log \
  /usr/bin/pebble-challtestsrv -dns01 127.0.0.1:8053 -management 127.0.0.1:8055 \
  -http01 "" -https01 "" -tlsalpn01 "" -defaultIPv4 "" -defaultIPv6 ""

export PEBBLE_VA_NOSLEEP=1 PEBBLE_WFE_NONCEREJECT=0
start pebble pebble.pid pebble.log /usr/bin/pebble -config "$STATE_DIR/pebble.json" -dnsserver 127.0.0.1:8053
start pebble-eab pebble-eab.pid pebble-eab.log /usr/bin/pebble -config "$STATE_DIR/pebble-eab.json" -dnsserver 127.0.0.1:8053

wait_http http://127.0.0.1:8055/
wait_http https://127.0.0.1:14000/dir --cacert "$CA_CERT"
wait_http https://127.0.0.1:14001/dir --cacert "$CA_CERT"

cat <<INFO
ACME directory:      https://127.0.0.1:14000/dir
ACME directory, EAB: https://127.0.0.1:14001/dir   (EAB kid and hmacKey in $STATE_DIR/eab.json)
Pebble management:   https://127.0.0.1:15000 (roots: /roots/0), https://127.0.0.1:15001
Mock DNS:            127.0.0.1:8053, management http://127.0.0.1:8055
CA of Pebble HTTPS:  $CA_CERT   (ACME_CA_CERTS=$CA_CERT DNS_RESOLVERS=127.0.0.1:8053)
INFO

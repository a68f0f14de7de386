/** TCP_SOCKETS, a shell line that sets $sockets to the kernel's TCP socket tables (tcp6 when there is one). */
export const TCP_SOCKETS = `sockets=/proc/net/tcp; [ -r /proc/net/tcp6 ] && sockets="$sockets /proc/net/tcp6"`;

/**
 * FREE_PORT, a bash snippet that sets $port to a port that no TCP socket uses (the kernel's own
 * list, /proc/net/tcp and tcp6), picked without the cost of starting Node to ask the kernel; prints
 * `no free port` and exits 1 when 50 tries found none.
 *
 * The port is taken outside the kernel's ephemeral range (ip_local_port_range): from 20000 up to
 * below it, or above it when the range starts lower, and inside it only when it covers everything.
 * A port inside the range was free when picked but could be given to an outgoing connection in the
 * seconds before the release listens: a Strapi release opens its PostgreSQL pool while it boots, and
 * the live release restarted beside it does the same. CI saw Strapi refuse to start beside the live
 * one with "port … is already used by another application", on an even port (the ones the kernel
 * gives connections first). Only a process that binds that very port itself can still take it.
 */
export const FREE_PORT = `port=
${TCP_SOCKETS}
read -r low high 2>/dev/null </proc/sys/net/ipv4/ip_local_port_range || { low=32768 high=60999; }
if [ "$low" -ge 21024 ]; then base=20000 span=$(( low - 20000 ))
elif [ "$high" -le 64511 ]; then base=$(( high + 1 )) span=$(( 65535 - high ))
else base=$low span=$(( high - low + 1 )); fi
for _ in $(seq 1 50); do
  candidate=$(( base + (RANDOM * 32768 + RANDOM) % span ))
  if ! awk -v p="$(printf ':%04X' "$candidate")" '$2 ~ p "$" { used = 1 } END { exit !used }' $sockets; then
    port=$candidate; break
  fi
done
[ -n "$port" ] || { echo "no free port"; exit 1; }`;

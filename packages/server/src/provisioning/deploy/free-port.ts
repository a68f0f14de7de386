/** TCP_SOCKETS, a shell line that sets $sockets to the kernel's TCP socket tables (tcp6 when there is one). */
export const TCP_SOCKETS = `sockets=/proc/net/tcp; [ -r /proc/net/tcp6 ] && sockets="$sockets /proc/net/tcp6"`;

/**
 * FREE_PORT, a bash snippet that sets $port to a port in the kernel's ephemeral range that no TCP
 * socket uses, not even an outgoing connection's end (the kernel's own list, /proc/net/tcp and
 * tcp6), picked without the cost of starting Node to ask the kernel; prints `no free port` and
 * exits 1 when 50 tries found none. A process started on it a moment later may still lose the race
 * to another: its health check then fails, and nothing visitors reach has changed.
 */
export const FREE_PORT = `port=
${TCP_SOCKETS}
for _ in $(seq 1 50); do
  candidate=$(( 32768 + RANDOM % 28000 ))
  if ! awk -v p="$(printf ':%04X' "$candidate")" '$2 ~ p "$" { used = 1 } END { exit !used }' $sockets; then
    port=$candidate; break
  fi
done
[ -n "$port" ] || { echo "no free port"; exit 1; }`;

// nginx started by these suites is stopped with local-daemons.ts (daemonsBefore, stopDaemonsStartedSince).

/** Root is needed: nginx on 80/443, system users, /etc. */
export function requireRoot(): void {
  if (process.getuid?.() !== 0) throw new Error('the TLS site tests run as root (nginx on 80/443, system users)');
}

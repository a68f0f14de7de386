/**
 * ssh2, loaded with the first SSH connection: a process that reaches no real server (the API on
 * dry-run servers, a PostgreSQL API process beside the workers) never holds its modules (resident
 * memory, issue 13; pg, acme-client and the Route 53 SDK load on first use too). Node loads a module
 * once; later calls get the same one.
 */
export type Ssh2Module = typeof import('ssh2');

export async function loadSsh2(): Promise<Ssh2Module> {
  const loaded = await import('ssh2');
  // A CommonJS package: its exports are the default export, and (as Node detects them) named ones.
  return (loaded as unknown as { default?: Ssh2Module }).default ?? loaded;
}

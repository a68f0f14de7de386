/**
 * acme-client (with its axios), loaded with the first ACME request: a process that issues no
 * certificate never holds its modules (resident memory, issue 13). Node loads a module once; later
 * calls get the same one.
 */
export type AcmeModule = typeof import('acme-client');

export function loadAcme(): Promise<AcmeModule> {
  return import('acme-client');
}

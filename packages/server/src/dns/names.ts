/** Name handling shared by the adapters: providers disagree on case, trailing dots and relative names. */

/** Lower case, no trailing dot: the one form names are compared and returned in. */
export function normalizeName(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

/**
 * Zones that could host a name, longest first: `a.b.example.com` → `a.b.example.com`, `b.example.com`,
 * `example.com`. The name itself is included (a delegated `_acme-challenge` zone is a real pattern);
 * single labels are not, as no account hosts a top-level domain.
 */
export function candidateZones(fqdn: string): string[] {
  const labels = normalizeName(fqdn).split('.');
  const out: string[] = [];
  for (let i = 0; i < labels.length - 1; i++) out.push(labels.slice(i).join('.'));
  return out;
}

/** The longest of the given zones that contains the name, or undefined. */
export function longestZone(fqdn: string, zones: Iterable<string>): string | undefined {
  const hosted = new Set([...zones].map(normalizeName));
  return candidateZones(fqdn).find((zone) => hosted.has(zone));
}

/** The name relative to its zone: `_acme-challenge.example.com` in `example.com` → `_acme-challenge`; the apex → ''. */
export function relativeName(fqdn: string, zone: string): string {
  const name = normalizeName(fqdn);
  const z = normalizeName(zone);
  if (name === z) return '';
  if (!name.endsWith(`.${z}`)) throw new Error(`${name} is not inside ${z}`);
  return name.slice(0, -(z.length + 1));
}

/** TTL a provider accepts: the requested one (60 s by default, short for challenges) raised to its minimum. */
export function ttlAtLeast(requested: number | undefined, minimum: number): number {
  return Math.max(requested ?? 60, minimum);
}

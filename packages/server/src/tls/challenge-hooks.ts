/**
 * How a challenge answer gets published. Kept abstract so the issuer does not care where:
 * HTTP-01 tokens are served by the site's nginx in production (a test serves them itself), DNS-01
 * TXT records go through a DNS profile's provider (see dns01-provider.ts) or a test's mock DNS.
 */
export interface Http01Hooks {
  /** Serves `keyAuthorization` at http://<domain>/.well-known/acme-challenge/<token>. */
  publish(token: string, keyAuthorization: string): Promise<void>;
  remove(token: string): Promise<void>;
}

/** `H` is whatever setTxt returns to identify the record for removal (a provider's record ref). */
export interface Dns01Hooks<H = unknown> {
  /** Adds a TXT record; `fqdn` is `_acme-challenge.<domain>`, without a trailing dot. */
  setTxt(fqdn: string, value: string): Promise<H>;
  removeTxt(handle: H): Promise<void>;
  /** Resolves once the CA can see the record; without it the CA is asked right away. */
  waitVisible?(fqdn: string, value: string): Promise<void>;
}

/**
 * The Pebble test environment started by scripts/test-env/pebble.sh: ACME directories, the test
 * CA of Pebble's HTTPS, its EAB key, and the mock DNS (pebble-challtestsrv) management API.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';

export const PEBBLE_STATE_DIR = process.env.SITEPLANE_PEBBLE_DIR ?? '/var/lib/siteplane-test/pebble';
export const DIRECTORY_URL = 'https://127.0.0.1:14000/dir';
export const EAB_DIRECTORY_URL = 'https://127.0.0.1:14001/dir';
export const MANAGEMENT_URL = 'https://127.0.0.1:15000';
export const EAB_MANAGEMENT_URL = 'https://127.0.0.1:15001';
/** The mock DNS both Pebbles resolve through; what DNS_RESOLVERS would be in these tests. */
export const MOCK_DNS = '127.0.0.1:8053';
const CHALLTESTSRV = 'http://127.0.0.1:8055';

/** ACME_CA_CERTS for these tests. */
export function pebbleCaPem(): string {
  return readFileSync(join(PEBBLE_STATE_DIR, 'ca.pem'), 'utf8');
}

export function eabCredentials(): { kid: string; hmacKey: string } {
  return JSON.parse(readFileSync(join(PEBBLE_STATE_DIR, 'eab.json'), 'utf8')) as { kid: string; hmacKey: string };
}

/** A fresh label per run, so names never meet state (authorizations, records) of an earlier run. */
export function unique(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

function httpsGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { ca: pebbleCaPem() }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/** The root Pebble issues under (new on every Pebble start), to verify chains against. */
export async function pebbleRoot(managementUrl = MANAGEMENT_URL): Promise<string> {
  const { status, body } = await httpsGet(`${managementUrl}/roots/0`);
  if (status !== 200) throw new Error(`${managementUrl}/roots/0 answered ${status}`);
  return body;
}

/** Fails the suite early, with the fix, when the environment is not running. */
export async function requirePebble(): Promise<void> {
  for (const url of [DIRECTORY_URL, EAB_DIRECTORY_URL]) {
    try {
      await httpsGet(url);
    } catch (error) {
      throw new Error(`Pebble is not reachable at ${url} (${String(error)}); run: bash scripts/test-env/pebble.sh`);
    }
  }
}

async function manage(path: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${CHALLTESTSRV}${path}`, { method: 'POST', body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`challtestsrv ${path} answered ${res.status}`);
}

/** challtestsrv keys TXT records by the fully qualified name with its trailing dot. */
const fqdn = (name: string) => (name.endsWith('.') ? name : `${name}.`);

export const mockDns = {
  addA: (host: string, addresses: string[]) => manage('/add-a', { host: fqdn(host), addresses }),
  clearA: (host: string) => manage('/clear-a', { host: fqdn(host) }),
  addAaaa: (host: string, addresses: string[]) => manage('/add-aaaa', { host: fqdn(host), addresses }),
  clearAaaa: (host: string) => manage('/clear-aaaa', { host: fqdn(host) }),
  setTxt: (host: string, value: string) => manage('/set-txt', { host: fqdn(host), value }),
  clearTxt: (host: string) => manage('/clear-txt', { host: fqdn(host) }),
};

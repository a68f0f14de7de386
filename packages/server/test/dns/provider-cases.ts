/** The four providers as the contract suite sees them: a stand-in, credentials it refuses, and its rate-limit answer. */
import { createServer } from 'node:net';
import { expect } from 'vitest';
import { type DnsCredentials, DnsError, type DnsErrorKind, type DnsProviderName } from '../../src/dns/provider.js';
import { startCloudflareStandin } from '../standins/dns/cloudflare.js';
import { startDigitalOceanStandin } from '../standins/dns/digitalocean.js';
import { startPorkbunStandin } from '../standins/dns/porkbun.js';
import { startRoute53Standin } from '../standins/dns/route53.js';
import type { DnsStandin, StandinOptions } from '../standins/dns/standin-server.js';

export interface ProviderCase<N extends DnsProviderName = DnsProviderName> {
  name: N;
  start(options: StandinOptions): Promise<DnsStandin<DnsCredentials[N]>>;
  /** Credentials of the same shape the stand-in refuses (a wrong secret where there are two parts). */
  wrong(good: DnsCredentials[N]): DnsCredentials[N];
  /** retryAfterSeconds reported when the stand-in rate-limits asking for 7 s: the header where the
   * provider sends one, else the provider's documented one-second window. */
  retryAfter: number;
}

const cases: { [N in DnsProviderName]: ProviderCase<N> } = {
  cloudflare: {
    name: 'cloudflare',
    start: startCloudflareStandin,
    wrong: () => ({ apiToken: 'wrong-cloudflare-token' }),
    retryAfter: 7,
  },
  digitalocean: {
    name: 'digitalocean',
    start: startDigitalOceanStandin,
    wrong: () => ({ token: 'dop_v1_wrong' }),
    retryAfter: 7,
  },
  porkbun: {
    name: 'porkbun',
    start: startPorkbunStandin,
    wrong: (good) => ({ apiKey: good.apiKey, secretApiKey: 'sk1_wrong-secret' }),
    retryAfter: 1,
  },
  aws: {
    name: 'aws',
    start: startRoute53Standin,
    wrong: (good) => ({ accessKeyId: good.accessKeyId, secretAccessKey: 'wrong/secret+key' }),
    retryAfter: 1,
  },
};

export const providerCases = Object.values(cases) as ProviderCase[];

/** Every value of a credentials object, to check no error message carries one. */
export function secretsOf(credentials: object): string[] {
  return Object.values(credentials).filter((v): v is string => typeof v === 'string' && v.length >= 8);
}

/** Awaits a rejection with a DnsError of `kind` whose message names none of `secrets`. */
export async function expectDnsError(promise: Promise<unknown>, kind: DnsErrorKind, secrets: string[]): Promise<DnsError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DnsError);
  const dnsError = error as DnsError;
  expect(dnsError.kind, dnsError.message).toBe(kind);
  for (const secret of secrets) expect(dnsError.message).not.toContain(secret);
  return dnsError;
}

/** An address on 127.0.0.1 where nothing listens: a port just released by a server of our own. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}`;
}

/** Zones that push the ones under test past the first page of any listing (DigitalOcean 200, Porkbun 1000). */
export function fillerZones(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `filler-${String(i).padStart(4, '0')}.test`);
}

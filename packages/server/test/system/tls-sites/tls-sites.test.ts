// Issue 4, tried as a new user would: sites on this machine (connection `local`: nginx on 80/443)
// get certificates from Pebble as Let's Encrypt and as ZeroSSL (EAB), by HTTP-01 through their
// own nginx and by DNS-01 through each DNS provider's adapter talking to its stand-in, whose
// records are mirrored into the mock DNS Pebble resolves with. Needs, as root:
//   bash scripts/test-env/setup.sh && bash scripts/test-env/pebble.sh
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { DnsProviderName } from '../../../src/dns/provider.js';
import { startCloudflareStandin } from '../../standins/dns/cloudflare.js';
import { startDigitalOceanStandin } from '../../standins/dns/digitalocean.js';
import { startPorkbunStandin } from '../../standins/dns/porkbun.js';
import { startRoute53Standin } from '../../standins/dns/route53.js';
import type { DnsStandin } from '../../standins/dns/standin-server.js';
import { EAB_MANAGEMENT_URL, pebbleRoot, requirePebble, unique } from '../tls/pebble.js';
import { customDomainCases } from './custom-domain.cases.js';
import { freeZoneCases } from './free-zone.cases.js';
import { renewalCases } from './renewal.cases.js';
import { type Context, ctx } from './support/context.js';
import { DnsMirror } from './support/dns-mirror.js';
import { requireRoot } from './support/host.js';
import { daemonsBefore, stopDaemonsStartedSince } from './support/local-daemons.js';
import { created, deleteSites } from './support/sites.js';
import { localServer, pebbleEnv, startSuite } from './support/suite.js';
import { wildcardCases } from './wildcard.cases.js';

const PROVIDERS: DnsProviderName[] = ['cloudflare', 'digitalocean', 'porkbun', 'aws'];
let daemons: Awaited<ReturnType<typeof daemonsBefore>> = { nginx: null, fpm: null };

beforeAll(async () => {
  requireRoot();
  await requirePebble();
  daemons = await daemonsBefore();
  const run = unique('t').slice(2);
  const mirrors = Object.fromEntries(PROVIDERS.map((p) => [p, new DnsMirror()])) as Context['mirrors'];
  const zones = Object.fromEntries(PROVIDERS.map((p) => [p, `${p}-${run}.test`])) as Context['zones'];
  const start = {
    cloudflare: startCloudflareStandin,
    digitalocean: startDigitalOceanStandin,
    porkbun: startPorkbunStandin,
    aws: startRoute53Standin,
  };
  const standins = Object.fromEntries(
    await Promise.all(PROVIDERS.map(async (p) => [p, await start[p]({ zones: [zones[p]], onChange: mirrors[p].onChange })])),
  ) as Record<DnsProviderName, DnsStandin<Record<string, string>>>;
  const suite = await startSuite({
    ...pebbleEnv(),
    CLOUDFLARE_API_BASE: standins.cloudflare.url,
    DIGITALOCEAN_API_BASE: standins.digitalocean.url,
    PORKBUN_API_BASE: standins.porkbun.url,
    AWS_ROUTE53_ENDPOINT: standins.aws.url,
  });
  const profiles = {} as Context['profiles'];
  for (const provider of PROVIDERS) {
    const res = await suite.api('POST', '/api/v1/dns-profiles', {
      provider,
      name: `${provider} stand-in`,
      credentials: standins[provider].credentials,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    profiles[provider] = res.body.uuid;
  }
  Object.assign(ctx, {
    suite,
    ids: await localServer(suite, 'sptls'),
    run,
    standins,
    zones,
    profiles,
    mirrors,
    roots: { letsencrypt: await pebbleRoot(), zerossl: await pebbleRoot(EAB_MANAGEMENT_URL) },
  } satisfies Context);
}, 240_000);

afterAll(async () => {
  const problems: string[] = [];
  if (ctx.suite) {
    const mine = created.filter((c) => c.suite === ctx.suite).map((c) => c.uuid);
    problems.push(...(await deleteSites(ctx.suite, mine)));
    await ctx.suite.dispose();
  }
  for (const mirror of Object.values(ctx.mirrors ?? {})) await mirror.clear();
  for (const standin of Object.values(ctx.standins ?? {})) await standin.close();
  await stopDaemonsStartedSince(daemons);
  expect(problems).toEqual([]);
}, 180_000);

describe('TLS sites on this machine', () => {
  customDomainCases();
  wildcardCases();
  freeZoneCases();
  // Last: it moves the clock.
  renewalCases();
});

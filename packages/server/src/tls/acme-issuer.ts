/**
 * Gets a certificate from an ACME CA (Let's Encrypt, ZeroSSL, Pebble in tests) with acme-client.
 *
 * The order is driven step by step rather than with acme-client's `auto()`, because Siteplane
 * needs what auto() does not give: DNS-01 for wildcard names and HTTP-01 for the others in one
 * order, all answers published before any validation (shared TXT names), a DNS check before
 * HTTP-01, and failures classified per step and named by domain.
 */
import type * as acme from 'acme-client';
import { acmeClient, type ExternalAccountBinding, openAccount } from './account.js';
import { loadAcme } from './acme-module.js';
import { type AcmeTransport, withAcmeTransport } from './acme-transport.js';
import {
  authorizationName,
  type ChallengeType,
  normaliseCertificateNames,
  type PlannedName,
  planChallenges,
} from './certificate-names.js';
import type { Dns01Hooks, Http01Hooks } from './challenge-hooks.js';
import { ChallengeSession, type PublishedChallenge } from './challenge-session.js';
import { type AcmeStep, classifyAcmeFailure } from './classify-error.js';
import { TlsError } from './errors.js';
import { splitCertificates } from './pem.js';
import { parseCertificate } from './renewal.js';
import { assertResolvesTo } from './resolves-to.js';

export interface IssueCertificateOptions<H = unknown> {
  directoryUrl: string;
  /** The team's account key with this CA (see ensureAccount); the account is found by it. */
  accountKeyPem: string;
  email?: string;
  externalAccountBinding?: ExternalAccountBinding;
  /** Names to cover: `example.com`, `*.example.com`, `www.example.com` (see siteCertificateNames). */
  domains: string[];
  /** For the names that are not wildcards; wildcards always use DNS-01. */
  challenge: ChallengeType;
  http01?: Http01Hooks;
  dns01?: Dns01Hooks<H>;
  /**
   * Before HTTP-01, every HTTP-01 name must resolve to one of these addresses (the server's IPs)
   * through `resolvers` (DNS_RESOLVERS) or the system's. Leave it out when a proxy or CDN sits in
   * front of the server, where the names rightly resolve elsewhere.
   */
  pointsTo?: { addresses: string[]; resolvers?: string[] };
  /** ACME_CA_CERTS: extra CA bundle trusted for the CA's own HTTPS. */
  caCertsPem?: string;
  /** The certificate's key; ECDSA P-256 unless a client needs RSA. */
  keyType?: 'ecdsa' | 'rsa';
  /** First wait between status polls (default 2 s). */
  pollIntervalMs?: number;
  /** Retries per request after a network error or 5xx (default 1). */
  retries?: number;
  /** Progress lines for the operation log; never contain keys. */
  log?(line: string): void;
  /** acme-client's debug lines. */
  trace?(line: string): void;
}

export interface IssuedCertificate {
  /** The leaf certificate. */
  certificatePem: string;
  /** The intermediates, leaf excluded. */
  chainPem: string;
  /** Leaf then intermediates: what nginx's `ssl_certificate` wants. */
  fullChainPem: string;
  /** The certificate's private key; store it encrypted, never log it. */
  privateKeyPem: string;
  expiresAt: Date;
  /** Names in the issued certificate. */
  domains: string[];
  accountUrl: string;
  /** Challenge records or tokens that could not be removed afterwards. */
  leftovers: string[];
}

/** Runs one ACME step; its failure becomes a TlsError about `domain`. */
async function step<T>(
  transport: AcmeTransport,
  context: { step: AcmeStep; directoryUrl: string; domain?: string; challengeType?: string },
  fn: () => Promise<T>,
): Promise<T> {
  transport.reset();
  try {
    return await fn();
  } catch (error) {
    if (error instanceof TlsError) throw error;
    throw classifyAcmeFailure({ ...context, error, record: transport.record });
  }
}

function checkHooks(plan: readonly PlannedName[], options: IssueCertificateOptions<unknown>): void {
  for (const { name, challenge } of plan) {
    if (challenge === 'http-01' && !options.http01) throw new TypeError(`HTTP-01 for ${name} needs http01 hooks`);
    if (challenge === 'dns-01' && !options.dns01) throw new TypeError(`DNS-01 for ${name} needs dns01 hooks (a DNS profile)`);
  }
}

async function newKeyAndCsr(names: string[], keyType: 'ecdsa' | 'rsa'): Promise<{ keyPem: string; csr: Buffer }> {
  const acme = await loadAcme();
  const key = keyType === 'rsa' ? await acme.crypto.createPrivateRsaKey(2048) : await acme.crypto.createPrivateEcdsaKey('P-256');
  // The subject CN is limited to 64 characters and optional for CAs; SANs carry every name.
  const commonName = names.find((n) => n.length <= 64);
  const [, csr] = await acme.crypto.createCsr({ altNames: names, ...(commonName ? { commonName } : {}) }, key);
  return { keyPem: key.toString(), csr };
}

export async function issueCertificate<H = unknown>(options: IssueCertificateOptions<H>): Promise<IssuedCertificate> {
  const { directoryUrl } = options;
  const log = (line: string) => options.log?.(line);
  const names = normaliseCertificateNames(options.domains);
  const plan = planChallenges(names, options.challenge);
  checkHooks(plan, options as IssueCertificateOptions<unknown>);
  const challengeOf = new Map(plan.map((p) => [p.name, p.challenge]));

  // Before any request to the CA: a wrong DNS record is the user's to fix, and a failed
  // validation would count against the CA's limits.
  if (options.pointsTo) {
    const { addresses, resolvers } = options.pointsTo;
    const httpNames = plan.filter((p) => p.challenge === 'http-01').map((p) => p.name);
    await Promise.all(httpNames.map((name) => assertResolvesTo(name, addresses, resolvers ? { resolvers } : {})));
  }

  return withAcmeTransport(options, async (transport) => {
    const client = await acmeClient(options);
    const { accountUrl } = await openAccount(client, transport, options);
    const about = names.join(', ');
    log(`Ordering a certificate for ${about} from ${directoryUrl}`);
    const order = await step(transport, { step: 'order', directoryUrl, domain: about }, () =>
      client.createOrder({ identifiers: names.map((value) => ({ type: 'dns', value })) }),
    );
    const authorizations = await step(transport, { step: 'order', directoryUrl, domain: about }, () =>
      client.getAuthorizations(order),
    );

    const session = new ChallengeSession<H>({ http01: options.http01, dns01: options.dns01 }, log);
    const pending: PublishedChallenge[] = [];
    // Authorizations whose challenge went to the CA: the CA decides those; the others are given back.
    const submitted = new Set<string>();
    try {
      for (const authz of authorizations) {
        const name = authorizationName(authz);
        if (authz.status === 'valid') {
          log(`${name} is already validated with this account`);
          continue;
        }
        const type = challengeOf.get(name) ?? (authz.wildcard ? 'dns-01' : options.challenge);
        const challenge = authz.challenges.find((c) => c.type === type);
        if (!challenge) {
          throw new TlsError('challenge_failed', `The CA offers no ${type} challenge for ${name}.`, { domain: name });
        }
        const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
        pending.push(await session.publish(name, type, challenge, keyAuthorization, authz.url));
      }
      await session.waitVisible(pending);

      for (const { name, type, challenge, authorizationUrl } of pending) {
        await step(transport, { step: 'challenge', directoryUrl, domain: name, challengeType: type }, () =>
          client.completeChallenge(challenge as Parameters<acme.Client['completeChallenge']>[0]),
        );
        submitted.add(authorizationUrl);
      }
      for (const { name, type, challenge } of pending) {
        log(`Waiting for the CA to validate ${name} (${type})`);
        await step(transport, { step: 'challenge', directoryUrl, domain: name, challengeType: type }, () =>
          client.waitForValidStatus(challenge),
        );
        log(`${name} validated`);
      }

      const { keyPem, csr } = await newKeyAndCsr(names, options.keyType ?? 'ecdsa');
      const finalized = await step(transport, { step: 'finalize', directoryUrl, domain: about }, () =>
        client.finalizeOrder(order, csr),
      );
      const fullChainPem = await step(transport, { step: 'finalize', directoryUrl, domain: about }, () =>
        client.getCertificate(finalized),
      );
      const [certificatePem, ...intermediates] = splitCertificates(fullChainPem);
      if (!certificatePem) throw new TlsError('challenge_failed', `The CA sent no certificate for ${about}.`, { domain: about });
      const facts = parseCertificate(certificatePem);
      log(`Certificate issued for ${facts.domains.join(', ')}, valid until ${facts.notAfter.toISOString()}`);
      const leftovers = await session.cleanup();
      return {
        certificatePem,
        chainPem: intermediates.join(''),
        fullChainPem: [certificatePem, ...intermediates].join(''),
        privateKeyPem: keyPem,
        expiresAt: facts.notAfter,
        domains: facts.domains,
        accountUrl,
        leftovers,
      };
    } catch (error) {
      // Pending authorizations count against the CA's limits until they expire; give back the
      // ones whose challenge was never submitted.
      for (const authz of authorizations.filter((a) => a.status === 'pending' && !submitted.has(a.url))) {
        await client.deactivateAuthorization(authz).catch(() => undefined);
      }
      const leftovers = await session.cleanup();
      if (error instanceof TlsError && leftovers.length > 0) error.details.leftovers = leftovers;
      throw error;
    }
  });
}

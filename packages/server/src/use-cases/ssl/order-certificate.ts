/**
 * One order at the CA for a plan: the owner's account key, DNS-01 through a verified DNS profile,
 * HTTP-01 through the hooks the caller gives (the site's nginx) after the "points here?" check.
 */

import { issueCertificate } from '../../tls/acme-issuer.js';
import type { CertificatePlan } from '../../tls/certificate-plan.js';
import type { Http01Hooks } from '../../tls/challenge-hooks.js';
import { dns01HooksFor } from '../../tls/dns01-provider.js';
import { TlsError } from '../../tls/errors.js';
import { parseCertificate } from '../../tls/renewal.js';
import { accountKey, recordAccountUrl } from './acme-accounts.js';
import type { CertificateMaterial } from './certificate-store.js';
import { verifiedProfile } from './profile-provider.js';
import type { SslDeps } from './tls-settings.js';

export interface OrderRequest {
  plan: CertificatePlan;
  http01?: Http01Hooks;
  /** The server's addresses: every HTTP-01 name must resolve to these (DNS_RESOLVERS). */
  serverAddresses: string[];
  log(line: string): void;
}

export interface OrderedCertificate extends CertificateMaterial {
  serial: string;
  notBefore: Date;
  expiresAt: Date;
  names: string[];
}

export async function orderCertificate(deps: SslDeps, request: OrderRequest): Promise<OrderedCertificate> {
  const { plan, log } = request;
  const { settings } = deps;
  const directoryUrl = settings.directories[plan.ca];
  const account = await accountKey(deps.db, deps.secrets, plan.owner, directoryUrl, plan.email, deps.clock.now());

  let dns01: ReturnType<typeof dns01HooksFor> | undefined;
  if (plan.challenge === 'dns-01' || plan.names.some((name) => name.startsWith('*.'))) {
    if (!plan.dnsProfile)
      throw new TlsError('dns_provider_failed', `${plan.names[0]} needs DNS-01 but the site has no DNS profile.`);
    const profile = await verifiedProfile(deps, plan.dnsProfile, log);
    dns01 = dns01HooksFor(profile.dns, {
      resolvers: settings.resolvers,
      ...(settings.txtIntervalMs ? { intervalMs: settings.txtIntervalMs } : {}),
      ...(settings.txtVisibleWithinMs ? { visibleWithinMs: settings.txtVisibleWithinMs } : {}),
    });
  }
  const eab = plan.ca === 'zerossl' ? settings.zerosslEab : null;
  const resolvers = settings.resolvers.length > 0 ? { resolvers: settings.resolvers } : {};

  const issued = await issueCertificate({
    directoryUrl,
    accountKeyPem: account.accountKeyPem,
    ...(plan.email ? { email: plan.email } : {}),
    ...(eab ? { externalAccountBinding: eab } : {}),
    domains: plan.names,
    challenge: plan.challenge,
    ...(request.http01 ? { http01: request.http01 } : {}),
    ...(dns01 ? { dns01 } : {}),
    ...(plan.challenge === 'http-01' ? { pointsTo: { addresses: request.serverAddresses, ...resolvers } } : {}),
    ...(settings.caCertsPem ? { caCertsPem: settings.caCertsPem } : {}),
    ...(settings.pollIntervalMs ? { pollIntervalMs: settings.pollIntervalMs } : {}),
    log,
  }).catch((error: unknown) => {
    throw plan.ca === 'zerossl' ? withEabHint(error, eab !== null) : error;
  });

  await recordAccountUrl(deps.db, account, issued.accountUrl, deps.clock.now());
  for (const leftover of issued.leftovers) log(`Could not remove ${leftover}; remove it by hand`);
  const facts = parseCertificate(issued.certificatePem);
  return {
    fullChainPem: issued.fullChainPem,
    privateKeyPem: issued.privateKeyPem,
    serial: facts.serialNumber,
    notBefore: facts.notBefore,
    expiresAt: issued.expiresAt,
    names: issued.domains,
  };
}

const EAB_REQUIRED = 'urn:ietf:params:acme:error:externalAccountRequired';

/** ZeroSSL without EAB settings: say which settings are missing, not only what the CA wants. */
function withEabHint(error: unknown, configured: boolean): unknown {
  if (!(error instanceof TlsError) || error.kind !== 'account_failed') return error;
  const hint = configured
    ? ' Check ZEROSSL_EAB_KID and ZEROSSL_EAB_HMAC_KEY: the CA did not accept them.'
    : ' Set ZEROSSL_EAB_KID and ZEROSSL_EAB_HMAC_KEY (ZeroSSL dashboard → Developer → EAB credentials) and retry.';
  if (!configured && error.details.acmeProblem !== EAB_REQUIRED) return error;
  return new TlsError(error.kind, `${error.message}${hint}`, error.details);
}

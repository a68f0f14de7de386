import { DNS_PROVIDERS, type SiteTypeSpec, SSL_PROVIDERS } from '@siteplane/contract';
import { type FieldErrors, isPlainObject, UUID_RE } from '../field-errors.js';
import { hostnameProblem, normaliseHostname } from '../hostnames.js';
import type { CreateSiteContext } from './create-site-context.js';
import type { SslPlan } from './create-site-input.js';

/** Fields that must be absent when a temporary domain is requested (spec §4.1 rule 3, §7). */
export const FREE_DOMAIN_EXCLUDED = ['domain', 'ssl', 'sslEmail', 'sslProvider', 'wildcard', 'dnsProfile'] as const;

const EMAIL = /^[^\s@<>()"',;]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,63}$/;

export function validateDomainAndSsl(
  errors: FieldErrors,
  body: Record<string, unknown>,
  spec: SiteTypeSpec | undefined,
  ctx: CreateSiteContext,
): { freeDomain: boolean; domain: string | null; ssl: SslPlan } {
  const freeDomain = body.freeDomain;
  if (freeDomain !== undefined && typeof freeDomain !== 'boolean') {
    errors.add('freeDomain', 'invalid_type', 'freeDomain must be a boolean.');
  }
  if (body.includeWwwSslCert !== undefined && typeof body.includeWwwSslCert !== 'boolean') {
    errors.add('includeWwwSslCert', 'invalid_type', 'includeWwwSslCert must be a boolean.');
  }
  if (freeDomain === true) {
    for (const field of FREE_DOMAIN_EXCLUDED) {
      if (body[field] !== undefined) {
        errors.add(field, 'not_allowed_with_free_domain', `${field} must be omitted when freeDomain is true.`);
      }
    }
    if (body.includeWwwSslCert === true) {
      errors.add('includeWwwSslCert', 'requires_wildcard', 'includeWwwSslCert applies to wildcard certificates only.');
    }
    // A temporary domain always gets its certificate (spec §4.1 rule 3).
    const ssl: SslPlan = {
      enabled: true,
      provider: 'letsencrypt',
      email: null,
      wildcard: false,
      includeWww: false,
      dnsProfile: null,
    };
    return { freeDomain: true, domain: null, ssl };
  }

  const domain = checkDomain(errors, body.domain, ctx);
  const sslEnabled = body.ssl;
  if (sslEnabled === undefined) errors.add('ssl', 'required', 'ssl is required with a custom domain.');
  else if (typeof sslEnabled !== 'boolean') errors.add('ssl', 'invalid_type', 'ssl must be a boolean.');

  let provider: SslPlan['provider'] = null;
  if (body.sslProvider !== undefined) {
    if (typeof body.sslProvider !== 'string' || !(SSL_PROVIDERS as readonly string[]).includes(body.sslProvider)) {
      errors.add('sslProvider', 'invalid_value', `sslProvider must be one of: ${SSL_PROVIDERS.join(', ')}.`);
    } else provider = body.sslProvider as SslPlan['provider'];
  } else if (sslEnabled === true) {
    errors.add('sslProvider', 'required', 'sslProvider is required when ssl is true.');
  }

  let email: string | null = null;
  if (body.sslEmail !== undefined) {
    if (typeof body.sslEmail !== 'string' || !EMAIL.test(body.sslEmail)) {
      errors.add('sslEmail', 'invalid_format', 'sslEmail must be an e-mail address.');
    } else email = body.sslEmail;
  } else if (sslEnabled === true) {
    errors.add('sslEmail', 'required', 'sslEmail is required when ssl is true.');
  }

  const wildcard = body.wildcard;
  let dnsProfile: SslPlan['dnsProfile'] = null;
  if (wildcard !== undefined && typeof wildcard !== 'boolean') {
    errors.add('wildcard', 'invalid_type', 'wildcard must be a boolean.');
  }
  if (wildcard === true) {
    if (spec && !spec.wildcardAllowed) {
      errors.add('wildcard', 'wildcard_not_allowed_for_type', `${spec.displayName} sites cannot have a wildcard.`);
    }
    if (sslEnabled === false) errors.add('wildcard', 'requires_ssl', 'A wildcard certificate needs ssl true.');
    dnsProfile = checkDnsProfile(errors, body.dnsProfile, ctx);
  } else if (body.dnsProfile !== undefined) {
    errors.add('dnsProfile', 'requires_wildcard', 'dnsProfile is used with wildcard true only.');
  }
  if (body.includeWwwSslCert === true && wildcard !== true) {
    errors.add('includeWwwSslCert', 'requires_wildcard', 'includeWwwSslCert applies to wildcard certificates only.');
  }
  return {
    freeDomain: false,
    domain,
    ssl: {
      enabled: sslEnabled === true,
      provider: sslEnabled === true ? provider : null,
      email: sslEnabled === true ? email : null,
      wildcard: wildcard === true,
      includeWww: body.includeWwwSslCert === true,
      dnsProfile,
    },
  };
}

function checkDomain(errors: FieldErrors, value: unknown, ctx: CreateSiteContext): string | null {
  if (value === undefined || value === null) {
    errors.add('domain', 'required', 'domain is required unless freeDomain is true.');
    return null;
  }
  if (typeof value !== 'string') {
    errors.add('domain', 'invalid_type', 'domain must be a string.');
    return null;
  }
  const domain = normaliseHostname(value);
  const problem = hostnameProblem(domain);
  if (problem) {
    errors.add('domain', 'invalid_format', `domain ${problem}.`);
    return null;
  }
  if (ctx.taken.domains.has(domain)) errors.add('domain', 'domain_taken', 'A site with this domain exists on the server.');
  return domain;
}

function checkDnsProfile(errors: FieldErrors, value: unknown, ctx: CreateSiteContext): SslPlan['dnsProfile'] {
  if (value === undefined) {
    errors.add('dnsProfile', 'required', 'dnsProfile is required when wildcard is true.');
    return null;
  }
  if (!isPlainObject(value)) {
    errors.add('dnsProfile', 'invalid_type', 'dnsProfile must be an object with uuid and provider.');
    return null;
  }
  for (const key of Object.keys(value)) {
    if (key !== 'uuid' && key !== 'provider')
      errors.add(`dnsProfile.${key}`, 'unknown_field', `"${key}" is not a field of dnsProfile.`);
  }
  let ok = true;
  if (typeof value.uuid !== 'string' || !UUID_RE.test(value.uuid)) {
    errors.add('dnsProfile.uuid', value.uuid === undefined ? 'required' : 'invalid_format', 'dnsProfile.uuid must be a UUID.');
    ok = false;
  }
  if (typeof value.provider !== 'string' || !(DNS_PROVIDERS as readonly string[]).includes(value.provider)) {
    errors.add(
      'dnsProfile.provider',
      value.provider === undefined ? 'required' : 'invalid_value',
      `dnsProfile.provider must be one of: ${DNS_PROVIDERS.join(', ')}.`,
    );
    ok = false;
  }
  if (!ok) return null;
  const uuid = (value.uuid as string).toLowerCase();
  const provider = value.provider as string;
  if (ctx.dnsProfile === null || ctx.dnsProfile === undefined) {
    errors.add('dnsProfile.uuid', 'not_found', 'No such DNS profile.');
  } else if (ctx.dnsProfile.provider !== provider) {
    errors.add('dnsProfile.provider', 'provider_mismatch', `The DNS profile is a ${ctx.dnsProfile.provider} profile.`);
  }
  return { uuid, provider };
}

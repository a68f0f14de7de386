/**
 * A provider's failure keeps its meaning through the API: never an empty list, each kind its own
 * stable code (statuses in http/problem.ts).
 *
 * While a request runs against a stored profile:
 *   auth_failed    → provider_auth_failed  (424: the profile's token must be replaced)
 *   rate_limited   → provider_rate_limited (429, Retry-After = the provider's reset)
 *   unreachable    → provider_unreachable  (503)
 *   not_found      → repository_not_found  (404) for one repository
 *   provider_error → provider_error        (502)
 *   target_not_allowed → target_not_allowed (422: the baseUrl or remote resolves where the egress policy refuses)
 * At creation the body is what is wrong when the provider rejects it, so those answers are 422 on
 * the field to fix (see creationError).
 */
import type { FieldError } from '@siteplane/contract';
import { DomainError } from '../../domain/errors.js';
import { ValidationError } from '../../domain/field-errors.js';
import { VcsError, type VcsProviderName, VcsRemotesError } from '../../vcs/provider.js';

/**
 * Retry-After when the provider's 429 does not say (Bitbucket Cloud documents none): a minute, so
 * a client waits instead of spending the rest of the hour's budget.
 */
export const DEFAULT_RETRY_AFTER_SECONDS = 60;

/** `subject` is what was asked: a listing has no single repository to be missing. */
export function vcsDomainError(error: unknown, subject: 'list' | 'repository' | 'check'): DomainError {
  if (!(error instanceof VcsError)) throw error; // a bug in our own code: logged as a 500, not dressed up
  switch (error.kind) {
    case 'auth_failed':
      return new DomainError('provider_auth_failed', error.message);
    case 'rate_limited':
      return new DomainError('provider_rate_limited', error.message, {
        retryAfterSeconds: error.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS,
      });
    case 'unreachable':
      return new DomainError('provider_unreachable', error.message);
    case 'not_found':
      return new DomainError(subject === 'repository' ? 'repository_not_found' : 'provider_error', error.message);
    case 'provider_error':
      return new DomainError('provider_error', error.message);
    case 'target_not_allowed':
      return new DomainError('target_not_allowed', error.message);
  }
}

/**
 * The answer to a failed credential check at creation: a 422 naming the field to fix when the
 * provider refused what the body gave (the token, the base URL, a git remote), else the failure's
 * own code. For git profiles every refused remote is listed; if none was refused but some could
 * not be checked (unreachable), that failure answers.
 */
export function creationError(error: unknown, provider: VcsProviderName, baseUrlGiven: boolean): Error {
  if (!(error instanceof VcsError)) throw error;
  const fields: FieldError[] = [];
  if (provider === 'git') {
    const failures = error instanceof VcsRemotesError ? error.failures : [error];
    for (const failure of failures) {
      if (failure.remoteIndex === undefined) continue;
      const field = `repositories.${failure.remoteIndex}`;
      if (failure.kind === 'auth_failed') fields.push({ field, code: 'provider_auth_failed', message: failure.message });
      if (failure.kind === 'not_found') fields.push({ field, code: 'repository_not_found', message: failure.message });
      if (failure.kind === 'target_not_allowed') fields.push({ field, code: 'target_not_allowed', message: failure.message });
    }
  } else if (error.kind === 'target_not_allowed') {
    // The provider's default root is public; only a baseUrl can point elsewhere.
    fields.push({ field: baseUrlGiven ? 'baseUrl' : 'provider', code: 'target_not_allowed', message: error.message });
  } else if (error.kind === 'auth_failed') {
    fields.push({ field: 'token', code: 'provider_auth_failed', message: error.message });
  } else if (error.kind === 'not_found' && baseUrlGiven) {
    // The user endpoint every provider has is missing: the address is not that provider's API.
    fields.push({ field: 'baseUrl', code: 'invalid_value', message: `No ${provider} API answers here: ${error.message}` });
  }
  return fields.length > 0 ? new ValidationError(fields) : vcsDomainError(error, 'check');
}

import { DomainError } from '../../domain/errors.js';
import { VcsError } from '../../vcs/provider.js';

/** A provider's failure keeps its meaning: never an empty list, each kind its own code. */
export function vcsDomainError(error: unknown): DomainError {
  if (!(error instanceof VcsError)) return new DomainError('upstream_error', `The provider failed: ${(error as Error).message}`);
  const code = (
    {
      auth_failed: 'upstream_auth_failed',
      rate_limited: 'upstream_rate_limited',
      unreachable: 'upstream_unavailable',
      not_found: 'upstream_not_found',
      provider_error: 'upstream_error',
    } as const
  )[error.kind];
  return new DomainError(
    code,
    error.message,
    error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {},
  );
}

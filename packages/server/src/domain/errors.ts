import type { ErrorCode } from '@siteplane/contract';

/** An error with a stable code; http/ maps the code to a status. Messages are safe to show. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (what: string): DomainError => new DomainError('not_found', `${what} not found.`);

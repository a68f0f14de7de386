import { DomainError } from '../errors.js';

/** A create or delete operation of the site, as the retry rule sees it. */
export interface PastOperation {
  uuid: string;
  kind: string;
  status: string;
  params: Record<string, unknown>;
}

export type RetryDecision =
  /** A retry is already queued or running: answer with it instead of queueing a second job. */
  | { action: 'answer'; operation: string }
  | { action: 'enqueue'; kind: 'create' | 'delete'; params: Record<string, unknown>; status: 'pending' | 'deleting' };

/**
 * POST /api/v1/sites/<uuid>/retry (issue 3 item 7): a `failed` site runs its create again, a
 * `delete_failed` one its delete, with the deleteDatabase the failed delete was given (the client
 * asked for it once; a retry must not quietly keep or drop a database). The recipe's steps check
 * before they change, so the new operation redoes nothing that already succeeded.
 *
 * `operations` are the site's create and delete operations, oldest first; `failedOperation` is the
 * one the site's `failure` names (kept until a later operation of the site succeeds). Repeating the
 * request while its operation is open answers with that operation: retrying is idempotent.
 */
export function decideRetry(
  site: { status: string; failedOperation: string | null },
  operations: readonly PastOperation[],
): RetryDecision {
  const open = latest(operations, (o) => o.status === 'queued' || o.status === 'running');
  if (open) {
    const failed = operations.find((o) => o.uuid === site.failedOperation);
    // Open after a failure of its own kind: it is that failure's retry (by this endpoint or a DELETE again).
    if (failed && failed.kind === open.kind) return { action: 'answer', operation: open.uuid };
    throw new DomainError(
      'conflict',
      `The site is ${site.status}; its ${open.kind} has not failed, so there is nothing to retry.`,
    );
  }
  if (site.status === 'failed') return { action: 'enqueue', kind: 'create', params: {}, status: 'pending' };
  if (site.status === 'delete_failed') {
    const failedDelete = latest(operations, (o) => o.kind === 'delete');
    const deleteDatabase = failedDelete?.params.deleteDatabase === true;
    return { action: 'enqueue', kind: 'delete', params: { deleteDatabase }, status: 'deleting' };
  }
  throw new DomainError('conflict', `The site is ${site.status}; only a failed create or delete can be retried.`);
}

function latest(operations: readonly PastOperation[], matches: (o: PastOperation) => boolean): PastOperation | undefined {
  for (let i = operations.length - 1; i >= 0; i--) {
    const op = operations[i] as PastOperation;
    if (matches(op)) return op;
  }
  return undefined;
}

// Issue 3 item 7: which operation POST /api/v1/sites/<uuid>/retry runs, decided without storage.
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { decideRetry, type PastOperation } from '../../src/domain/sites/retry-rule.js';

const op = (uuid: string, kind: string, status: string, params: Record<string, unknown> = {}): PastOperation => ({
  uuid,
  kind,
  status,
  params,
});

describe('retry rule (issue 3 item 7)', () => {
  it('a failed create runs again as a create; the site is pending', () => {
    expect(decideRetry({ status: 'failed', failedOperation: 'c1' }, [op('c1', 'create', 'failed')])).toEqual({
      action: 'enqueue',
      kind: 'create',
      params: {},
      status: 'pending',
    });
  });

  it('a failed delete runs again with the deleteDatabase of the latest delete', () => {
    const ops = [
      op('c1', 'create', 'succeeded'),
      op('d1', 'delete', 'failed'),
      op('d2', 'delete', 'failed', { deleteDatabase: true }),
    ];
    expect(decideRetry({ status: 'delete_failed', failedOperation: 'd2' }, ops)).toEqual({
      action: 'enqueue',
      kind: 'delete',
      params: { deleteDatabase: true },
      status: 'deleting',
    });
    expect(
      decideRetry({ status: 'delete_failed', failedOperation: 'd1' }, [op('d1', 'delete', 'failed', { deleteDatabase: false })]),
    ).toMatchObject({ params: { deleteDatabase: false } });
  });

  it('a retry already open is answered, never queued twice (create, and a delete retried by DELETE)', () => {
    const ops = [op('c1', 'create', 'failed'), op('c2', 'create', 'queued')];
    expect(decideRetry({ status: 'pending', failedOperation: 'c1' }, ops)).toEqual({ action: 'answer', operation: 'c2' });
    const deletes = [op('c1', 'create', 'succeeded'), op('d1', 'delete', 'failed'), op('d2', 'delete', 'running')];
    expect(decideRetry({ status: 'deleting', failedOperation: 'd1' }, deletes)).toEqual({ action: 'answer', operation: 'd2' });
  });

  it('nothing to retry is a conflict naming the status', () => {
    const cases: [string, string | null, PastOperation[]][] = [
      ['installed', null, [op('c1', 'create', 'succeeded')]],
      ['pending', null, [op('c1', 'create', 'queued')]],
      ['installing', null, [op('c1', 'create', 'running')]],
      ['deleting', null, [op('c1', 'create', 'succeeded'), op('d1', 'delete', 'queued')]],
      // A failed site being deleted: the open delete is not a retry of the failed create.
      ['deleting', 'c1', [op('c1', 'create', 'failed'), op('d1', 'delete', 'running')]],
    ];
    for (const [status, failedOperation, ops] of cases) {
      let error: unknown;
      try {
        decideRetry({ status, failedOperation }, ops);
      } catch (e) {
        error = e;
      }
      expect(error, status).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe('conflict');
      expect((error as DomainError).message).toContain(`The site is ${status}`);
    }
  });
});

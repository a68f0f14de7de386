import { FieldErrors, isPlainObject, ValidationError } from '../../domain/field-errors.js';
import { isBranchName } from '../../domain/webhooks/push-reading.js';

/** The optional `{branch?, commit?}` of a trigger URL's POST; every violation at once, with its path. */
export function readTriggerBody(payload: unknown): { branch: string | null; commit: string | null } {
  if (!isPlainObject(payload))
    throw new ValidationError([{ field: 'body', code: 'invalid_type', message: 'The body must be a JSON object or empty.' }]);
  const errors = new FieldErrors();
  for (const key of Object.keys(payload)) {
    if (key !== 'branch' && key !== 'commit') errors.add(key, 'unknown_field', 'Only branch and commit are accepted.');
  }
  const { branch, commit } = payload;
  if (branch !== undefined && (typeof branch !== 'string' || !isBranchName(branch)))
    errors.add('branch', typeof branch === 'string' ? 'invalid_format' : 'invalid_type', 'branch must be a branch name.');
  if (commit !== undefined && (typeof commit !== 'string' || !/^[0-9a-fA-F]{7,64}$/.test(commit)))
    errors.add('commit', typeof commit === 'string' ? 'invalid_format' : 'invalid_type', 'commit must be 7-64 hex digits.');
  if (!errors.empty) throw new ValidationError(errors.list);
  return {
    branch: typeof branch === 'string' ? branch : null,
    commit: typeof commit === 'string' ? commit.toLowerCase() : null,
  };
}

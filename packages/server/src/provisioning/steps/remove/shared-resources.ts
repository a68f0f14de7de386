import type { LedgerEntry, StepContext } from '../../step.js';

/**
 * The job runner knows every site's ledger, so it can tell whether a resource this site shares —
 * its user's PHP-FPM pool — is still listed by another live site of the server. Steps use it when
 * present and otherwise fall back to what the server shows (see remove-php-fpm-pool.ts); either
 * saying "in use" keeps it.
 */
export type SharedResourceQuery = Required<Pick<StepContext, 'sharedResourceInUse'>>;

export async function sharedResourceInUse(
  ctx: StepContext,
  entry: Pick<LedgerEntry, 'kind' | 'ref'>,
): Promise<boolean | undefined> {
  return ctx.sharedResourceInUse ? ctx.sharedResourceInUse(entry) : undefined;
}

import type { LedgerEntry, StepContext } from '../step.js';
import { StepError } from './commands.js';

/**
 * Ledger discipline shared by the steps. An entry is recorded BEFORE the resource is created, so a
 * job that dies half-way still lists it and removal (which accepts "already gone") cleans it up.
 * A resource that exists but is not in this site's ledger belongs to someone else: steps refuse to
 * adopt it, so deleting this site can never remove another's files or database.
 */
export async function findEntry(ctx: StepContext, kind: LedgerEntry['kind'], ref: string): Promise<LedgerEntry | undefined> {
  const entries = await ctx.ledger.list();
  return entries.find((entry) => entry.kind === kind && entry.ref === ref);
}

/** Records the entry unless this site's ledger already has it (kind + ref). */
export async function recordOnce(ctx: StepContext, entry: LedgerEntry): Promise<void> {
  if (await findEntry(ctx, entry.kind, entry.ref)) return;
  await ctx.ledger.record(entry);
}

/**
 * Before creating a resource: when it already exists it must be this site's (a resumed job), else
 * the step stops with a conflict naming it.
 */
export async function claim(ctx: StepContext, entry: LedgerEntry, exists: boolean, what: string): Promise<'resume' | 'new'> {
  const mine = await findEntry(ctx, entry.kind, entry.ref);
  if (exists && !mine) {
    throw new StepError(
      `${what} ${entry.ref} already exists on the server and does not belong to this site; remove it or choose another name`,
    );
  }
  if (!mine) await ctx.ledger.record(entry);
  return exists ? 'resume' : 'new';
}

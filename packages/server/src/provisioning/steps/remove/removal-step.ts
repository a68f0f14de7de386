import type { LedgerEntry, Step, StepContext } from '../../step.js';

/**
 * What a remover did with one ledger entry:
 *   removed   gone from the server (or was already): the entry is forgotten
 *   released  this site no longer uses it, others still do (a shared pool): forgotten, left in place
 *   kept      left on the server on purpose (database without deleteDatabase): stays in the ledger
 */
export type Removal = 'removed' | 'released' | 'kept';
export type Remover = (ctx: StepContext, entry: LedgerEntry) => Promise<Removal>;

/**
 * A removal step: walks the ledger in reverse (newest first) and hands each entry of its kinds to
 * the remover, kind by kind in the order `kinds` lists them (a database before the role that owns
 * it, whatever order entries recorded in the same millisecond come back in). An entry is
 * forgotten only after its removal succeeded, so a failed deletion lists exactly what is left and
 * a retry picks up there. Every remover accepts "already gone".
 */
export function removalStep(name: string, kinds: readonly LedgerEntry['kind'][], remover: Remover): Step {
  return {
    name,
    async run(ctx: StepContext) {
      const newestFirst = (await ctx.ledger.list()).reverse();
      const entries = kinds.flatMap((kind) => newestFirst.filter((entry) => entry.kind === kind));
      for (const entry of entries) {
        const outcome = await remover(ctx, entry);
        if (outcome !== 'kept') await ctx.ledger.forget({ kind: entry.kind, ref: entry.ref });
      }
    },
  };
}

export function detail(entry: LedgerEntry, name: string): unknown {
  return entry.details?.[name];
}

export function stringDetail(entry: LedgerEntry, name: string): string | undefined {
  const value = detail(entry, name);
  return typeof value === 'string' ? value : undefined;
}

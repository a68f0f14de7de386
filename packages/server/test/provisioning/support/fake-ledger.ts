import type { Ledger, LedgerEntry } from '../../../src/provisioning/step.js';

/** The ledger as storage/ledger-store.ts keeps it: (kind, ref) unique, a second record ignored, in record order. */
export class FakeLedger implements Ledger {
  readonly entries: LedgerEntry[] = [];
  records = 0;

  async record(entry: LedgerEntry): Promise<void> {
    this.records++;
    if (this.entries.some((e) => e.kind === entry.kind && e.ref === entry.ref)) return;
    this.entries.push(structuredClone(entry));
  }

  async forget(entry: Pick<LedgerEntry, 'kind' | 'ref'>): Promise<void> {
    const index = this.entries.findIndex((e) => e.kind === entry.kind && e.ref === entry.ref);
    if (index >= 0) this.entries.splice(index, 1);
  }

  async list(): Promise<LedgerEntry[]> {
    return structuredClone(this.entries);
  }
}

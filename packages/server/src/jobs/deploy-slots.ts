import type { NamedLocks } from './server-locks.js';

/**
 * At most `slots` deployments run their steps on one server at once (SITEPLANE_DEPLOYS_PER_SERVER):
 * builds compete for a small server's CPU and memory with the sites it serves. Each slot is a named
 * lock, so the bound holds across worker processes on PostgreSQL too (advisory locks); within a
 * process a deployment takes the slot with the fewest holders and waiters, so with N slots N
 * deployments run at once here. Other processes choose their slots on their own: the bound holds,
 * a deployment may wait behind another's slot while one is free.
 */
export class DeploySlots {
  private readonly use = new Map<string, number[]>();

  constructor(
    private readonly locks: NamedLocks,
    readonly slots: number,
  ) {}

  async run<T>(serverUuid: string, fn: () => Promise<T>): Promise<T> {
    const counts = this.use.get(serverUuid) ?? new Array<number>(Math.max(1, this.slots)).fill(0);
    this.use.set(serverUuid, counts);
    const slot = counts.indexOf(Math.min(...counts));
    counts[slot] = (counts[slot] ?? 0) + 1;
    try {
      return await this.locks.withLock(`${serverUuid}:deploy-slot:${slot}`, fn);
    } finally {
      counts[slot] = (counts[slot] ?? 1) - 1;
      if (counts.every((c) => c === 0)) this.use.delete(serverUuid);
    }
  }
}

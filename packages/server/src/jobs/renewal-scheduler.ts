/**
 * Queues certificate renewals in the worker process: every deployed certificate is renewed from
 * 30 days before it expires (tls/renewal.ts), through the same `ssl` operation as the first
 * issuance. The clock is injected, so a test moves time instead of waiting for it.
 *
 * A tick is idempotent and safe in several processes at once: enqueueSsl skips sites that have an
 * ssl operation queued or running. After a failed order the certificate's backoff
 * (next_attempt_at) holds renewals back, unless a newer certificate than the site's is already
 * stored. An order held back by a limit (a temporary name over the zone's budget, or rate-limited
 * by the CA: `certificates.deferred_until`) is queued again once that moment has passed — also
 * for a site that has no certificate yet — and not before.
 */
import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../app/clock.js';
import type { Database } from '../storage/schema.js';
import { enqueueSsl } from '../use-cases/ssl/enqueue-ssl.js';
import { parseSsl } from '../use-cases/ssl/site-ssl-state.js';

export interface RenewalSchedulerDeps {
  db: Kysely<Database>;
  clock: Clock;
  log: Pick<Logger, 'info' | 'error'>;
  /** After a tick queued something: wake the worker, invalidate the servers' site lists. */
  enqueued(serverUuids: string[]): void;
}

/** Once an hour: renewals start 30 days early, so an hour late is never late. */
export const RENEWAL_CHECK_INTERVAL_MS = 3_600_000;

export class RenewalScheduler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly deps: RenewalSchedulerDeps,
    private readonly intervalMs = RENEWAL_CHECK_INTERVAL_MS,
  ) {}

  start(): void {
    if (this.timer) return;
    const run = () => {
      this.running = this.tick().catch((error: unknown) => this.deps.log.error({ err: error }, 'renewal check failed'));
    };
    run();
    this.timer = setInterval(run, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Queues an ssl operation for every installed site whose certificate is due; returns their uuids. */
  async tick(): Promise<string[]> {
    const now = this.deps.clock.now().toISOString();
    // The site's own certificate row: the deployed one, or (a temporary site still on the former
    // zone wildcard, or one without a certificate yet) the one its next order is recorded in.
    const ownScope = sql<string>`${'site:'} || ${sql.ref('s.uuid')}`;
    const due = await this.deps.db
      .selectFrom('site_certificates as d')
      .innerJoin('sites as s', 's.uuid', 'd.site_uuid')
      .innerJoin('certificates as c', 'c.uuid', 'd.certificate_uuid')
      .leftJoin('certificates as own', (join) => join.on('own.scope', '=', ownScope))
      .select([
        's.uuid',
        's.team_uuid',
        's.server_uuid',
        's.ssl',
        'd.serial',
        'c.serial as stored_serial',
        'c.next_attempt_at',
        'own.deferred_until',
      ])
      .where('d.renew_after', '<=', now)
      .where('s.deleted_at', 'is', null)
      .where('s.status', '=', 'installed')
      .orderBy('d.renew_after')
      .execute();
    const deferred = await this.deps.db
      .selectFrom('certificates as own')
      // `site:<uuid>` → `<uuid>`, so each deferred row finds its site by primary key.
      .innerJoin('sites as s', (join) => join.on('s.uuid', '=', sql<string>`substr(${sql.ref('own.scope')}, 6)`))
      .select(['s.uuid', 's.team_uuid', 's.server_uuid', 's.ssl'])
      .where('own.deferred_until', '<=', now)
      .where('own.scope', 'like', 'site:%')
      .where('s.deleted_at', 'is', null)
      .where('s.status', '=', 'installed')
      .orderBy('own.deferred_until')
      .execute();
    const queued: string[] = [];
    const servers = new Set<string>();
    const candidates = [
      ...due.filter((site) => {
        if (site.deferred_until !== null && site.deferred_until > now) return false;
        const newerStored = site.stored_serial !== null && site.stored_serial !== site.serial;
        return newerStored || site.next_attempt_at === null || site.next_attempt_at <= now;
      }),
      ...deferred,
    ];
    for (const site of candidates) {
      if (!parseSsl(site.ssl).enabled) continue;
      const { created } = await this.deps.db
        .transaction()
        .execute((trx) => enqueueSsl(trx, { uuid: site.uuid, team_uuid: site.team_uuid }, 'renewal', now));
      if (!created) continue;
      queued.push(site.uuid);
      servers.add(site.server_uuid);
    }
    if (queued.length > 0) {
      this.deps.log.info({ sites: queued }, `queued ${queued.length} certificate renewal(s)`);
      this.deps.enqueued([...servers]);
    }
    return queued;
  }
}

import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../app/clock.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Actor } from '../domain/auth/actor.js';
import type { IdempotencyScope, IdempotencyStore, Reservation } from '../storage/idempotency-store.js';
import { sendProblem } from './problem.js';

const WINDOW_MS = 24 * 60 * 60 * 1000;
/** How long a reservation outlives its process; extended every third of it while the request runs. */
const LEASE_MS = 60_000;
/** Stored responses older than the window are purged at most this often, in bounded batches. */
const SWEEP_EVERY_MS = 60_000;
const SWEEP_BATCH = 500;
const SWEEP_BATCHES = 20;
const REPLAYED_HEADERS = ['location', 'content-type'];

/**
 * Whose keys a token shares: its account and the exact set of teams it reaches. A team token's
 * keys are its team's; a global token's are those of every team of its account together, as the
 * set stood when the key was used. A key therefore never replays across teams: a team-beta token
 * sending team alpha's key and body runs its own request.
 */
export function idempotencyScope(actor: Actor): IdempotencyScope {
  const teams = [...actor.teamUuids].sort().join(',');
  return { account_uuid: actor.accountUuid, team_set: createHash('sha256').update(teams).digest('hex') };
}

/**
 * Idempotency-Key on POST and DELETE (ARCHITECTURE §2): the same key and body within 24 h returns
 * the first response; the same key with another request is 422 idempotency_key_reused; while the
 * first request runs, 409 idempotency_key_in_progress.
 *
 * The stored response is sealed with the service's secret key, as every secret at rest is: a
 * site create answers with its generated database password once, and the replay must give the
 * client that same answer, so the answer is kept whole and encrypted rather than stripped and
 * patched back from the site's own secrets (which would tie this layer to one route's body).
 *
 * A reservation is leased: extended while its request runs in this process, taken over by the
 * next request with its key once the process died. An answer that asks the client to come back
 * (409, 429, 5xx) is not stored: it frees the key for the retry.
 */
export class IdempotencyKeys {
  private readonly pending = new WeakMap<FastifyRequest, Reservation>();
  private readonly running = new Set<Reservation>();
  private timer: NodeJS.Timeout | null = null;
  private lastSweep = Number.NEGATIVE_INFINITY;
  private sweeping: Promise<void> = Promise.resolve();
  private ticking: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: IdempotencyStore,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
  ) {}

  install(app: FastifyInstance): void {
    app.addHook('onSend', async (req, reply, payload) => {
      await this.record(req, reply, payload);
      return payload;
    });
    app.addHook('onReady', async () => {
      this.timer = setInterval(() => {
        this.ticking = this.tick(app);
      }, LEASE_MS / 3);
      this.timer.unref();
    });
    app.addHook('onClose', async () => {
      if (this.timer) clearInterval(this.timer);
      await this.ticking;
      await this.sweeping;
    });
  }

  /** Returns true when the reply was already sent (a replay, a conflict or a bad key). */
  async apply(req: FastifyRequest, reply: FastifyReply, actor: Actor): Promise<boolean> {
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string' || (req.method !== 'POST' && req.method !== 'DELETE')) return false;
    if (key.length < 1 || key.length > 255) {
      await sendProblem(req, reply, 'validation_failed', 'Idempotency-Key must be 1-255 characters.', [
        { field: 'Idempotency-Key', code: 'invalid_format', message: 'must be 1-255 characters' },
      ]);
      return true;
    }
    const bodyHash = createHash('sha256')
      .update(JSON.stringify(req.body ?? null))
      .digest('hex');
    const path = req.url.split('?')[0] ?? req.url;
    const now = this.clock.now();
    const result = await this.store.reserve(
      { ...idempotencyScope(actor), key, method: req.method, path, body_hash: bodyHash },
      {
        now: now.toISOString(),
        freshAfter: new Date(now.getTime() - WINDOW_MS).toISOString(),
        reservedUntil: new Date(now.getTime() + LEASE_MS).toISOString(),
      },
    );
    await this.sweepIfDue(now, req.log);
    if ('reserved' in result) {
      this.pending.set(req, result.reserved);
      this.running.add(result.reserved);
      return false;
    }
    const existing = result.existing;
    if (existing.method !== req.method || existing.path !== path || existing.body_hash !== bodyHash) {
      await sendProblem(req, reply, 'idempotency_key_reused', 'This Idempotency-Key was used with another request.');
      return true;
    }
    if (existing.status_code === null || existing.response === null) {
      reply.header('Retry-After', '1');
      await sendProblem(req, reply, 'idempotency_key_in_progress', 'The first request with this key is still being processed.');
      return true;
    }
    const headers = JSON.parse(existing.headers ?? '{}') as Record<string, string>;
    for (const [name, value] of Object.entries(headers)) reply.header(name, value);
    reply.header('Idempotent-Replayed', 'true');
    await reply.status(existing.status_code).send(this.secrets.open(existing.response));
    return true;
  }

  /** The final response of a request that reserved a key: stored sealed, or the key freed. */
  private async record(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<void> {
    const held = this.pending.get(req);
    if (!held) return;
    this.pending.delete(req);
    this.running.delete(held);
    const status = reply.statusCode;
    try {
      if (status >= 500 || status === 409 || status === 429) {
        await this.store.release(held);
        return;
      }
      const headers: Record<string, string> = {};
      for (const name of REPLAYED_HEADERS) {
        const v = reply.getHeader(name);
        if (v !== undefined) headers[name] = String(v);
      }
      const body = typeof payload === 'string' ? payload : String(payload ?? '');
      await this.store.complete(held, status, this.secrets.seal(body), headers);
    } catch (error) {
      // The response still goes out; the reservation's lease runs out and frees the key.
      req.log.error({ err: error }, 'recording an idempotent response failed');
    }
  }

  /** Every third of a lease: extends the reservations of requests still running here; sweeps when due. */
  private async tick(app: FastifyInstance): Promise<void> {
    const now = this.clock.now();
    try {
      await this.store.extend([...this.running], new Date(now.getTime() + LEASE_MS).toISOString());
    } catch (error) {
      app.log.warn({ err: error }, 'extending idempotency reservations failed');
    }
    await this.sweepIfDue(now, app.log);
  }

  /** Purges stored responses past the window: at most once a minute, in bounded batches. */
  private async sweepIfDue(now: Date, log: FastifyInstance['log']): Promise<void> {
    if (now.getTime() - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now.getTime();
    const before = new Date(now.getTime() - WINDOW_MS).toISOString();
    this.sweeping = (async () => {
      try {
        for (let i = 0; i < SWEEP_BATCHES; i++) if ((await this.store.purge(before, SWEEP_BATCH)) < SWEEP_BATCH) break;
      } catch (error) {
        log.warn({ err: error }, 'purging idempotency keys failed');
      }
    })();
    await this.sweeping;
  }
}

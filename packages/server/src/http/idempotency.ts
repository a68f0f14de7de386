import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../domain/auth/actor.js';
import type { IdempotencyStore } from '../storage/idempotency-store.js';
import { sendProblem } from './problem.js';

const WINDOW_MS = 24 * 60 * 60 * 1000;
const REPLAYED_HEADERS = ['location', 'content-type'];

interface Pending {
  account: string;
  key: string;
}

const pendingOf = new WeakMap<FastifyRequest, Pending>();

/**
 * Idempotency-Key on POST and DELETE: the same key and body within 24 h returns the first response;
 * the same key with another request is 422 idempotency_key_reused. A 5xx frees the key for a retry.
 * Returns true when the reply was already sent (a replay or a conflict).
 */
export async function applyIdempotency(
  req: FastifyRequest,
  reply: FastifyReply,
  actor: Actor,
  store: IdempotencyStore,
  now: Date,
) {
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
  const existing = await store.reserve(
    { account_uuid: actor.accountUuid, key, method: req.method, path, body_hash: bodyHash, created_at: now.toISOString() },
    new Date(now.getTime() - WINDOW_MS).toISOString(),
  );
  if (!existing) {
    pendingOf.set(req, { account: actor.accountUuid, key });
    return false;
  }
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
  await reply.status(existing.status_code).send(existing.response);
  return true;
}

/** Stores the final response of a request that reserved a key. */
export function installIdempotencyRecorder(app: FastifyInstance, store: IdempotencyStore): void {
  app.addHook('onSend', async (req, reply, payload) => {
    const pending = pendingOf.get(req);
    if (!pending) return payload;
    pendingOf.delete(req);
    if (reply.statusCode >= 500) {
      await store.release(pending.account, pending.key);
      return payload;
    }
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const v = reply.getHeader(name);
      if (v !== undefined) headers[name] = String(v);
    }
    await store.complete(
      pending.account,
      pending.key,
      reply.statusCode,
      typeof payload === 'string' ? payload : String(payload ?? ''),
      headers,
    );
    return payload;
  });
}

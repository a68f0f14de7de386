import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../domain/field-errors.js';

/** A comment line now and then keeps proxies from closing a quiet stream. */
export const KEEP_ALIVE_MS = 15_000;

export interface ServerSentEvent {
  id: number;
  event: string;
  data: unknown;
}

/**
 * Where a stream resumes: `Last-Event-ID` (sent by EventSource when it reconnects) or `?after=`;
 * 0 (the start) when neither is given. Anything but a whole number from 0 is refused.
 */
export function resumePoint(req: FastifyRequest, what: string): number {
  const header = req.headers['last-event-id'];
  const query = (req.query as { after?: string }).after;
  const [field, raw] = header !== undefined ? ['Last-Event-ID', String(header)] : ['after', query];
  if (raw === undefined || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new ValidationError([{ field, code: 'out_of_range', message: `${field} must be ${what} (an integer from 0).` }]);
  return n;
}

/** Aborted when the client goes away, so a follower stops reading the database for nobody. */
export function abortOnClose(req: FastifyRequest): AbortSignal {
  const controller = new AbortController();
  req.raw.socket.once('close', () => controller.abort());
  return controller.signal;
}

/** The streams each app has open, ended when it closes (a stream never ends by itself). */
const open = new WeakMap<object, Set<ServerResponse>>();

/** Ends every open event stream of the app: its close would otherwise wait for their clients. */
export function endEventStreams(app: FastifyInstance): void {
  for (const res of open.get(app.server) ?? []) res.destroy();
}

/**
 * Writes the events as text/event-stream until they end or the client leaves, with a keep-alive
 * comment every `keepAliveMs`; waits for the socket to drain rather than buffering a slow reader's backlog.
 */
export async function writeEventStream(
  req: FastifyRequest,
  reply: FastifyReply,
  events: AsyncGenerator<ServerSentEvent>,
  keepAliveMs = KEEP_ALIVE_MS,
): Promise<void> {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  });
  res.write('retry: 2000\n\n');
  let streams = open.get(req.server.server);
  if (!streams) {
    streams = new Set();
    open.set(req.server.server, streams);
  }
  streams.add(res);
  res.once('close', () => streams.delete(res));
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), keepAliveMs);
  try {
    for await (const e of events) {
      // A client gone while a backlog was being sent: its 'close' came before any wait below.
      if (res.destroyed) break;
      if (!res.write(`id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`) && !res.destroyed)
        await new Promise((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
    }
  } catch (error) {
    req.log.error({ err: error }, 'event stream failed');
  } finally {
    clearInterval(keepAlive);
    res.end();
  }
}

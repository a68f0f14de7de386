import { Type as T } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../../../domain/field-errors.js';
import type { ChangeNotifier } from '../../../storage/change-notifier.js';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import { checkOperationVisible, followOperation, type OperationEvent } from '../../../use-cases/operations/follow-operation.js';
import { QueryError } from '../../query-error.js';
import type { RouteDef } from '../../route.js';

/** A comment line now and then keeps proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;

/**
 * GET /api/v1/operations/<uuid>/events: server-sent events of one operation (steps, log lines,
 * status; use-cases/operations/follow-operation.ts). `Last-Event-ID` (sent by EventSource when it
 * reconnects) or `?after=<seq>` resumes after that log line.
 */
export const operationEventsRoute = (deps: UseCaseDeps & { changes: ChangeNotifier }): RouteDef => ({
  method: 'GET',
  url: '/api/v1/operations/:operation/events',
  operationId: 'streamOperationEvents',
  summary: 'Follow an operation live: server-sent events `step`, `log`, `status`, then `end`',
  tag: 'Operations',
  auth: 'read',
  params: { operation: 'Operation UUID' },
  query: T.Object({
    after: T.Optional(
      T.Integer({ minimum: 0, description: 'Resume after this event id (the Last-Event-ID header wins when both are sent)' }),
    ),
  }),
  responses: {
    200: {
      description:
        'An event stream (text/event-stream). Each event has an `id` (the last log line sent), a type (`step`, `log`, `status`, `end`) and JSON data; the stream ends after `end`.',
      schema: T.String(),
      mediaType: 'text/event-stream',
    },
  },
  async handler(req, reply, actor) {
    const uuid = (req.params as { operation: string }).operation;
    const after = QueryError.wrap(() => resumePoint(req));
    await checkOperationVisible(deps, actor, uuid);
    await stream(req, reply, followOperation(deps, actor, uuid, after, abortOnClose(req)));
  },
});

function resumePoint(req: FastifyRequest): number {
  const header = req.headers['last-event-id'];
  const query = (req.query as { after?: string }).after;
  const [field, raw] = header !== undefined ? ['Last-Event-ID', String(header)] : ['after', query];
  if (raw === undefined || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new ValidationError([
      { field, code: 'out_of_range', message: `${field} must be a log sequence number (an integer from 0).` },
    ]);
  return n;
}

function abortOnClose(req: FastifyRequest): AbortSignal {
  const controller = new AbortController();
  req.raw.socket.once('close', () => controller.abort());
  return controller.signal;
}

async function stream(req: FastifyRequest, reply: FastifyReply, events: AsyncGenerator<OperationEvent>): Promise<void> {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  });
  res.write('retry: 2000\n\n');
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  try {
    for await (const e of events) {
      if (!res.write(`id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`))
        await new Promise((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
    }
  } catch (error) {
    req.log.error({ err: error }, 'operation event stream failed');
  } finally {
    clearInterval(keepAlive);
    res.end();
  }
}

import { Type as T } from '@sinclair/typebox';
import type { ChangeNotifier } from '../../../storage/change-notifier.js';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import { checkOperationVisible, followOperation } from '../../../use-cases/operations/follow-operation.js';
import { QueryError } from '../../query-error.js';
import type { RouteDef } from '../../route.js';
import { abortOnClose, resumePoint, writeEventStream } from '../../sse.js';

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
    const after = QueryError.wrap(() => resumePoint(req, 'a log sequence number'));
    await checkOperationVisible(deps, actor, uuid);
    await writeEventStream(req, reply, followOperation(deps, actor, uuid, after, abortOnClose(req)));
  },
});

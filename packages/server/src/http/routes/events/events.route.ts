import { Type as T } from '@sinclair/typebox';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import { followEvents, parseTypes } from '../../../use-cases/events/follow-events.js';
import { QueryError } from '../../query-error.js';
import type { RouteDef } from '../../route.js';
import { abortOnClose, resumePoint, writeEventStream } from '../../sse.js';

/**
 * GET /api/v1/events: the caller's team's change log as server-sent events (use-cases/events).
 * `Last-Event-ID` or `?after=<seq>` resumes after that event; `?types=` keeps only some types.
 */
export const teamEventsRoute = (deps: UseCaseDeps): RouteDef => ({
  method: 'GET',
  url: '/api/v1/events',
  operationId: 'streamTeamEvents',
  summary: "Follow the team's changes live: server-sent events of sites, operations, deployments and certificates",
  tag: 'Events',
  auth: 'read',
  query: T.Object({
    after: T.Optional(T.Integer({ minimum: 0, description: 'Resume after this event (its `id`); Last-Event-ID wins.' })),
    types: T.Optional(
      T.String({ description: 'Comma-separated event types to keep, or families such as `site.*`; default: all.' }),
    ),
  }),
  responses: {
    200: {
      description:
        'An event stream (text/event-stream) that stays open: each event has an `id` (its seq), a type such as `site.installed` and JSON data `{seq, type, subject, created_at, data}`; a `: keep-alive` comment every 15 s.',
      schema: T.String(),
      mediaType: 'text/event-stream',
    },
  },
  async handler(req, reply, actor) {
    const after = QueryError.wrap(() => resumePoint(req, 'an event id'));
    const types = QueryError.wrap(() => parseTypes((req.query as { types?: string }).types));
    await writeEventStream(req, reply, followEvents(deps, actor, after, types, abortOnClose(req), deps.streamPollMs));
  },
});

import type { Static } from '@sinclair/typebox';
import {
  CreatedOutgoingWebhookSchema,
  CreateOutgoingWebhookBody,
  listOf,
  OutgoingWebhookDeliverySchema,
  OutgoingWebhookSchema,
} from '@siteplane/contract';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import {
  createOutgoingWebhook,
  deleteOutgoingWebhook,
  findOutgoingWebhook,
  listOutgoingDeliveries,
  listOutgoingWebhooks,
  outgoingWebhookRecord,
} from '../../../use-cases/outgoing-webhooks/manage-outgoing-webhooks.js';
import type { RouteDef } from '../../route.js';
import { PAGE_QUERY } from '../page-query.js';
import { paged } from '../paged.js';

const id = (req: { params: unknown }) => (req.params as { webhook: string }).webhook;

/**
 * /api/v1/webhooks: outgoing webhooks, the team's change log POSTed to a URL and signed the
 * Standard Webhooks way (delivered by jobs/webhook-dispatcher.ts in the worker process). A site's
 * incoming push webhook is another thing: /api/v1/sites/<uuid>/webhook.
 */
export const outgoingWebhookRoutes = (deps: UseCaseDeps): RouteDef[] => [
  {
    method: 'POST',
    url: '/api/v1/webhooks',
    operationId: 'createOutgoingWebhook',
    summary: "Send the team's events to a URL (the signing secret is in this answer only)",
    tag: 'Events',
    auth: 'write',
    body: CreateOutgoingWebhookBody,
    responses: {
      201: { description: 'The endpoint with its secret `whsec_…`, shown once', schema: CreatedOutgoingWebhookSchema },
      422: {
        description:
          'validation_failed: `url` not a URL (invalid_format), not https (insecure_url) or at an address not allowed (target_not_allowed); `events.<i>` not an event type (invalid_value)',
      },
    },
    async handler(req, reply, actor) {
      reply.status(201);
      return createOutgoingWebhook(deps, actor, req.body as Static<typeof CreateOutgoingWebhookBody>);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/webhooks',
    operationId: 'listOutgoingWebhooks',
    summary: "The team's outgoing webhooks (never their secrets)",
    tag: 'Events',
    auth: 'read',
    query: PAGE_QUERY,
    responses: { 200: { description: 'Endpoints', schema: listOf(OutgoingWebhookSchema) } },
    handler: (req, reply, actor) => paged(req, reply, (page) => listOutgoingWebhooks(deps, actor, page)),
  },
  {
    method: 'GET',
    url: '/api/v1/webhooks/:webhook',
    operationId: 'getOutgoingWebhook',
    summary: 'One outgoing webhook (never its secret)',
    tag: 'Events',
    auth: 'read',
    params: { webhook: 'Webhook UUID' },
    responses: { 200: { description: 'The endpoint', schema: OutgoingWebhookSchema } },
    handler: async (req, _reply, actor) => outgoingWebhookRecord(await findOutgoingWebhook(deps, actor, id(req))),
  },
  {
    method: 'DELETE',
    url: '/api/v1/webhooks/:webhook',
    operationId: 'deleteOutgoingWebhook',
    summary: 'Stop sending events to this endpoint (its delivery log goes too)',
    tag: 'Events',
    auth: 'write',
    params: { webhook: 'Webhook UUID' },
    responses: { 204: { description: 'Deleted' } },
    async handler(req, reply, actor) {
      await deleteOutgoingWebhook(deps, actor, id(req));
      return reply.status(204).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/webhooks/:webhook/deliveries',
    operationId: 'listOutgoingWebhookDeliveries',
    summary: 'Every delivery attempt of an outgoing webhook, oldest first',
    tag: 'Events',
    auth: 'read',
    params: { webhook: 'Webhook UUID' },
    query: PAGE_QUERY,
    responses: { 200: { description: 'Attempts', schema: listOf(OutgoingWebhookDeliverySchema) } },
    handler: (req, reply, actor) => paged(req, reply, (page) => listOutgoingDeliveries(deps, actor, id(req), page)),
  },
];

import type { Static } from '@sinclair/typebox';
import {
  CreatedOutgoingWebhookSchema,
  CreateOutgoingWebhookBody,
  listOf,
  OutgoingWebhookDeliverySchema,
  OutgoingWebhookSchema,
  ProblemSchema,
  RotateOutgoingWebhookSecretBody,
  UpdateOutgoingWebhookBody,
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
import { resendOutgoingDelivery } from '../../../use-cases/outgoing-webhooks/resend-delivery.js';
import {
  rotateOutgoingWebhookSecret,
  updateOutgoingWebhook,
} from '../../../use-cases/outgoing-webhooks/update-outgoing-webhook.js';
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
  {
    method: 'PATCH',
    url: '/api/v1/webhooks/:webhook',
    operationId: 'updateOutgoingWebhook',
    summary: 'Change the url or events, or pause (enabled false: events wait, none is skipped) and resume',
    tag: 'Events',
    auth: 'write',
    params: { webhook: 'Webhook UUID' },
    body: UpdateOutgoingWebhookBody,
    responses: {
      200: { description: 'The endpoint as it is now', schema: OutgoingWebhookSchema },
      422: { description: 'validation_failed: the rules of a create (`url`, `events.<i>`), or an empty body' },
    },
    handler: async (req, _reply, actor) =>
      updateOutgoingWebhook(deps, actor, id(req), req.body as Static<typeof UpdateOutgoingWebhookBody>),
  },
  {
    method: 'POST',
    url: '/api/v1/webhooks/:webhook/rotate-secret',
    operationId: 'rotateOutgoingWebhookSecret',
    summary: 'A new signing secret (in this answer only); the old one also signs until the grace period ends',
    tag: 'Events',
    auth: 'write',
    params: { webhook: 'Webhook UUID' },
    body: RotateOutgoingWebhookSecretBody,
    bodyOptional: true,
    responses: {
      200: { description: 'The endpoint with its new secret `whsec_…`, shown once', schema: CreatedOutgoingWebhookSchema },
      422: { description: 'validation_failed: `graceSeconds` not an integer from 0 to 604800' },
    },
    handler: async (req, _reply, actor) =>
      rotateOutgoingWebhookSecret(deps, actor, id(req), req.body as Static<typeof RotateOutgoingWebhookSecretBody> | undefined),
  },
  {
    method: 'POST',
    url: '/api/v1/webhooks/:webhook/deliveries/:delivery/resend',
    operationId: 'resendOutgoingWebhookDelivery',
    summary: "Send a delivery's event again now, once (the attempt is logged and answered)",
    tag: 'Events',
    auth: 'write',
    params: { webhook: 'Webhook UUID', delivery: 'Delivery UUID' },
    responses: {
      201: { description: 'The new attempt, whatever the receiver answered', schema: OutgoingWebhookDeliverySchema },
      409: { description: 'conflict: the event is no longer in the change log', schema: ProblemSchema },
    },
    async handler(req, reply, actor) {
      reply.status(201);
      return resendOutgoingDelivery(deps, actor, id(req), (req.params as { delivery: string }).delivery);
    },
  },
];

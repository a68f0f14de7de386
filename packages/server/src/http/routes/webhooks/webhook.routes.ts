import { type Static, Type } from '@sinclair/typebox';
import {
  BranchList,
  ConfigureWebhookBody,
  listOf,
  ProblemSchema,
  WebhookDeliverySchema,
  WebhookRemovalSchema,
  WebhookSchema,
} from '@siteplane/contract';
import type { FastifyRequest } from 'fastify';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import { listDeliveries } from '../../../use-cases/webhooks/list-deliveries.js';
import { listWebhookRemovals } from '../../../use-cases/webhooks/list-removals.js';
import { providerHooks } from '../../../use-cases/webhooks/provider-hook.js';
import { configureWebhook, deleteWebhook, getWebhook } from '../../../use-cases/webhooks/webhook-config.js';
import type { RouteDef } from '../../route.js';
import { assertMatches } from '../../validate-schema.js';
import { PAGE_QUERY } from '../page-query.js';
import { paged } from '../paged.js';

const site = (req: { params: unknown }) => (req.params as { site: string }).site;
/**
 * Where the hook URLs point: SITEPLANE_PUBLIC_URL when the operator set it (behind a TLS-terminating
 * proxy the request itself says http://), else the scheme and host the client reached the API at.
 */
const originOf = (deps: UseCaseDeps, req: FastifyRequest) => deps.publicUrl ?? `${req.protocol}://${req.host}`;
/**
 * The body as validated: `branches` an array here, null being let through before, so a bad entry
 * is reported at its own path (`branches.1`) rather than as a mismatch of the whole union.
 */
const StrictBody = Type.Object(
  { ...ConfigureWebhookBody.properties, branches: Type.Optional(BranchList) },
  { additionalProperties: false },
);
const NOT_FOUND = { description: 'Unknown, deleted or another tenant’s site', schema: ProblemSchema };

/** A site's push webhook (issue 11 item 6): configuration, rotation, and the deliveries received. */
export const webhookRoutes = (deps: UseCaseDeps): RouteDef[] => [
  {
    method: 'GET',
    url: '/api/v1/sites/:site/webhook',
    operationId: 'getSiteWebhook',
    summary: 'The site’s push webhook: its URLs and branch filter (never its secrets)',
    tag: 'Deployments',
    auth: 'read',
    params: { site: 'Site UUID' },
    responses: {
      200: { description: 'The webhook; `enabled: false` when none is configured', schema: WebhookSchema },
      404: NOT_FOUND,
    },
    handler: (req, _reply, actor) => getWebhook(deps, actor, site(req), originOf(deps, req)),
  },
  {
    method: 'POST',
    url: '/api/v1/sites/:site/webhook',
    operationId: 'setSiteWebhook',
    summary: 'Create the push webhook, or rotate its secret and trigger URL, or change its branches',
    tag: 'Deployments',
    auth: 'write',
    params: { site: 'Site UUID' },
    body: ConfigureWebhookBody,
    bodyValidatedByDomain: true,
    bodyOptional: true,
    responses: {
      200: {
        description: 'Rotated or changed; what was generated is in `secret` / `trigger_url`, this once',
        schema: WebhookSchema,
      },
      201: { description: 'Created; `secret` and `trigger_url` are shown this once', schema: WebhookSchema },
      404: {
        description: 'Unknown site (not_found), or `register.repository` unknown at the provider (repository_not_found)',
        schema: ProblemSchema,
      },
      409: { description: 'conflict: another request created the webhook at the same moment; retry', schema: ProblemSchema },
      422: {
        description:
          'validation_failed: every invalid field, with its path (`register.vcProfile` not_found / not_applicable; `register` required when rotating the secret of a hook registered through a profile since deleted)',
        schema: ProblemSchema,
      },
      424: {
        description:
          "provider_auth_failed: the provider refused the profile's token (it needs the right to manage hooks); on rotation nothing changed, the old secret still works on both sides",
        schema: ProblemSchema,
      },
      429: {
        description: 'provider_rate_limited',
        schema: ProblemSchema,
        headers: { 'Retry-After': "Seconds until the provider's limit resets" },
      },
      502: {
        description: 'provider_error: the provider refused the hook (one with this URL exists) or answered something unreadable',
        schema: ProblemSchema,
      },
      503: { description: 'provider_unreachable', schema: ProblemSchema },
    },
    async handler(req, reply, actor) {
      const body = (req.body ?? {}) as Static<typeof ConfigureWebhookBody>;
      assertMatches(
        StrictBody,
        body !== null && typeof body === 'object' && body.branches === null ? { ...body, branches: undefined } : body,
      );
      const result = await configureWebhook(deps, actor, site(req), body, originOf(deps, req), providerHooks(deps));
      reply.status(result.created ? 201 : 200);
      return result.record;
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/sites/:site/webhook',
    operationId: 'deleteSiteWebhook',
    summary:
      'Turn the push webhook off (its secret and trigger URL stop working); the hook registered at the provider is deleted there, best effort (see …/webhook/removals)',
    tag: 'Deployments',
    auth: 'write',
    params: { site: 'Site UUID' },
    responses: { 204: { description: 'Off' }, 404: NOT_FOUND },
    async handler(req, reply, actor) {
      await deleteWebhook(deps, actor, site(req), providerHooks(deps));
      return reply.status(204).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/sites/:site/webhook/deliveries',
    operationId: 'listSiteWebhookDeliveries',
    query: PAGE_QUERY,
    summary: 'The last 100 hooks received for the site, each accepted, ignored or rejected with its reason',
    tag: 'Deployments',
    auth: 'read',
    params: { site: 'Site UUID' },
    responses: { 200: { description: 'Deliveries, oldest first', schema: listOf(WebhookDeliverySchema) }, 404: NOT_FOUND },
    handler: (req, reply, actor) => paged(req, reply, (page) => listDeliveries(deps, actor, site(req), page)),
  },
  {
    method: 'GET',
    url: '/api/v1/sites/:site/webhook/removals',
    operationId: 'listSiteWebhookRemovals',
    query: PAGE_QUERY,
    summary: 'Deletions of the site’s hook at its provider (webhook turned off, registered elsewhere), each with its outcome',
    tag: 'Deployments',
    auth: 'read',
    params: { site: 'Site UUID' },
    responses: {
      200: {
        description: 'Oldest first; a failed one names the hook still at the provider, to delete by hand',
        schema: listOf(WebhookRemovalSchema),
      },
      404: NOT_FOUND,
    },
    handler: (req, reply, actor) => paged(req, reply, (page) => listWebhookRemovals(deps, actor, site(req), page)),
  },
];

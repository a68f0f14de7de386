import { Type as T } from '@sinclair/typebox';
import { DomainError } from '../../../domain/errors.js';
import type { RouteDef } from '../../route.js';

/**
 * /api/v1/webhooks (outgoing webhooks: the team's events POSTed to a URL, signed the Standard
 * Webhooks way) is not built yet. Its routes answer 501 not_implemented, so a client learns that
 * rather than a 404 that reads like a typo. (A site's incoming push webhook is /api/v1/sites/<uuid>/webhook.)
 */
export function outgoingWebhookRoutes(): RouteDef[] {
  const notBuilt = async (): Promise<never> => {
    throw new DomainError(
      'not_implemented',
      'Outgoing webhooks are not built yet; follow GET /api/v1/events (server-sent events) instead.',
    );
  };
  const responses = { 501: { description: 'Not built yet (problem+json, code not_implemented)', schema: T.Any() } };
  const common = { tag: 'Events', responses, handler: notBuilt };
  return [
    {
      ...common,
      operationId: 'createOutgoingWebhook',
      method: 'POST',
      url: '/api/v1/webhooks',
      summary: 'Outgoing webhooks: not built yet (501)',
      auth: 'write',
    },
    {
      ...common,
      operationId: 'listOutgoingWebhooks',
      method: 'GET',
      url: '/api/v1/webhooks',
      summary: 'Outgoing webhooks: not built yet (501)',
      auth: 'read',
    },
    {
      ...common,
      operationId: 'deleteOutgoingWebhook',
      method: 'DELETE',
      url: '/api/v1/webhooks/:webhook',
      summary: 'Outgoing webhooks: not built yet (501)',
      auth: 'write',
      params: { webhook: 'Webhook UUID' },
    },
  ];
}

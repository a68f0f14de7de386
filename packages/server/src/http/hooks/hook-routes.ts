import { Type } from '@sinclair/typebox';
import { HookAnswerSchema, ProblemSchema, TriggerBody } from '@siteplane/contract';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type HookDeps, receiveProviderHook, receiveTrigger } from '../../use-cases/webhooks/receive-hook.js';
import { sendProblem } from '../problem.js';
import type { RouteDef } from '../route.js';

/**
 * Largest hook body read. GitHub caps its payloads at 25 MB, but a push carrying that much lists
 * thousands of commits; 5 MiB holds every push a deploy needs, and whoever lacks the secret can
 * make the service buffer no more than that per request before the signature is checked.
 */
export const HOOK_BODY_LIMIT = 5 * 1024 * 1024;

/**
 * The unauthenticated hook endpoints, in a scope of their own: the signature is computed over the
 * exact bytes the provider sent, so this scope reads every body raw (any content type, at most
 * HOOK_BODY_LIMIT) instead of through the service's JSON parser. No bearer token, no idempotency
 * keys (GitLab sends an `Idempotency-Key` of its own; here it is the delivery id).
 */
export function registerHookRoutes(app: FastifyInstance, deps: HookDeps): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: HOOK_BODY_LIMIT }, (_req, body, done) => done(null, body));
    scope.setErrorHandler(async (error: FastifyError, req, reply) => {
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
        return sendProblem(req, reply, 'body_too_large', `A hook body may be at most ${HOOK_BODY_LIMIT / 1024 / 1024} MiB.`);
      throw error; // the service's handler answers the rest
    });
    scope.post('/api/v1/hooks/:provider/:site', async (req, reply) => {
      const { provider, site } = req.params as { provider: string; site: string };
      const answer = await receiveProviderHook(deps, provider, site, req.headers, rawBody(req), contentType(req));
      return send(reply, answer);
    });
    scope.post('/api/v1/hooks/:token', async (req, reply) => {
      const { token } = req.params as { token: string };
      return send(reply, await receiveTrigger(deps, token, req.headers, rawBody(req)));
    });
  });
}

const rawBody = (req: FastifyRequest): Buffer => (Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
const contentType = (req: FastifyRequest): string => String(req.headers['content-type'] ?? '').toLowerCase();

function send(reply: FastifyReply, answer: { status: number; body: unknown }) {
  return reply.status(answer.status).type('application/json').send(JSON.stringify(answer.body));
}

/**
 * The hook endpoints as the OpenAPI document shows them (they are registered above, not as
 * RouteDefs: no bearer token, raw bodies).
 */
export function hookRouteDocs(): RouteDef[] {
  const answers = {
    200: {
      description:
        'Authentic, nothing deployed: ping, not a push, branch deleted or filtered, or a redelivery (`duplicate: true`)',
      schema: HookAnswerSchema,
    },
    202: { description: 'A deployment was started (or the push collapsed into the queued one)', schema: HookAnswerSchema },
    400: { description: 'malformed_json: authentic, but the body is not JSON', schema: ProblemSchema },
    404: {
      description:
        'not_found: unknown site, webhook off, or a missing or wrong signature — told apart only in the site’s deliveries',
      schema: ProblemSchema,
    },
    413: { description: `body_too_large: more than ${HOOK_BODY_LIMIT / 1024 / 1024} MiB`, schema: ProblemSchema },
    422: { description: 'validation_failed: the payload or trigger body does not say what to deploy', schema: ProblemSchema },
  };
  const unused = async () => {
    throw new Error('documentation only');
  };
  return [
    {
      method: 'POST',
      url: '/api/v1/hooks/:provider/:site',
      operationId: 'receiveProviderHook',
      summary:
        'A provider’s push hook: github (X-Hub-Signature-256), gitlab (X-Gitlab-Token), bitbucket (X-Hub-Signature), gitea (X-Gitea-Signature or X-Forgejo-Signature)',
      tag: 'Deployments',
      auth: 'none',
      params: { provider: 'github, gitlab, bitbucket or gitea', site: 'Site UUID' },
      body: Type.Unknown({ description: 'The provider’s push payload, verified over its raw bytes' }),
      responses: answers,
      handler: unused,
    },
    {
      method: 'POST',
      url: '/api/v1/hooks/:token',
      operationId: 'receiveTriggerHook',
      summary: 'The site’s secret trigger URL, for plain git hooks and CI',
      tag: 'Deployments',
      auth: 'none',
      params: { token: 'The trigger token (sph_…), shown once when the webhook was created or rotated' },
      body: TriggerBody,
      bodyOptional: true,
      responses: answers,
      handler: unused,
    },
  ];
}

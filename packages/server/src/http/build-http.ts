import { createServer } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerFactory, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Clock } from '../app/clock.js';
import type { Health } from '../app/service-health.js';
import { ValidationError } from '../domain/field-errors.js';
import { registerFormats } from '../domain/schema-formats.js';
import { CONTENT_TYPE } from '../metrics/exposition.js';
import type { Histogram } from '../metrics/registry.js';
import { installRequestMetrics, requestObserver } from '../metrics/request-metrics.js';
import type { IdempotencyStore } from '../storage/idempotency-store.js';
import { WebhookDeliveries } from '../storage/webhook-deliveries.js';
import type { DeploymentTrigger, SourceBranchOf } from '../use-cases/deployments/deployment-trigger.js';
import type { UseCaseDeps } from '../use-cases/deps.js';
import { type Authenticate, authenticateRequest } from './auth.js';
import { checkBodyShape, MAX_BODY_DEPTH } from './body-shape.js';
import { cachedReads } from './cached-reads.js';
import { renderDocsPage } from './docs-page.js';
import { installErrorHandler } from './error-handler.js';
import { hookRouteDocs, registerHookRoutes } from './hooks/hook-routes.js';
import { IdempotencyKeys } from './idempotency.js';
import { MalformedJson } from './malformed-json.js';
import { buildOpenApi } from './openapi.js';
import { sendProblem } from './problem.js';
import { assertQueryShape } from './query-shape.js';
import type { RateLimiter } from './rate-limit.js';
import { type ResponseMismatch, responseCheck } from './response-check.js';
import type { RouteDef } from './route.js';
import { apiRoutes } from './routes/index.js';
import { endEventStreams } from './sse.js';
import { acceptUploads, ReceivedUpload, receiveUpload } from './upload-body.js';
import { assertMatches } from './validate-schema.js';

export interface HttpDeps {
  useCases: UseCaseDeps;
  authenticate: Authenticate;
  idempotency: IdempotencyStore;
  clock: Clock;
  logger: Logger;
  version: string;
  /** Never throws: a part that cannot be checked is reported down. */
  health(): Promise<Health>;
  /**
   * Present when metrics are exported (SITEPLANE_METRICS_TOKEN and/or SITEPLANE_METRICS_ADDRESS):
   * request latencies are recorded; `scrape` set serves GET /metrics on this listener to that token.
   */
  metrics?: {
    requestDuration: Histogram<'route' | 'method' | 'status'>;
    scrape: { authorized(authorization: string | undefined): boolean; render(): Promise<string> } | null;
  };
  /** Requests a minute per token and per client address without a valid token (health and docs are exempt). */
  limiter: RateLimiter;
  /**
   * Addresses and ranges (`127.0.0.1/32`) of the reverse proxies in front: a request from one of
   * them is taken to be from the address its X-Forwarded-For names, over the scheme and host its
   * X-Forwarded-Proto and -Host name. Empty: the socket's own address, scheme and Host.
   */
  trustedProxies: readonly string[];
  /** Starts deployments for push webhooks and trigger URLs. */
  deploymentTrigger: DeploymentTrigger;
  /** The branch a webhook without explicit branches deploys (the site's source branch). */
  sourceBranchOf: SourceBranchOf;
  /** Tests: every JSON answer is checked against the schema its route documents; each mismatch is reported here. */
  responseMismatch?: (mismatch: ResponseMismatch) => void;
}

const BODY_LIMIT = 1024 * 1024;

/** The Fastify app: problem+json errors, bearer auth, idempotency keys, every route of routes/. */
export function buildHttp(deps: HttpDeps): { app: FastifyInstance; openapi: ReturnType<typeof buildOpenApi> } {
  registerFormats();
  let n = 0;
  const { limiter } = deps;
  const observe = deps.metrics ? requestObserver(deps.metrics.requestDuration) : undefined;
  const { peek } = deps.authenticate;
  const answerCached = peek ? cachedReads({ siteLists: deps.useCases.siteLists, peekActor: peek, limiter, observe }) : null;
  // Fastify's own server (its lib/server.js, HTTP/1), with the cached hot reads answered first
  // (cached-reads.ts). Requests made with app.inject() go straight to Fastify.
  const serverFactory: FastifyServerFactory | undefined = answerCached
    ? (handler, options) => {
        const server = createServer((req, res) => {
          if (!answerCached(req, res)) handler(req, res);
        });
        // Fastify hands over its options with its defaults filled in (72 s keep-alive, no timeouts).
        const timeouts = options as { keepAliveTimeout: number; requestTimeout: number; connectionTimeout: number };
        server.keepAliveTimeout = timeouts.keepAliveTimeout;
        server.requestTimeout = timeouts.requestTimeout;
        server.setTimeout(timeouts.connectionTimeout);
        return server;
      }
    : undefined;
  const app = Fastify({
    loggerInstance: deps.logger as unknown as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    // Per-request lines are off: at thousands of requests a second they cost more than the request.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: deps.trustedProxies.length > 0 ? [...deps.trustedProxies] : false,
    genReqId: () => `req_${Date.now().toString(36)}${(n++).toString(36)}`,
    routerOptions: { ignoreTrailingSlash: true },
    // Errors raised before routing (a URL whose %-encoding is broken) get problem+json too.
    frameworkErrors: (error, req, reply) => {
      void sendProblem(req, reply, 'invalid_query', `The request URL is malformed: ${error.message}`);
    },
    serverFactory,
  });
  // JSON only: any other body type is a 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_req, body, done) => {
    // An empty body is allowed (DELETE without deleteDatabase); anything else must be JSON.
    if (body === '' || body === undefined) return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body as string);
    } catch {
      return done(new MalformedJson(), undefined);
    }
    // Before authentication and before any code that walks the body recursively.
    const shape = checkBodyShape(parsed);
    if (shape.tooDeep) return done(new MalformedJson(`The body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels.`));
    done(shape.errors.length ? new ValidationError(shape.errors) : null, parsed);
  });
  installErrorHandler(app);
  if (observe) installRequestMetrics(app, observe);
  const idempotency = new IdempotencyKeys(deps.idempotency, deps.useCases.secrets, deps.clock);
  idempotency.install(app);

  const routes = apiRoutes(deps.useCases);
  for (const route of routes) {
    const { upload } = route;
    if (!upload) register(app, route, deps, idempotency, limiter);
    // Its own scope: the upload's parsers apply to this route only; every other body stays JSON.
    else
      void app.register(async (scope) => {
        acceptUploads(scope, upload.mediaTypes, deps.useCases.artifacts);
        register(scope, route, deps, idempotency, limiter);
      });
  }
  registerHookRoutes(app, {
    db: deps.useCases.db,
    secrets: deps.useCases.secrets,
    clock: deps.clock,
    deliveries: new WebhookDeliveries(deps.useCases.db),
    trigger: deps.deploymentTrigger,
    sourceBranchOf: deps.sourceBranchOf,
  });
  const openapi = buildOpenApi([...routes, ...hookRouteDocs()], deps.version);
  const openapiJson = JSON.stringify(openapi, null, 2);
  const docsHtml = renderDocsPage(openapi);
  app.get('/api/v1/openapi.json', async (_req, reply) => reply.type('application/json').send(openapiJson));
  app.get('/docs', async (_req, reply) => reply.type('text/html; charset=utf-8').send(docsHtml));
  // 503 only when the database is down (this process cannot serve); a stalled worker or an
  // unreachable CA is `degraded` with 200, so a load balancer keeps the API in rotation.
  app.get('/api/v1/health', async (_req, reply) => {
    const h = await deps.health();
    const { parts } = h;
    const ok = parts.database === 'ok' && parts.worker !== 'stalled' && parts.acme === 'ok';
    return reply.status(h.database ? 200 : 503).send({ status: ok ? 'ok' : 'degraded', version: deps.version, ...h });
  });
  const scrape = deps.metrics?.scrape;
  if (scrape)
    app.get('/metrics', async (req, reply) => {
      if (!scrape.authorized(req.headers.authorization)) {
        reply.header('WWW-Authenticate', 'Bearer realm="siteplane-metrics"');
        return sendProblem(req, reply, 'unauthenticated', 'GET /metrics needs the bearer token of SITEPLANE_METRICS_TOKEN.');
      }
      return reply.type(CONTENT_TYPE).send(await scrape.render());
    });
  // Event streams stay open until their client leaves: a closing service ends them (clients reconnect).
  app.addHook('preClose', (done) => {
    endEventStreams(app);
    done();
  });
  return { app, openapi };
}

function register(
  app: FastifyInstance,
  route: RouteDef,
  deps: HttpDeps,
  idempotency: IdempotencyKeys,
  limiter: RateLimiter,
): void {
  app.route({
    method: route.method,
    url: route.url,
    ...(deps.responseMismatch ? { onSend: responseCheck(route, deps.responseMismatch) } : {}),
    handler: async (req, reply) => {
      const actor = await authenticateRequest(
        req,
        reply,
        deps.authenticate,
        route.auth === 'none' ? 'read' : route.auth,
        limiter,
      );
      if (!actor) return reply;
      (req as typeof req & { actor: typeof actor }).actor = actor;
      assertQueryShape(req.query);
      if (route.upload) await receiveUpload(req, deps.useCases.artifacts);
      if (route.body && !route.bodyValidatedByDomain && req.method !== 'GET' && !(req.body instanceof ReceivedUpload))
        assertMatches(route.body, req.body ?? {});
      if (await idempotency.apply(req, reply, actor)) return reply;
      const result = await route.handler(req, reply, actor);
      if (reply.sent) return reply;
      return reply.type('application/json').send(JSON.stringify(result));
    },
  });
}

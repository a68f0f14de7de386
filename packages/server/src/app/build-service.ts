import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SiteTypeId } from '@siteplane/contract';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { loadSecretKey, SecretBox } from '../crypto/secret-box.js';
import { EgressPolicy, type ResolveHost } from '../egress/egress-policy.js';
import { guardedFetch } from '../egress/guarded-fetch.js';
import { cachedAuthenticator } from '../http/auth.js';
import { buildHttp } from '../http/build-http.js';
import { RateLimiter } from '../http/rate-limit.js';
import { type RateLimitSharing, rateLimitSharing } from '../http/rate-limit-sharing.js';
import type { ResponseMismatch } from '../http/response-check.js';
import { ApiPressure } from '../jobs/api-pressure.js';
import { DeploySlots } from '../jobs/deploy-slots.js';
import { EventRetention } from '../jobs/event-retention.js';
import { PostgresServerLocks } from '../jobs/postgres-server-locks.js';
import { JobQueue } from '../jobs/queue.js';
import { RenewalScheduler } from '../jobs/renewal-scheduler.js';
import { ServerLocks } from '../jobs/server-locks.js';
import { runSiteJob, type SiteJobDeps } from '../jobs/site-job.js';
import { WebhookDispatcher } from '../jobs/webhook-dispatcher.js';
import { Worker } from '../jobs/worker.js';
import { collectDatabaseGauges } from '../metrics/database-gauges.js';
import { MetricsListener } from '../metrics/metrics-listener.js';
import { scrapeTokenCheck } from '../metrics/scrape-token.js';
import { ServiceMetrics, stepLabel } from '../metrics/service-metrics.js';
import { deploySteps as serverDeploySteps } from '../provisioning/deploy/index.js';
import type { DeploySteps } from '../provisioning/deploy/plan.js';
import { detectFacts } from '../provisioning/detect-facts.js';
import type { Recipe } from '../provisioning/step.js';
import { engineOffer } from '../provisioning/steps/database/engine-offer.js';
import { ArtifactStore } from '../storage/artifact-store.js';
import { type ChangeNotifier, InProcessNotifier, PostgresNotifier } from '../storage/change-notifier.js';
import { openStorage, type Storage } from '../storage/database.js';
import { writeTransactions } from '../storage/group-commit.js';
import { IdempotencyStore } from '../storage/idempotency-store.js';
import { sharedListVersion } from '../storage/site-list-versions.js';
import { actorForToken } from '../storage/tokens.js';
import { deployKeyCleanup } from '../use-cases/deployments/deploy-key-cleanup.js';
import type { DeploymentTrigger, SourceBranchOf } from '../use-cases/deployments/deployment-trigger.js';
import { pushTrigger, sourceBranchOf } from '../use-cases/deployments/push-trigger.js';
import type { UseCaseDeps } from '../use-cases/deps.js';
import type { Integrations } from '../use-cases/integrations.js';
import { WEBHOOK_MAX_ANSWER_BYTES } from '../use-cases/outgoing-webhooks/post-event.js';
import { SiteListCache } from '../use-cases/sites/site-list-cache.js';
import { siteTls } from '../use-cases/ssl/site-tls.js';
import { type TlsSettings, tlsSettingsFrom } from '../use-cases/ssl/tls-settings.js';
import { providerFetch } from '../use-cases/vc-profiles/provider-fetch.js';
import { providerHooks } from '../use-cases/webhooks/provider-hook.js';
import { webhookCleanup } from '../use-cases/webhooks/webhook-cleanup.js';
import { AcmeOrderLog } from './acme-order-log.js';
import { type Clock, systemClock } from './clock.js';
import { type Config, sqliteFile } from './config.js';
import { executorFactory } from './executors.js';
import { realIntegrations } from './integrations.js';
import { createLogger } from './logger.js';
import { defaultRecipes } from './recipes.js';
import { serviceHealth } from './service-health.js';
import { SshExecutorPool } from './ssh-executor-pool.js';

export interface Service {
  app: FastifyInstance;
  storage: Storage;
  worker: Worker | null;
  /** Queues certificate renewals; runs in the worker process (null with SITEPLANE_WORKER=off). */
  renewals: RenewalScheduler | null;
  useCases: UseCaseDeps;
  logger: Logger;
  openapi: unknown;
  /** The service's metrics (updated whether or not a scrape is configured; cheap). */
  metrics: ServiceMetrics;
  /** On PostgreSQL: the rate limits' counts shared with the other processes each second (null on SQLite: one process). */
  rateLimitSharing: RateLimitSharing | null;
  /** SITEPLANE_METRICS_ADDRESS set: starts its listener and answers its address; otherwise null. */
  listenMetrics(): Promise<string | null>;
  close(): Promise<void>;
}

export interface ServiceOverrides {
  clock?: Clock;
  logger?: Logger;
  integrations?: Integrations;
  recipes?: (type: SiteTypeId) => Recipe;
  executorFor?: SiteJobDeps['executorFor'];
  leaseMs?: number;
  pollMs?: number;
  /** Certificate settings on top of the configuration's (tests: shorter ACME and DNS polls). */
  tls?: Partial<TlsSettings>;
  renewalIntervalMs?: number;
  /** How the egress policy resolves names (tests: a fixed table, DNS rebinding; default: the system's). */
  resolveHost?: ResolveHost;
  /** What push webhooks and trigger URLs start deployments with (default: not wired, 501). */
  deploymentTrigger?: DeploymentTrigger;
  /** The branch of a site's source, for webhooks without explicit branches (default: none). */
  sourceBranchOf?: SourceBranchOf;
  /** The deploy steps on the server (tests: a recording stand-in); unset until provisioning/deploy is wired here. */
  deploySteps?: DeploySteps;
  /** How often a running deployment looks for a cancel request (tests: shorter). */
  cancelPollMs?: number;
  /** How often GET /api/v1/events reads without a notification (tests: longer, so only notifications deliver). */
  streamPollMs?: number;
  /** Outgoing webhooks: the waits between attempts (tests: milliseconds) and how often endpoints are looked at. */
  webhookBackoffMs?: readonly number[];
  webhookPollMs?: number;
  /** Tests: each answer that does not match its documented schema (http/response-check.ts). */
  responseMismatch?: (mismatch: ResponseMismatch) => void;
}

/**
 * The built command (scripts/build.mjs) has its version written in, as its bundle has no
 * package.json beside it; run from the sources (tests, tsx) it is read from the package.
 */
export const VERSION =
  process.env.SITEPLANE_BUILT_VERSION ??
  (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The composition root: the only place that builds objects from configuration (ARCHITECTURE §1). */
export async function buildService(config: Config, overrides: ServiceOverrides = {}): Promise<Service> {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const clock = overrides.clock ?? systemClock;
  const storage = await openStorage({ databaseUrl: config.databaseUrl, sqliteFile: sqliteFile(config) });
  const secrets = new SecretBox(loadSecretKey(config.secretKey, config.dataDir));
  const queue = new JobQueue(storage.db, storage.dialect);
  let worker: Worker | null = null;
  // On PostgreSQL other processes write too: each list read checks the shared version (site-list-cache.ts).
  const siteLists = new SiteListCache(true, storage.dialect === 'postgres' ? sharedListVersion(storage.db) : null);
  const egress = new EgressPolicy(config.allowedTargets, overrides.resolveHost);
  const changes: ChangeNotifier =
    storage.dialect === 'postgres' && config.databaseUrl
      ? new PostgresNotifier(
          config.databaseUrl,
          (channel, topic) => sql`SELECT pg_notify(${channel}, ${topic})`.execute(storage.db),
          (error) =>
            logger.warn({ err: error }, 'change notifications: PostgreSQL LISTEN/NOTIFY failed; streams fall back to polling'),
        )
      : new InProcessNotifier();
  const artifacts = new ArtifactStore(join(config.dataDir, 'artifacts'), config.artifactMaxBytes);
  const useCases: UseCaseDeps = {
    db: storage.db,
    dialect: storage.dialect,
    secrets,
    clock,
    // In the owned-zone mode temporary domains are `<label>.<FREE_DOMAIN_ZONE>` (no IP embedded).
    freeDomainBase: config.freeDomainZone ?? config.freeDomainBase,
    freeDomainDnsProfile: config.freeDomainDnsProfile,
    jobEnqueued: () => worker?.wake(),
    integrations: overrides.integrations ?? realIntegrations(config, egress),
    siteLists,
    writes: writeTransactions(storage.db, storage.dialect),
    databaseEngines: engineOffer(config.databaseEngineSource),
    phpSource: config.phpSource,
    egress,
    localServer: config.localServer,
    quotas: config.quotas,
    changes,
    freeZoneBudget: config.freeZoneBudget,
    publicUrl: config.publicUrl,
    artifacts,
    streamPollMs: overrides.streamPollMs,
  };
  const sshPool = new SshExecutorPool();
  const metrics = new ServiceMetrics();
  const acmeOrders = new AcmeOrderLog();
  const jobDeps: SiteJobDeps = {
    db: storage.db,
    secrets,
    clock,
    recipes: overrides.recipes ?? defaultRecipes,
    executorFor: overrides.executorFor ?? executorFactory(secrets, sshPool, { egress, localServer: config.localServer }),
    detectFacts: async (exec, server) => (server.connection === 'dry-run' ? null : detectFacts(exec)),
    settings: {
      wordpressSource: config.wordpressSource,
      phpmyadminSource: config.phpmyadminSource,
      npmRegistry: config.npmRegistry,
      nodeSource: config.nodeSource,
      longCommandTimeoutMs: config.longCommandMinutes * 60_000,
    },
    locks: storage.dialect === 'postgres' ? new PostgresServerLocks(storage.db) : new ServerLocks(),
    siteChanged: (server) => siteLists.invalidate(server),
    changes,
    deploySteps: overrides.deploySteps ?? serverDeploySteps,
    artifacts,
    cancelPollMs: overrides.cancelPollMs,
    observe: {
      step: (operation, step, outcome, seconds) =>
        metrics.stepDuration.observe({ operation, step: stepLabel(step), outcome }, seconds),
      operation: (kind, outcome) => {
        if (kind === 'deploy' || kind === 'rollback') metrics.deployments.inc({ kind, outcome });
      },
    },
  };
  jobDeps.deploySlots = new DeploySlots(jobDeps.locks, config.deploysPerServer);
  const keyCleanup = deployKeyCleanup({ db: storage.db, secrets, clock, fetch: providerFetch(egress) });
  const hookCleanup = webhookCleanup(storage.db, providerHooks(useCases));
  jobDeps.afterDelete = async (site) => [...(await keyCleanup(site)), ...(await hookCleanup(site))];
  jobDeps.extension = siteTls({
    db: storage.db,
    dialect: storage.dialect,
    secrets,
    clock,
    settings: { ...tlsSettingsFrom(config), ...overrides.tls },
    dnsProvider: useCases.integrations.dnsProvider,
    egress,
    siteChanged: jobDeps.siteChanged,
    orderOutcome: (outcome) => {
      acmeOrders.record(outcome);
      metrics.acmeOrders.inc({ outcome });
    },
  });
  let renewals: RenewalScheduler | null = null;
  let eventRetention: EventRetention | null = null;
  let webhooks: WebhookDispatcher | null = null;
  // Tells the worker when the API beside it is busy (the server's requests stamp it, below).
  const apiPressure = new ApiPressure();
  if (config.runWorker) {
    eventRetention = new EventRetention({ db: storage.db, clock, log: logger, retentionDays: config.eventRetentionDays });
    webhooks = new WebhookDispatcher(
      {
        db: storage.db,
        dialect: storage.dialect,
        secrets,
        clock,
        log: logger,
        fetch: guardedFetch(egress, { maxBodyBytes: WEBHOOK_MAX_ANSWER_BYTES }),
        backoffMs: overrides.webhookBackoffMs,
        changes,
      },
      overrides.webhookPollMs ?? overrides.pollMs,
    );
    worker = new Worker(queue, (job, signal) => runSiteJob(jobDeps, job, signal), clock, logger, {
      concurrency: config.workerConcurrency,
      leaseMs: overrides.leaseMs ?? config.jobLeaseMs,
      pollMs: overrides.pollMs ?? 1_000,
      observe: (job, outcome, seconds) => metrics.jobDuration.observe({ kind: job.kind, outcome }, seconds),
      apiPressure,
    });
    renewals = new RenewalScheduler(
      {
        db: storage.db,
        clock,
        log: logger,
        enqueued: (servers) => {
          for (const server of servers) siteLists.invalidate(server);
          worker?.wake();
        },
      },
      overrides.renewalIntervalMs,
    );
  }
  metrics.registry.collect(async () => {
    metrics.sshConnections.set({}, sshPool.openConnections);
    await collectDatabaseGauges(storage.db, clock, metrics);
  });
  const render = () => metrics.registry.render();
  const authorized = config.metrics.token ? scrapeTokenCheck(config.metrics.token) : null;
  const exported = config.metrics.token !== null || config.metrics.address !== null;
  // With an address of its own, /metrics is served only there; on the API's listener only with a token.
  const scrapeOnApi = authorized && !config.metrics.address ? { authorized, render } : null;
  const metricsListener = config.metrics.address ? new MetricsListener(render, authorized) : null;
  const now = () => clock.now().getTime();
  const limiter = new RateLimiter(config.rateLimit, config.rateLimitAddress, now);
  const limited = config.rateLimit > 0 || config.rateLimitAddress > 0;
  const sharing = storage.dialect === 'postgres' && limited ? rateLimitSharing(limiter, storage.db, logger, now) : null;
  const { app, openapi } = buildHttp({
    useCases,
    authenticate: cachedAuthenticator((token) => actorForToken(storage.db, token)),
    idempotency: new IdempotencyStore(storage.db),
    clock,
    logger,
    version: VERSION,
    limiter,
    trustedProxies: config.trustedProxies.map((range) => range.text),
    deploymentTrigger: overrides.deploymentTrigger ?? pushTrigger(useCases),
    sourceBranchOf: overrides.sourceBranchOf ?? sourceBranchOf(useCases),
    health: serviceHealth({ db: storage.db, clock, worker, acme: acmeOrders }),
    metrics: exported ? { requestDuration: metrics.requestDuration, scrape: scrapeOnApi } : undefined,
    responseMismatch: overrides.responseMismatch,
  });
  if (worker) app.server.on('request', () => apiPressure.requestArrived());
  worker?.start();
  renewals?.start();
  // Uploads of deployments that ended while no worker ran here (or of a crash mid-request).
  if (config.runWorker)
    void artifacts.sweep(storage.db).catch((error) => logger.warn({ err: error }, 'removing finished deploy artifacts failed'));
  eventRetention?.start();
  webhooks?.start();
  sharing?.start();
  return {
    app,
    storage,
    worker,
    renewals,
    useCases,
    logger,
    openapi,
    metrics,
    rateLimitSharing: sharing,
    async listenMetrics() {
      const address = config.metrics.address;
      return metricsListener && address ? metricsListener.listen(address.host, address.port) : null;
    },
    async close() {
      await metricsListener?.close();
      await app.close();
      await sharing?.stop();
      await renewals?.stop();
      await eventRetention?.stop();
      await webhooks?.stop();
      await worker?.stop();
      await sshPool.closeAll();
      await changes.close();
      await storage.close();
    },
  };
}

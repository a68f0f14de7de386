import { MetricsRegistry } from './registry.js';

/** Seconds: from a fast cached read (~1 ms) to a slow create under load. */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds: a dry-run step takes milliseconds, an apt install of a database engine minutes. */
const WORK_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800];

export type JobOutcome = 'done' | 'failed' | 'retry' | 'lease_lost';
export type OperationOutcome = 'succeeded' | 'failed' | 'cancelled';

/**
 * Every metric the service exports (README "Operating: metrics and health"). The instruments the
 * code updates as things happen; what the database knows (queue, certificates) is read by the
 * collectors that app/ registers, at scrape time.
 */
export class ServiceMetrics {
  readonly registry = new MetricsRegistry();

  readonly requestDuration = this.registry.histogram(
    'siteplane_http_request_duration_seconds',
    'HTTP requests by route pattern, method and status class, from arrival to the response sent.',
    ['route', 'method', 'status'],
    REQUEST_BUCKETS,
  );
  readonly jobDuration = this.registry.histogram(
    'siteplane_job_duration_seconds',
    'Job runs in this process by kind and outcome (done, failed, retry, lease_lost).',
    ['kind', 'outcome'],
    WORK_BUCKETS,
  );
  readonly stepDuration = this.registry.histogram(
    'siteplane_step_duration_seconds',
    'Provisioning steps run in this process, by operation kind, step (names without versions) and outcome.',
    ['operation', 'step', 'outcome'],
    WORK_BUCKETS,
  );
  readonly deployments = this.registry.counter(
    'siteplane_deployments_total',
    'Deployments and rollbacks finished in this process, by kind and outcome (succeeded, failed, cancelled).',
    ['kind', 'outcome'],
  );
  readonly acmeOrders = this.registry.counter(
    'siteplane_acme_orders_total',
    'ACME certificate orders made by this process, by outcome (issued or the error kind).',
    ['outcome'],
  );
  readonly jobs = this.registry.gauge(
    'siteplane_jobs',
    'Unfinished jobs in the database (all processes), by kind and status (queued, running).',
    ['kind', 'status'],
  );
  readonly oldestDueJobAge = this.registry.gauge(
    'siteplane_job_queue_oldest_due_age_seconds',
    'How long the oldest queued job whose time has come has been waiting (0 when none waits).',
  );
  readonly certificates = this.registry.gauge(
    'siteplane_certificates',
    'Stored certificates by days to expiry: expired, 0-7, 7-14, 14-30, 30+.',
    ['days_to_expiry'],
  );
  readonly sshConnections = this.registry.gauge(
    'siteplane_ssh_connections_open',
    'SSH connections this process holds open to servers (one per server, shared by its jobs).',
  );
  readonly databaseUp = this.registry.gauge(
    'siteplane_database_up',
    '1 when the last scrape reached the database, 0 when it did not.',
  );
}

/**
 * A step's name without what varies per site (versions, a hook's own name after `:`), so the
 * step label stays one of a few dozen values whatever users name their hooks.
 */
export function stepLabel(name: string): string {
  const head = name.split(':')[0] ?? name;
  return head
    .split(' ')
    .filter((word) => word !== '' && !/\d/.test(word))
    .join(' ');
}

import type { FastifyInstance } from 'fastify';
import type { Histogram, HistogramChild } from './registry.js';

const STATUS_CLASSES = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx'];

/**
 * Observes every response's latency (reply.elapsedTime, which Fastify measures anyway) under the
 * route's pattern (`/api/v1/sites/:uuid`), never the raw URL: label values must stay few. Requests
 * no route matched count as `unmatched`. Per request: one short string, one map lookup, a bucket walk.
 */
export function installRequestMetrics(app: FastifyInstance, histogram: Histogram<'route' | 'method' | 'status'>): void {
  const children = new Map<string, HistogramChild>();
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    const status = STATUS_CLASSES[Math.floor(reply.statusCode / 100)] ?? 'other';
    const key = `${req.method} ${status} ${route}`;
    let child = children.get(key);
    if (!child) {
      child = histogram.child({ route, method: req.method, status });
      children.set(key, child);
    }
    child.observe(reply.elapsedTime / 1000);
    done();
  });
}

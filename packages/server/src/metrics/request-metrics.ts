import type { FastifyInstance } from 'fastify';
import type { Histogram, HistogramChild } from './registry.js';

const STATUS_CLASSES = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx'];

/** Records one answer's latency in seconds under its route's pattern, method and status class. */
export type ObserveRequest = (method: string, route: string, statusCode: number, seconds: number) => void;

/**
 * Latencies go under the route's pattern (`/api/v1/sites/:uuid`), never the raw URL: label values
 * must stay few. Per request: one short string, one map lookup, a bucket walk.
 */
export function requestObserver(histogram: Histogram<'route' | 'method' | 'status'>): ObserveRequest {
  const children = new Map<string, HistogramChild>();
  return (method, route, statusCode, seconds) => {
    const status = STATUS_CLASSES[Math.floor(statusCode / 100)] ?? 'other';
    const key = `${method} ${status} ${route}`;
    let child = children.get(key);
    if (!child) {
      child = histogram.child({ route, method, status });
      children.set(key, child);
    }
    child.observe(seconds);
  };
}

/**
 * Observes every response Fastify sends (reply.elapsedTime, which Fastify measures anyway); requests
 * no route matched count as `unmatched`.
 */
export function installRequestMetrics(app: FastifyInstance, observe: ObserveRequest): void {
  app.addHook('onResponse', (req, reply, done) => {
    observe(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

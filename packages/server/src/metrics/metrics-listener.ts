import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CONTENT_TYPE } from './exposition.js';

/**
 * SITEPLANE_METRICS_ADDRESS: a listener of its own that serves GET /metrics and nothing else, so
 * the scrape can be bound to a private interface while the API faces the proxy. With
 * SITEPLANE_METRICS_TOKEN set as well, the token is required here too.
 */
export class MetricsListener {
  private server: Server | null = null;

  constructor(
    private readonly render: () => Promise<string>,
    private readonly authorized: ((authorization: string | undefined) => boolean) | null,
  ) {}

  /** Starts listening; answers the address (`http://host:port`) it listens on. */
  async listen(host: string, port: number): Promise<string> {
    const server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
        return;
      }
      if (this.authorized && !this.authorized(req.headers.authorization)) {
        res.writeHead(401, { 'www-authenticate': 'Bearer realm="siteplane-metrics"' }).end();
        return;
      }
      this.render().then(
        (body) => res.writeHead(200, { 'content-type': CONTENT_TYPE }).end(req.method === 'HEAD' ? undefined : body),
        () => res.writeHead(500).end(),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    const address = server.address() as AddressInfo;
    return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

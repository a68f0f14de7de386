/**
 * What the DNS provider stand-ins share: an HTTP server on 127.0.0.1 with a random port, the records
 * they hold, the `onChange` hook (a system test mirrors TXT records into pebble-challtestsrv with it),
 * and rate limiting on demand.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One record as a resolver would see it: fully qualified lower-case name, TXT values unquoted. */
export interface StandinRecord {
  id: string;
  zone: string;
  name: string;
  type: string;
  value: string;
  ttl: number;
}

export interface StandinOptions {
  /** Zones (domains) the account hosts. */
  zones: string[];
  /** Called with every record after each change. */
  onChange?: (records: StandinRecord[]) => void;
}

export interface DnsStandin<Credentials> {
  /** Pass as `apiBase`. */
  url: string;
  /** Credentials the stand-in accepts. */
  credentials: Credentials;
  /** A copy of the records held now. */
  records(): StandinRecord[];
  /** The next `count` requests get the provider's rate-limit answer, asking for `retryAfterSeconds` where it does. */
  rateLimit(count: number, retryAfterSeconds: number): void;
  /** `METHOD /path?query` of every request received, to check paging. */
  requests: string[];
  close(): Promise<void>;
}

export interface Incoming {
  method: string;
  /** Path below the stand-in's base, without the query. */
  path: string;
  query: URLSearchParams;
  /** Path and query exactly as received (request signatures cover them). */
  rawUrl: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export type Handler = (request: Incoming) => Reply | Promise<Reply>;

/** Serves `handler` under `basePath`; answers 500 with the stack when the stand-in itself fails. */
export async function serve(
  basePath: string,
  handler: Handler,
): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://standin');
      requests.push(`${req.method} ${url.pathname}${url.search}`);
      const path = url.pathname.startsWith(basePath) ? url.pathname.slice(basePath.length) || '/' : url.pathname;
      const incoming: Incoming = {
        method: req.method ?? 'GET',
        path,
        query: url.searchParams,
        rawUrl: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      Promise.resolve()
        .then(() => (url.pathname.startsWith(basePath) ? handler(incoming) : { status: 404, body: 'not under the API base' }))
        .then((reply) => send(res, reply))
        .catch((error: unknown) =>
          send(res, { status: 500, body: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${basePath}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function send(res: ServerResponse, reply: Reply): void {
  res.writeHead(reply.status, reply.headers ?? {});
  res.end(reply.body ?? '');
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/** Counts down the requests that should be rate limited. */
export class Throttle {
  private remaining = 0;
  retryAfterSeconds = 0;

  set(count: number, retryAfterSeconds: number): void {
    this.remaining = count;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** True when this request is to be refused. */
  take(): boolean {
    if (this.remaining <= 0) return false;
    this.remaining--;
    return true;
  }
}

/** Records of one account, with ids in the provider's style, reporting every change. */
export class RecordStore {
  private readonly items: StandinRecord[] = [];
  readonly zones: string[];

  constructor(
    zones: string[],
    private readonly newId: () => string,
    private readonly onChange?: (records: StandinRecord[]) => void,
  ) {
    this.zones = zones.map((z) => z.toLowerCase());
  }

  all(): StandinRecord[] {
    return this.items.map((r) => ({ ...r }));
  }

  inZone(zone: string): StandinRecord[] {
    return this.items.filter((r) => r.zone === zone);
  }

  add(record: Omit<StandinRecord, 'id'>): StandinRecord {
    const stored = { ...record, id: this.newId() };
    this.items.push(stored);
    this.onChange?.(this.all());
    return { ...stored };
  }

  remove(id: string): boolean {
    const index = this.items.findIndex((r) => r.id === id);
    if (index < 0) return false;
    this.items.splice(index, 1);
    this.onChange?.(this.all());
    return true;
  }
}

export const isIpv4 = (value: string): boolean =>
  /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(value) && value.split('.').every((part) => Number(part) <= 255);

/** `a.b.example.com` in `example.com` → `a.b`; the apex → ''. */
export function relative(name: string, zone: string): string {
  return name === zone ? '' : name.slice(0, -(zone.length + 1));
}

export function inZone(name: string, zone: string): boolean {
  return name === zone || name.endsWith(`.${zone}`);
}

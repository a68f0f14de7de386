/**
 * The HTTP plumbing every provider stand-in shares: a node:http server on 127.0.0.1 with a random
 * port, a log of what it was asked (so tests can assert If-None-Match was sent and 304 served),
 * entity tags, page slicing, Link headers, and a rate-limit budget each stand-in reports in its
 * provider's own words.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandinResponse {
  status: number;
  headers?: Record<string, string>;
  /** Serialised as JSON unless it is already a string. */
  body?: unknown;
}

export interface RecordedRequest {
  method: string;
  /** Path and query exactly as received (percent-encoding kept). */
  url: string;
  ifNoneMatch: string | null;
  headers: IncomingHttpHeaders;
  status: number;
  /** The request body as text ('' for none). */
  body: string;
}

/** `body` is the request's body as text, read whole before the handler runs. */
export type Handler = (request: IncomingMessage, url: URL, body: string) => StandinResponse;

export class StandinServer {
  readonly requests: RecordedRequest[] = [];

  private constructor(
    private readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(handler: Handler): Promise<StandinServer> {
    let standin: StandinServer | undefined;
    const server = createServer(async (request, response) => {
      const url = new URL(request.url ?? '/', `http://${request.headers.host ?? '127.0.0.1'}`);
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      let answer: StandinResponse;
      try {
        answer = handler(request, url, body);
      } catch (error) {
        answer = { status: 500, body: { message: String(error) } };
      }
      standin?.requests.push({
        method: request.method ?? 'GET',
        url: request.url ?? '/',
        ifNoneMatch: header(request, 'if-none-match'),
        headers: request.headers,
        status: answer.status,
        body,
      });
      const isText = typeof answer.body === 'string';
      const payload = answer.body === undefined ? '' : isText ? (answer.body as string) : JSON.stringify(answer.body);
      response.writeHead(answer.status, {
        ...(answer.body === undefined
          ? {}
          : { 'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8' }),
        ...answer.headers,
      });
      response.end(answer.status === 304 ? undefined : payload);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    standin = new StandinServer(server, `http://127.0.0.1:${port}`);
    return standin;
  }

  /** Requests whose path (without query) matches. */
  requestsTo(pathPrefix: string): RecordedRequest[] {
    return this.requests.filter((r) => r.url.startsWith(pathPrefix));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve, reject) => this.server.close((error) => (error ? reject(error) : resolve())));
  }
}

export function header(request: IncomingMessage, name: string): string | null {
  const value = request.headers[name];
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
}

/** A port nothing listens on: bound once by us, then released. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Adds an entity tag to a 200 JSON answer and answers 304 when If-None-Match names it (RFC 9110
 * weak comparison: `W/"x"` matches `"x"`).
 */
export function conditional(request: IncomingMessage, answer: StandinResponse, weak: boolean): StandinResponse {
  if (answer.status !== 200) return answer;
  const tag = `"${createHash('sha1').update(JSON.stringify(answer.body)).digest('hex')}"`;
  const etag = weak ? `W/${tag}` : tag;
  const headers = { ...answer.headers, etag };
  const sent = header(request, 'if-none-match');
  const matches = sent?.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === tag) ?? false;
  return matches ? { status: 304, headers } : { ...answer, headers };
}

/** Page `page` (1-based) of `items`, `perPage` a page; `last` is the number of the last page (≥ 1). */
export function slice<T>(items: readonly T[], page: number, perPage: number): { items: T[]; last: number } {
  const last = Math.max(1, Math.ceil(items.length / perPage));
  return { items: items.slice((page - 1) * perPage, page * perPage), last };
}

/** Query integer with a default and a ceiling, as providers clamp `per_page`/`limit`. */
export function intParam(url: URL, name: string, fallback: number, max = Number.POSITIVE_INFINITY): number {
  const value = Number.parseInt(url.searchParams.get(name) ?? '', 10);
  return Number.isFinite(value) && value > 0 ? Math.min(value, max) : fallback;
}

/** RFC 8288 Link header with next/prev/first/last for page-numbered lists. */
export function pageLinks(url: URL, page: number, last: number, pageParam = 'page'): string {
  const at = (n: number) => {
    const target = new URL(url.href);
    target.searchParams.set(pageParam, String(n));
    return target.href;
  };
  const links: string[] = [];
  if (page < last) links.push(`<${at(page + 1)}>; rel="next"`, `<${at(last)}>; rel="last"`);
  if (page > 1) links.push(`<${at(1)}>; rel="first"`, `<${at(page - 1)}>; rel="prev"`);
  return links.join(', ');
}

/**
 * The stand-ins' rate-limit budget: `remaining` requests until the reset time, then refusals.
 * Unlimited until a test sets it.
 */
export class RateBudget {
  remaining = Number.POSITIVE_INFINITY;
  resetAtEpochSeconds = 0;

  /** Allow `requests` more, then refuse until `resetInSeconds` from now. */
  limit(requests: number, resetInSeconds = 120): void {
    this.remaining = requests;
    this.resetAtEpochSeconds = Math.ceil(Date.now() / 1000) + resetInSeconds;
  }

  get exhausted(): boolean {
    return this.remaining <= 0;
  }

  /** Back to unlimited. */
  clear(): void {
    this.remaining = Number.POSITIVE_INFINITY;
    this.resetAtEpochSeconds = 0;
  }

  spend(): void {
    this.remaining -= 1;
  }

  get secondsToReset(): number {
    return Math.max(0, this.resetAtEpochSeconds - Math.ceil(Date.now() / 1000));
  }
}

/**
 * A `fetch` for the hosted VC providers that connects only where the egress policy allows, checked
 * when the socket connects (node:http's `lookup`), not before: a baseUrl whose name rebinds to a
 * forbidden address after a first good answer is refused on the next connection. Global fetch
 * cannot take a lookup without the undici package, so this is node:http(s) behind fetch's shape:
 * the subset JsonClient uses (method, headers, string body, signal; redirects never followed).
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { EgressPolicy } from './egress-policy.js';

/** An API answer beyond this is not one a provider sends; refused rather than buffered (callers may lower it). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function guardedFetch(policy: EgressPolicy, options: { maxBodyBytes?: number } = {}): typeof fetch {
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };
  return (async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError(`unsupported protocol ${url.protocol}`);
    // A literal address needs no lookup, so node would not ask ours: checked here.
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host)) policy.assertAddress(host);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<Response>((resolve, reject) => {
      const request = client.request(
        url,
        {
          method: init.method ?? 'GET',
          headers,
          agent: agents[url.protocol as 'http:' | 'https:'],
          lookup: policy.lookup,
          signal: init.signal ?? undefined,
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBody) request.destroy(new Error(`the answer is larger than ${maxBody} bytes`));
            else chunks.push(chunk);
          });
          response.on('error', reject);
          response.on('end', () => {
            try {
              resolve(toResponse(response, Buffer.concat(chunks), maxBody));
            } catch (error) {
              reject(error);
            }
          });
        },
      );
      request.on('error', reject);
      if (typeof init.body === 'string') request.write(init.body);
      request.end();
    });
  }) as typeof fetch;
}

function toResponse(response: http.IncomingMessage, raw: Buffer, maxBody: number): Response {
  const status = response.statusCode ?? 502;
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const encoding = (response.headers['content-encoding'] ?? '').toLowerCase();
  // The cap holds after decompression too: a few kilobytes of gzip can inflate to gigabytes.
  const limit = { maxOutputLength: maxBody };
  const body =
    encoding === 'gzip'
      ? gunzipSync(raw, limit)
      : encoding === 'deflate'
        ? inflateSync(raw, limit)
        : encoding === 'br'
          ? brotliDecompressSync(raw, limit)
          : raw;
  if (body !== raw) {
    headers.delete('content-encoding');
    headers.delete('content-length');
  }
  return new Response(NULL_BODY.has(status) ? null : new Uint8Array(body), {
    status,
    statusText: response.statusMessage,
    headers,
  });
}

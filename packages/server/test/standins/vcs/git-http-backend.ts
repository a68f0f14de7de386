/**
 * git's smart HTTP over loopback: a node:http server that runs `git http-backend` as a CGI program
 * per request (execFile-style spawn, no shell), as Apache or nginx+fcgiwrap would. Optionally
 * demands HTTP Basic credentials, so the `git` provider's credentials-in-URL and auth failures are
 * tested against a real git client. Counts requests so tests can see the cache at work.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { header } from './standin-server.js';

export interface GitHttpBackend {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** Requests answered so far (each ls-remote makes two with protocol v2). */
  requests: number;
  close(): Promise<void>;
}

export async function startGitHttpBackend(root: string, basicAuth?: { user: string; password: string }): Promise<GitHttpBackend> {
  const children = new Set<ChildProcess>();
  const backend = { origin: '', requests: 0, close: async () => {} };
  const server = createServer((request, response) => {
    backend.requests += 1;
    if (basicAuth && !authorised(request, basicAuth)) {
      response.writeHead(401, { 'www-authenticate': 'Basic realm="git"', 'content-type': 'text/plain' });
      response.end('Authentication required\n');
      return;
    }
    cgi(root, request, response, children);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  backend.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  backend.close = async () => {
    for (const child of children) if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return backend;
}

function authorised(request: IncomingMessage, expected: { user: string; password: string }): boolean {
  const basic = /^Basic (.+)$/i.exec(header(request, 'authorization') ?? '');
  return basic !== null && Buffer.from(basic[1] ?? '', 'base64').toString('utf8') === `${expected.user}:${expected.password}`;
}

function cgi(root: string, request: IncomingMessage, response: ServerResponse, children: Set<ChildProcess>): void {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    REQUEST_METHOD: request.method ?? 'GET',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.slice(1),
    CONTENT_TYPE: header(request, 'content-type') ?? '',
    REMOTE_ADDR: '127.0.0.1',
    GIT_PROTOCOL: header(request, 'git-protocol') ?? '',
    HTTP_CONTENT_ENCODING: header(request, 'content-encoding') ?? '',
  };
  const length = header(request, 'content-length');
  if (length !== null) env.CONTENT_LENGTH = length;
  const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  request.pipe(child.stdin);
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.once('close', () => {
    const output = Buffer.concat(chunks);
    const end = output.indexOf('\r\n\r\n') >= 0 ? output.indexOf('\r\n\r\n') : output.indexOf('\n\n');
    const separator = output.indexOf('\r\n\r\n') >= 0 ? 4 : 2;
    if (end < 0) {
      response.writeHead(502).end();
      return;
    }
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of output.subarray(0, end).toString('latin1').split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
      else headers[name] = value;
    }
    response.writeHead(status, headers);
    response.end(output.subarray(end + separator));
  });
}

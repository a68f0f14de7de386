/**
 * A stand-in ACME CA on loopback for transport tests: a real HTTPS server whose certificate comes
 * from a throw-away CA made with openssl, answering the directory and nonce, and whatever the test
 * scripts for newAccount. Only what reaches the network is faked, so acme-client runs unchanged.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCa {
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** A CA and a certificate for 127.0.0.1 signed by it. */
export function makeTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'siteplane-tls-'));
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  try {
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
    run('req', '-x509', ...ec, '-days', '2', '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=fake ACME CA');
    run('req', '-new', ...ec, '-keyout', 'key.pem', '-out', 'req.csr', '-subj', '/CN=127.0.0.1');
    writeFileSync(join(dir, 'ext'), 'subjectAltName=IP:127.0.0.1\n');
    const sign = ['-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'ext'];
    run('x509', '-req', '-in', 'req.csr', ...sign, '-out', 'cert.pem');
    const read = (name: string) => readFileSync(join(dir, name), 'utf8');
    return { caPem: read('ca.pem'), certPem: read('cert.pem'), keyPem: read('key.pem') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type AccountAnswer = { status: number; headers?: Record<string, string>; body?: unknown } | 'hang';

export interface FakeCa {
  directoryUrl: string;
  /** Paths requested, in order (`GET /dir`, `POST /acct`). */
  requests: string[];
  close(): Promise<void>;
}

export async function startFakeCa(ca: TestCa, answer: () => AccountAnswer): Promise<FakeCa> {
  const requests: string[] = [];
  let nonce = 0;
  const server = https.createServer({ cert: ca.certPem, key: ca.keyPem }, (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    res.setHeader('Replay-Nonce', `nonce-${++nonce}`);
    if (req.url === '/dir') {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ newNonce: `${base}/nonce`, newAccount: `${base}/acct`, newOrder: `${base}/order` }));
      return;
    }
    if (req.url === '/nonce') {
      res.end();
      return;
    }
    const reply = answer();
    if (reply === 'hang') return;
    req.resume();
    res.writeHead(reply.status, { 'Content-Type': 'application/problem+json', ...reply.headers });
    res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    directoryUrl: `https://127.0.0.1:${port}/dir`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

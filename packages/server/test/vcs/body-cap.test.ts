/**
 * A provider that sends more than MAX_VCS_BODY_BYTES: a local HTTP server that streams past the
 * cap (with and without a Content-Length), and a stand-in git that prints past it. Both fail as
 * provider_error instead of being buffered whole.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_VCS_BODY_BYTES } from '../../src/vcs/body-cap.js';
import { lsRemote } from '../../src/vcs/git-ls-remote.js';
import { parseGitRemote } from '../../src/vcs/git-remote.js';
import { JsonClient } from '../../src/vcs/json-client.js';
import { expectKind } from './contract.js';

const CHUNK = Buffer.alloc(64 * 1024, 0x20);
let server: Server;
let base: string;
let bytesSent = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.includes('declared')) res.setHeader('content-length', String(MAX_VCS_BODY_BYTES * 4));
    res.setHeader('content-type', 'application/json');
    // Streams up to four times the cap; a reader that stops at the cap closes the socket early.
    let sent = 0;
    const pump = () => {
      while (sent < MAX_VCS_BODY_BYTES * 4) {
        sent += CHUNK.length;
        bytesSent += CHUNK.length;
        if (!res.write(CHUNK)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const client = () => new JsonClient({ provider: 'Gitea', baseUrl: `${base}/api/v1`, headers: {}, secrets: [] });

describe('byte cap on provider answers', () => {
  it('stops reading a streamed answer past the cap and fails as provider_error', async () => {
    bytesSent = 0;
    const error = await expectKind(client().get('/repos/a/b/branches'), 'provider_error', []);
    expect(error.message).toContain(`more than ${MAX_VCS_BODY_BYTES} bytes`);
    expect(bytesSent).toBeLessThan(MAX_VCS_BODY_BYTES * 4);
  });

  it('refuses an answer whose Content-Length already exceeds the cap', async () => {
    await expectKind(client().get('/repos/a/b/declared'), 'provider_error', []);
  });

  it('fails a git command whose output passes the cap as provider_error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'siteplane-bigit-'));
    const git = join(dir, 'git');
    // A stand-in git that answers ls-remote with far more refs than the cap allows.
    writeFileSync(git, `#!/bin/sh\nhead -c ${MAX_VCS_BODY_BYTES * 2} /dev/zero | tr '\\\\0' 'a'\n`);
    chmodSync(git, 0o755);
    const remote = parseGitRemote('https://git.example/acme/site.git');
    if (remote === null) throw new Error('remote did not parse');
    const error = await expectKind(lsRemote(remote, { gitBinary: git }), 'provider_error', []);
    expect(error.message).toContain(`more than ${MAX_VCS_BODY_BYTES} bytes`);
  });
});

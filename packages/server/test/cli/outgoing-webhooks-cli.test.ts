/**
 * `siteplane webhooks add|list|get|deliveries|pause|resume|update|rotate-secret|resend|remove` as a script runs them (JSON on a pipe): the
 * real CLI as a child process, through the SDK, against the service on 127.0.0.1, and a receiver on
 * loopback that the worker delivers to. A refused URL reaches the user as the field's code.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOOPBACK_TARGETS, seedServer, startTestService, type TestService } from '../support/test-service.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
let s: TestService;
let url: string;
let receiver: http.Server;
let hookUrl: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function siteplane(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      TSX,
      ['packages/cli/src/main.ts', ...args],
      { cwd: ROOT, env: { ...process.env, SITEPLANE_URL: url, SITEPLANE_TOKEN: s.token }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function json<T>(run: Run): T {
  if (run.code !== 0) throw new Error(`exit ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cli`;
  s = await startTestService({ env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS } });
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await s?.stop();
  await new Promise((r) => receiver?.close(r));
});

describe('siteplane webhooks (outgoing)', () => {
  it('adds an endpoint (secret shown once), lists it, shows its deliveries and removes it', async () => {
    const refused = await siteplane(['webhooks', 'add', 'http://example.com/hook', '--event', 'site.*']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/url/);
    expect(refused.stderr).toMatch(/https/);

    const added = json<{ uuid: string; secret: string; events: string[] }>(
      await siteplane(['webhooks', 'add', hookUrl, '--event', 'site.created']),
    );
    expect(added.secret).toMatch(/^whsec_/);
    expect(added.events).toEqual(['site.created']);
    const listed = json<{ uuid: string; secret?: string }[]>(await siteplane(['webhooks', 'list']));
    expect(listed.map((w) => w.uuid)).toEqual([added.uuid]);
    expect(listed[0]).not.toHaveProperty('secret');

    const ids = await seedServer(s);
    const site = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { authorization: `Bearer ${s.token}` },
      payload: { ...ids, type: 'static-html', domain: 'cli-hook.example.com', ssl: false, options: {} },
    });
    expect(site.statusCode, site.body).toBe(202);
    const end = Date.now() + 15_000;
    let deliveries: { event_type: string; status_code: number }[] = [];
    while (deliveries.length === 0 && Date.now() < end) {
      deliveries = json(await siteplane(['webhooks', 'deliveries', added.uuid]));
    }
    expect(deliveries[0]).toMatchObject({ event_type: 'site.created', status_code: 200, attempt: 1 });

    // Managing it: pause and resume, new events, a rotated secret (shown once), a resend.
    expect(json(await siteplane(['webhooks', 'pause', added.uuid]))).toMatchObject({ enabled: false });
    expect(json(await siteplane(['webhooks', 'resume', added.uuid]))).toMatchObject({ enabled: true });
    const updated = json(await siteplane(['webhooks', 'update', added.uuid, '--event', 'site.*']));
    expect(updated).toMatchObject({ url: hookUrl, events: expect.arrayContaining(['site.created', 'site.deleted']) });
    const rotated = json<{ secret: string; previous_secret_expires_at: string | null }>(
      await siteplane(['webhooks', 'rotate-secret', added.uuid, '--grace', '60']),
    );
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(added.secret);
    expect(rotated.previous_secret_expires_at).not.toBeNull();
    expect(json(await siteplane(['webhooks', 'get', added.uuid]))).not.toHaveProperty('secret');
    const first = deliveries[0] as unknown as { uuid: string };
    const resent = json(await siteplane(['webhooks', 'resend', added.uuid, first.uuid]));
    expect(resent).toMatchObject({ event_type: 'site.created', status_code: 200, resend_of: first.uuid });
    const unknown = await siteplane(['webhooks', 'resend', added.uuid, '00000000-0000-4000-8000-000000000000']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/not found/i);

    expect((await siteplane(['webhooks', 'remove', added.uuid])).code).toBe(0);
    expect(json<unknown[]>(await siteplane(['webhooks', 'list']))).toEqual([]);
    // Sixteen runs of the command, each a tsx start on a loaded machine.
  }, 180_000);
});

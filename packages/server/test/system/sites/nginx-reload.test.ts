import { rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../../src/provisioning/executors/local.js';
import { reloadNginx } from '../../../src/provisioning/steps/services.js';
import { makeContext } from '../../provisioning/support/context.js';
import { siteOf } from '../../provisioning/support/sites.js';
import { curlSite, daemonsBefore, stopDaemonsStartedSince } from './support/host.js';

// `nginx -s reload` returns before the old workers stop accepting: a request sent at once was
// answered by the previous configuration every time on this machine (20 of 20). A site reported
// installed must answer its first request.
describe('reloadNginx returns once the new configuration answers (issue 3: installed means served)', () => {
  const files: string[] = [];
  let daemons: Awaited<ReturnType<typeof daemonsBefore>>;
  beforeAll(async () => {
    daemons = await daemonsBefore();
  });
  afterAll(async () => {
    for (const file of files) rmSync(file, { force: true });
    await reloadNginx(makeContext(new LocalExecutor(), siteOf('static-html')));
    await stopDaemonsStartedSince(daemons); // nginx, when this suite started it
  });

  it('a vhost added before the reload answers the very next request, ten times over', async () => {
    const ctx = makeContext(new LocalExecutor(), siteOf('static-html'));
    await reloadNginx(ctx); // running, whatever it was before
    for (let i = 0; i < 10; i++) {
      const domain = `reload-${process.pid}-${i}.siteplane.test`;
      const file = `/etc/nginx/sites-enabled/zz-siteplane-reload-${process.pid}-${i}.conf`;
      files.push(file);
      writeFileSync(file, `server { listen 80; server_name ${domain}; location / { return 200 "generation ${i}\\n"; } }\n`);
      await reloadNginx(ctx);
      const answer = await curlSite(domain, '/');
      expect(answer.body.trim()).toBe(`generation ${i}`);
    }
    expect(ctx.logs.filter((line) => line.includes('still accept'))).toEqual([]);
  });
});

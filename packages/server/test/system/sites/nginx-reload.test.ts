import { afterAll, describe, expect, it } from 'vitest';
import type { SshExecutor } from '../../../src/provisioning/executors/ssh.js';
import { ensureNginx } from '../../../src/provisioning/steps/ensure-nginx.js';
import { reloadNginx } from '../../../src/provisioning/steps/services.js';
import { makeContext } from '../../provisioning/support/context.js';
import { siteOf } from '../../provisioning/support/sites.js';
import { hostExecutor } from '../support/test-host.js';
import { curlSite, mustRun, run, server } from './support/host.js';

// `nginx -s reload` returns before the old workers stop accepting: a request sent at once was
// answered by the previous configuration every time (20 of 20). A site reported installed must
// answer its first request.
describe('reloadNginx returns once the new configuration answers (issue 3: installed means served)', () => {
  const files: string[] = [];
  let exec: SshExecutor | null = null;
  afterAll(async () => {
    if (files.length > 0) await run('rm', ['-f', '--', ...files]);
    if (exec) {
      await reloadNginx(makeContext(exec, siteOf('static-html')));
      await exec.close();
    }
  });

  it('a vhost added before the reload answers the very next request, ten times over', async () => {
    exec = hostExecutor(server());
    const ctx = makeContext(exec, siteOf('static-html'));
    await ensureNginx().run(ctx); // installed (a no-op once the sites suites ran) and running
    await reloadNginx(ctx);
    for (let i = 0; i < 10; i++) {
      const domain = `reload-${process.pid}-${i}.siteplane.test`;
      const file = `/etc/nginx/sites-enabled/zz-siteplane-reload-${process.pid}-${i}.conf`;
      files.push(file);
      await mustRun('tee', [file], {
        input: `server { listen 80; server_name ${domain}; location / { return 200 "generation ${i}\\n"; } }\n`,
      });
      await reloadNginx(ctx);
      const answer = await curlSite(domain, '/');
      expect(answer.body.trim()).toBe(`generation ${i}`);
    }
    expect(ctx.logs.filter((line) => line.includes('still accept'))).toEqual([]);
  });
});

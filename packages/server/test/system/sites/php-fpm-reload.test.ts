import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectFacts } from '../../../src/provisioning/detect-facts.js';
import type { SshExecutor } from '../../../src/provisioning/executors/ssh.js';
import { recipeFor } from '../../../src/provisioning/recipes/index.js';
import type { ProvisionedSite } from '../../../src/provisioning/step.js';
import { reloadPhpFpm } from '../../../src/provisioning/steps/services.js';
import { fpmPoolLayout, siteLayout } from '../../../src/provisioning/steps/site-layout.js';
import { makeContext, type TestContext } from '../../provisioning/support/context.js';
import { hostExecutor, hostPhp, requireTestHost } from '../support/test-host.js';
import { runId } from './support/harness.js';
import { curlSite, mustRun, useHost } from './support/host.js';

/**
 * A deploy reloads PHP-FPM (USR2) to serve the new release. With FPM's default
 * process_control_timeout of 0 the reload ended the workers' running requests at once, and nginx
 * answered them 502 (deploy-steps.test.ts saw one in CI: a request of its loop in flight at the
 * reload). The pool file sets it (templates/php-fpm-pool.ts). Here a request that takes 1.5 s is in
 * flight at each reload, three times: each is answered 200 by the worker that took it.
 */
const host = requireTestHost();
useHost(host);
const id = runId();
const user = `spf${id}`;

describe.skipIf(!process.env.SITEPLANE_SYSTEM_TESTS)('a PHP-FPM reload lets running requests finish', () => {
  let exec: SshExecutor;
  let ctx: TestContext;
  const site: ProvisionedSite = {
    uuid: `00000000-0000-4000-8000-${id.padStart(12, '0').slice(-12)}`,
    type: 'php',
    domain: `php-reload-${id}.siteplane.test`,
    user,
    options: {},
    ssl: { enabled: false, provider: null, wildcard: false, includeWww: false },
    database: null,
    runtime: { php: { version: hostPhp(host), install: true } },
    port: null,
    secrets: {},
  };

  beforeAll(async () => {
    exec = hostExecutor(host);
    ctx = makeContext(exec, site, { facts: await detectFacts(exec) });
    for (const step of recipeFor('php').create(site)) await step.run(ctx);
    // Written by the site's user, in the release nginx serves.
    await mustRun('runuser', [
      '-u',
      user,
      '--',
      'sh',
      '-c',
      'printf "%s\\n" "<?php usleep(1500000); echo \\"finished\\";" > "$1/slow.php"',
      'sh',
      siteLayout(site).current,
    ]);
  }, 600_000);

  afterAll(async () => {
    await exec?.close();
  });

  it('a request running at the reload is answered 200, three times over', async () => {
    const pool = fpmPoolLayout(user, hostPhp(host));
    for (let i = 0; i < 3; i++) {
      // From this machine through the host's nginx: the request starts, and 0.4 s later (well inside its 1.5 s) the reload.
      const request = curlSite(site.domain, '/slow.php');
      await new Promise((r) => setTimeout(r, 400));
      await reloadPhpFpm(ctx, pool);
      const answer = await request;
      expect({ status: answer.status, body: answer.body.trim() }).toEqual({ status: 200, body: 'finished' });
    }
  });
});

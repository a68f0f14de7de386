import { ensureDeployTools } from '../../../../src/provisioning/deploy/ensure-deploy-tools.js';
import { detectFacts } from '../../../../src/provisioning/detect-facts.js';
import type { ProvisionedSite } from '../../../../src/provisioning/step.js';
import { makeContext } from '../../../provisioning/support/context.js';
import { hostExecutor } from '../../support/test-host.js';
import { mustRun, run, server } from './host.js';

/**
 * The deploy suites' git server on the host: a bare repository `<base>/acme/<name>.git` and a work
 * tree `<work>/<name>` (commitAndPush's) for each name, served by `git daemon` on `port` on every
 * address of the host (Siteplane on this machine checks the remote, the host fetches it). git on
 * the host is the deploy steps' to install, so their own step (ensure git) brings it first.
 */
export async function serveRepositories(base: string, work: string, names: readonly string[], port: number): Promise<void> {
  await ensureHostGit();
  for (const name of names) {
    await mustRun('git', ['init', '-q', '--bare', '-b', 'main', `${base}/acme/${name}.git`]);
    await mustRun('git', ['init', '-q', '-b', 'main', `${work}/${name}`]);
  }
  await mustRun('sh', [
    '-c',
    'setsid -f git daemon --reuseaddr --port="$2" --export-all --base-path="$1" --pid-file="$1/daemon.pid" >/dev/null 2>&1',
    'sh',
    base,
    String(port),
  ]);
}

/**
 * Installs git on the test host the way a deploy does (its ensure-git step, run as root), for the
 * suites that need git there before their first deploy: their git servers.
 */
export async function ensureHostGit(): Promise<void> {
  const exec = hostExecutor(server());
  try {
    const facts = await detectFacts(exec);
    const scratch = { type: 'static-html', user: 'root', runtime: {} } as unknown as ProvisionedSite;
    await ensureDeployTools().run(makeContext(exec, scratch, { facts, settings: { npmRegistry: null, nodeSource: 'npm' } }));
  } finally {
    await exec.close();
  }
}

/** Stops serveRepositories' daemon and removes its repositories and work trees. */
export async function stopServingRepositories(base: string, work: string): Promise<void> {
  await run('sh', ['-c', 'kill "$(cat "$1/daemon.pid")"', 'sh', base]);
  await run('rm', ['-rf', '--', base, work]);
}

import { createHash } from 'node:crypto';
import type { Step, StepContext } from '../step.js';
import { mustRun } from '../steps/commands.js';
import type { DeployPlan } from './plan.js';
import { asUserIn, releasePaths } from './release-paths.js';
import type { DeployState } from './state.js';
import { WRITE } from './write-environment.js';

export const MANIFEST_FILE = '.siteplane-release.json';

/**
 * A hash of the environment, to tell whether it changed between releases, without the values:
 * keyed by the deployment's site, so the same value on two sites does not hash the same.
 */
export function environmentHash(siteUuid: string, environment: DeployPlan['environment']): string {
  const sorted = (vars: Record<string, string>) => Object.entries(vars).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256')
    .update(siteUuid)
    .update('\0')
    .update(JSON.stringify({ build: sorted(environment.build), runtime: sorted(environment.runtime) }))
    .digest('hex');
}

export function renderManifest(plan: DeployPlan, state: DeployState, siteUuid: string, now: Date): string {
  const source =
    plan.source.kind === 'git'
      ? { kind: 'git', url: plan.source.url, branch: plan.source.branch, appFolder: plan.source.appFolder }
      : { kind: 'artifact', sha256: plan.source.sha256, bytes: plan.source.bytes };
  const manifest = {
    release: plan.release,
    deployment: plan.deploymentUuid,
    createdAt: now.toISOString(),
    source,
    commit: state.commit,
    buildCommand: plan.buildCommand,
    artifactPath: plan.artifactPath,
    hooks: plan.hooks.map(({ name, stage, enabled, command }) => ({ name, stage, enabled, command })),
    sharedPaths: plan.sharedPaths,
    environment: {
      hash: environmentHash(siteUuid, plan.environment),
      build: Object.keys(plan.environment.build).sort(),
      runtime: Object.keys(plan.environment.runtime).sort(),
    },
    migrations: plan.hooks.some((hook) => hook.enabled && /migrat/i.test(`${hook.name} ${hook.command}`)),
    healthCheck: plan.healthCheck,
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** releases/<id>/.siteplane-release.json (0600, the site user's), written before the release goes live. */
export function writeManifest(plan: DeployPlan, state: DeployState): Step {
  return {
    name: 'write release manifest',
    async run(ctx: StepContext) {
      const paths = releasePaths(ctx.site, plan.release);
      const file = `${paths.dir}/${MANIFEST_FILE}`;
      const content = renderManifest(plan, state, ctx.site.uuid, new Date());
      await mustRun(
        ctx,
        ['sh', '-c', WRITE, 'sh', file, '600'],
        { ...asUserIn(paths.layout), stdin: content },
        `write ${MANIFEST_FILE}`,
      );
      ctx.log(`wrote ${file}`);
    },
  };
}

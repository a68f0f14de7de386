import type { ProvisionedSite, Step } from '../step.js';
import { activateRelease } from './activate.js';
import { adoptInstalledData, installedReleaseOf } from './adopt-installed-data.js';
import { unlessCancelled } from './cancelled.js';
import { ensureDeployTools } from './ensure-deploy-tools.js';
import { ensurePm2Runtime } from './ensure-pm2-runtime.js';
import { fetchGit } from './fetch-git.js';
import { linkShared } from './link-shared.js';
import { writeManifest } from './manifest.js';
import type { DeployHook, DeployPlan, DeployProgress, DeploySteps, RollbackPlan } from './plan.js';
import { pruneReleases } from './prune.js';
import { hookCommand } from './reuse-node-modules.js';
import { checkKeptRelease, rollbackActivate } from './rollback.js';
import { newDeployState } from './state.js';
import { unpackArtifact } from './unpack-artifact.js';
import { userCommandStep } from './user-command.js';
import { writeEnvironment } from './write-environment.js';

/**
 * The deploy steps on the server (plan.ts is the contract with the control plane). In order:
 * the tools, the code into releases/<id> (fetch or unpack), shared files linked, the environment
 * written, after-fetch hooks, the build, before-activate hooks, the manifest, activation, then the
 * after-activate hooks and pruning. Every step but activation checks for a cancel before it starts.
 * Building the list never throws (the job runner journals it first): steps report bad values.
 */
export const deploySteps: DeploySteps = {
  // The steps read the site from their context (as recipes' steps do); the argument is the job's
  // record of it, used here only for which steps the type has.
  deploy(site: ProvisionedSite, plan: DeployPlan, progress: DeployProgress): Step[] {
    const state = newDeployState();
    const hooks = (stage: DeployHook['stage']) =>
      plan.hooks
        .filter((hook) => hook.enabled && hook.stage === stage)
        .map((hook) => userCommandStep(`hook: ${hook.name}`, hookCommand(site, plan, hook), plan, progress));
    const guarded = (steps: Step[]) => steps.map((step) => unlessCancelled(progress, step));
    return [
      ...guarded([
        // Generic Port sites are made without Node and PM2 (the port was the owner's); PM2 runs the start command.
        ...(site.type === 'generic-port' ? ensurePm2Runtime() : []),
        ...(plan.source.kind === 'git'
          ? [ensureDeployTools(), fetchGit(plan, progress, state)]
          : [ensureDeployTools(), unpackArtifact(plan)]),
        ...(installedReleaseOf(site) === null ? [] : [adoptInstalledData(plan)]),
        linkShared(plan),
        writeEnvironment(plan),
        ...hooks('after-fetch'),
        ...(plan.buildCommand === null ? [] : [userCommandStep('build', plan.buildCommand, plan, progress)]),
        ...hooks('before-activate'),
        writeManifest(plan, state),
      ]),
      unlessCancelled(progress, activateRelease(plan, state)),
      ...hooks('after-activate'),
      pruneReleases(plan, state),
    ];
  },

  rollback(_site: ProvisionedSite, plan: RollbackPlan): Step[] {
    return [checkKeptRelease(plan), rollbackActivate(plan)];
  },
};

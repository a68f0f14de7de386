import type { UseCaseDeps } from '../deps.js';
import type { DeploymentTrigger, SourceBranchOf } from './deployment-trigger.js';
import { startDeployment } from './start-deployment.js';

/**
 * Push webhooks and trigger URLs start deployments like a manual request, with trigger `webhook`
 * and no actor: the hook was authenticated by the site's own secret (use-cases/webhooks). The
 * commit's message and author are read from the repository when the deploy fetches it.
 */
export function pushTrigger(deps: UseCaseDeps): DeploymentTrigger {
  return {
    async deployFromPush(site, push) {
      const deployment = await startDeployment(deps, {
        site,
        actor: null,
        trigger: 'webhook',
        branch: push.branch,
        commit: push.commit,
      });
      return { deploymentUuid: deployment.uuid };
    },
    async deployFromTrigger(site, trigger) {
      const deployment = await startDeployment(deps, {
        site,
        actor: null,
        trigger: 'webhook',
        ...(trigger.branch !== null ? { branch: trigger.branch } : {}),
        ...(trigger.commit !== null ? { commit: trigger.commit } : {}),
      });
      return { deploymentUuid: deployment.uuid };
    },
  };
}

/** The branch a site's source is bound to: what a webhook without its own branch list deploys. */
export function sourceBranchOf(deps: UseCaseDeps): SourceBranchOf {
  return async (site) =>
    (await deps.db.selectFrom('site_sources').select('branch').where('site_uuid', '=', site).executeTakeFirst())?.branch ?? null;
}

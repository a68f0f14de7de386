import { DomainError } from '../../domain/errors.js';
import type { DeploymentTrigger, SourceBranchOf } from './deployment-trigger.js';

/**
 * Until the composition root is given the deployments use case, a hook that passes every check
 * answers 501 not_implemented and is recorded as rejected (`deploy_failed`); its delivery id is
 * not kept, so the provider's redelivery deploys once deployments exist.
 */
export const unwiredTrigger: DeploymentTrigger = {
  deployFromPush: async () => {
    throw new DomainError('not_implemented', 'Deployments are not available in this Siteplane yet.');
  },
  deployFromTrigger: async () => {
    throw new DomainError('not_implemented', 'Deployments are not available in this Siteplane yet.');
  },
};

/** No site has a source yet: a webhook without explicit branches deploys nothing. */
export const noSourceBranch: SourceBranchOf = async () => null;

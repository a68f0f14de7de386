import type { CommitInfo } from './plan.js';

/** What the steps of one deployment learn and pass on (one object per `deploySteps.deploy` call). */
export interface DeployState {
  /** The commit fetch resolved; null for an artifact. */
  commit: CommitInfo | null;
  /** The release that was live before activation (kept by prune, the target of an automatic revert). */
  previous: string | null;
}

export function newDeployState(): DeployState {
  return { commit: null, previous: null };
}

/**
 * How push webhooks and trigger URLs start deployments: a port the composition root wires to the
 * deployments use case ("start a deployment for a site with {branch?, commit?, trigger}"). The
 * webhook code knows nothing else of deployments.
 *
 * Either method may throw a DomainError (the site cannot deploy: no source, deleted, a 409 while
 * something else runs); the hook then answers with that error's status and records the delivery
 * as rejected (`deploy_failed`), and a redelivery may try again.
 */
export interface DeploymentTrigger {
  /** Starts (or collapses into the queued) deployment of the site; the deployment's uuid. */
  deployFromPush(
    siteUuid: string,
    push: {
      branch: string;
      commit: string;
      message: string | null;
      author: string | null;
      provider: string;
      deliveryId: string;
    },
  ): Promise<{ deploymentUuid: string }>;
  /**
   * A POST to the site's secret trigger URL (plain git hooks, CI): the branch and commit when the
   * caller named them, else the source's branch and its head, as a manual deployment would.
   */
  deployFromTrigger(
    siteUuid: string,
    trigger: { branch: string | null; commit: string | null; deliveryId: string },
  ): Promise<{ deploymentUuid: string }>;
}

/**
 * What the branch filter compares with when a webhook names no branches: the branch of the site's
 * source (null when the site has none). Wired to the site-source store with the trigger.
 */
export type SourceBranchOf = (siteUuid: string) => Promise<string | null>;

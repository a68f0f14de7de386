import { randomUUID } from 'node:crypto';
import type { DeploymentTrigger } from '../../src/use-cases/deployments/deployment-trigger.js';

type PushCall = { site: string } & Parameters<DeploymentTrigger['deployFromPush']>[1];
type TriggerCall = { site: string } & Parameters<DeploymentTrigger['deployFromTrigger']>[1];

/** A DeploymentTrigger that records each call and answers a new deployment uuid, or fails when told to. */
export class RecordingTrigger implements DeploymentTrigger {
  readonly pushes: PushCall[] = [];
  readonly triggers: TriggerCall[] = [];
  /** Thrown by the next calls while set. */
  failWith: Error | null = null;

  async deployFromPush(site: string, push: Parameters<DeploymentTrigger['deployFromPush']>[1]) {
    this.pushes.push({ site, ...push });
    if (this.failWith) throw this.failWith;
    return { deploymentUuid: randomUUID() };
  }

  async deployFromTrigger(site: string, trigger: Parameters<DeploymentTrigger['deployFromTrigger']>[1]) {
    this.triggers.push({ site, ...trigger });
    if (this.failWith) throw this.failWith;
    return { deploymentUuid: randomUUID() };
  }

  reset(): void {
    this.pushes.length = 0;
    this.triggers.length = 0;
    this.failWith = null;
  }
}

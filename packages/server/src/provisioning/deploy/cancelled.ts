import type { Step } from '../step.js';
import { StepError } from '../steps/commands.js';
import type { DeployProgress } from './plan.js';

/** The user cancelled the deployment: the step that saw it fails with this, later ones never start. */
export class DeployCancelled extends StepError {
  constructor(what: string) {
    super(`${what}: cancelled`);
    this.name = 'DeployCancelled';
  }
}

/** A step that does not start once the deployment is cancelled (activation, once started, finishes). */
export function unlessCancelled(progress: DeployProgress, step: Step): Step {
  return {
    name: step.name,
    async run(ctx) {
      if (progress.cancelled.aborted) throw new DeployCancelled(step.name);
      await step.run(ctx);
    },
  };
}

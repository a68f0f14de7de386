import type { SiteTypeId } from '@siteplane/contract';
import pino from 'pino';
import { systemClock } from '../../../src/app/clock.js';
import { JobQueue } from '../../../src/jobs/queue.js';
import { ServerLocks } from '../../../src/jobs/server-locks.js';
import { runSiteJob } from '../../../src/jobs/site-job.js';
import { Worker } from '../../../src/jobs/worker.js';
import { DryRunExecutor } from '../../../src/provisioning/executors/dry-run.js';
import type { Recipe, Step } from '../../../src/provisioning/step.js';
import type { TestService } from '../../support/test-service.js';

/**
 * Another worker process on the service's database, as when several run against one PostgreSQL:
 * its own worker id, the real site job runner, dry-run servers.
 */
export function secondWorker(s: TestService, recipes: (type: SiteTypeId) => Recipe, leaseMs: number): Worker {
  const deps = {
    db: s.storage.db,
    secrets: s.useCases.secrets,
    clock: systemClock,
    recipes,
    executorFor: async (_server: unknown, log: (line: string) => void) => new DryRunExecutor({ onCommand: log }),
    detectFacts: async () => null,
    settings: { wordpressSource: '', phpmyadminSource: '', npmRegistry: null, nodeSource: 'nodesource' as const },
    locks: new ServerLocks(),
    siteChanged: (server: string) => s.useCases.siteLists.invalidate(server),
  };
  return new Worker(
    new JobQueue(s.storage.db, s.storage.dialect),
    (job, signal) => runSiteJob(deps, job, signal),
    systemClock,
    pino({ level: 'silent' }),
    { concurrency: 1, leaseMs, pollMs: 20 },
  );
}

export interface HeldRecipe {
  recipes: (type: SiteTypeId) => Recipe;
  /** Resolves when the first run reached its held step. */
  held: Promise<void>;
  /** Lets the first run's held step end: succeed, or fail (as a command failing late would). */
  release(outcome: 'succeed' | 'fail'): void;
  /** The runs (1, 2 …) that ran the step after the held one. */
  ranAfterHeld: number[];
}

/**
 * Create steps whose `held step` waits, on the first run only, until the test releases it; each
 * call of `create` is one run of the job. `secondRunFails`: the second run's held step fails.
 */
export function heldRecipe(options: { stepAfterHeld: boolean; secondRunFails: boolean }): HeldRecipe {
  let runs = 0;
  let reached!: () => void;
  const held = new Promise<void>((resolve) => (reached = resolve));
  let release!: (outcome: 'succeed' | 'fail') => void;
  const released = new Promise<'succeed' | 'fail'>((resolve) => (release = resolve));
  const ranAfterHeld: number[] = [];
  const step = (name: string, run: Step['run']): Step => ({ name, run });
  const recipes = (type: SiteTypeId): Recipe => ({
    type,
    create: () => {
      const run = ++runs;
      return [
        step('first step', async (ctx) => {
          await ctx.exec.run(['mkdir', '-p', '/srv/site']);
        }),
        step('held step', async (ctx) => {
          if (run === 1) {
            reached();
            if ((await released) === 'fail') throw new Error('held step failed after its lease ran out');
          } else if (options.secondRunFails) throw new Error('held step failed in the new owner');
          await ctx.exec.run(['touch', '/srv/site/held']);
        }),
        ...(options.stepAfterHeld
          ? [
              step('step after the held one', async () => {
                ranAfterHeld.push(run);
              }),
            ]
          : []),
      ];
    },
    remove: () => [],
  });
  return { recipes, held, release, ranAfterHeld };
}

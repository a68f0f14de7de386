import { EMPTY_FACTS, type ServerFacts } from '../../../src/domain/servers/facts.js';
import type { Executor } from '../../../src/provisioning/executor.js';
import type { ProvisionedSite, ProvisioningSettings, Step, StepContext } from '../../../src/provisioning/step.js';
import type { SharedResourceQuery } from '../../../src/provisioning/steps/remove/shared-resources.js';
import { FakeLedger } from './fake-ledger.js';

export const SETTINGS: ProvisioningSettings = {
  wordpressSource: 'https://wordpress.org/latest.tar.gz',
  phpmyadminSource: 'https://files.phpmyadmin.net/phpMyAdmin/5.2.1/phpMyAdmin-5.2.1-all-languages.tar.gz',
  npmRegistry: 'http://127.0.0.1:4873/',
  nodeSource: 'nodesource',
};

export interface TestContext extends StepContext {
  ledger: FakeLedger;
  logs: string[];
  facts: ServerFacts;
  stepsRun: string[];
}

/**
 * A StepContext as the job runner builds it. withServerLock refuses re-entering a held lock
 * (the real one would deadlock), so nested locking shows up as a test failure.
 */
export function makeContext(
  exec: Executor,
  site: ProvisionedSite,
  options: {
    ledger?: FakeLedger;
    facts?: ServerFacts;
    settings?: Partial<ProvisioningSettings>;
    shared?: SharedResourceQuery;
  } = {},
): TestContext {
  const held = new Set<string>();
  const facts: ServerFacts = structuredClone(options.facts ?? EMPTY_FACTS);
  const ctx: TestContext = {
    exec,
    site,
    facts,
    ledger: options.ledger ?? new FakeLedger(),
    settings: { ...SETTINGS, ...options.settings },
    logs: [],
    stepsRun: [],
    log(line) {
      ctx.logs.push(line);
    },
    async withServerLock(name, fn) {
      if (held.has(name)) throw new Error(`lock ${name} taken twice: the real lock would deadlock`);
      held.add(name);
      try {
        return await fn();
      } finally {
        held.delete(name);
      }
    },
    async updateFacts(patch) {
      Object.assign(facts, patch);
    },
  };
  if (options.shared) Object.assign(ctx, options.shared);
  return ctx;
}

export async function runSteps(ctx: TestContext, steps: Step[]): Promise<void> {
  for (const step of steps) {
    ctx.stepsRun.push(step.name);
    await step.run(ctx);
  }
}

/**
 * One lock shared by several contexts, as the worker's per-server lock is shared by the jobs on a
 * server: holders run one after another. Give it to contexts with `ctx.withServerLock = lock`.
 */
export function sharedServerLock(): StepContext['withServerLock'] {
  let tail: Promise<unknown> = Promise.resolve();
  return (_name, fn) => {
    const run = tail.then(fn);
    tail = run.catch(() => undefined);
    return run;
  };
}

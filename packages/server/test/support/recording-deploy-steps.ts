import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { DeployPlan, DeployProgress, DeploySteps, RollbackPlan } from '../../src/provisioning/deploy/plan.js';
import type { ProvisionedSite, Step } from '../../src/provisioning/step.js';

/**
 * A stand-in for the deploy steps on the server (provisioning/deploy, built elsewhere): it records
 * each plan it is given and returns steps that log what they were given — the secrets included, so
 * a test sees the operation log's redactor at work — and run nothing on a server. A gate holds the
 * `build` step until released or until the deployment's cancel signal fires, as a real build
 * stopped by its process group would.
 */
export interface RecordingDeploySteps extends DeploySteps {
  deploys: { site: ProvisionedSite; plan: DeployPlan }[];
  rollbacks: { site: ProvisionedSite; plan: RollbackPlan }[];
  /** While set, `build` waits for it (or for the cancel signal). */
  gate: Promise<void> | null;
  /** Resolves when a `build` step starts waiting at the gate. */
  waiting(): Promise<void>;
  /** Step names that fail (`hook: npm ci`). */
  failAt: Set<string>;
  /** Builds waiting at the gate now. */
  atGate: number;
}

export function recordingDeploySteps(): RecordingDeploySteps {
  let arrived: () => void = () => {};
  let arrival = new Promise<void>((r) => {
    arrived = r;
  });
  // A new arrival promise for each gate and each test that waits.
  const reset = () => {
    arrival = new Promise<void>((r) => {
      arrived = r;
    });
  };
  let gate: Promise<void> | null = null;
  const self: RecordingDeploySteps = {
    deploys: [],
    rollbacks: [],
    // A new gate forgets arrivals at the one before: a build that passed an earlier test's gate
    // (already open) must not count as one waiting at this test's.
    get gate() {
      return gate;
    },
    set gate(next: Promise<void> | null) {
      gate = next;
      reset();
    },
    failAt: new Set(),
    atGate: 0,
    waiting: () => arrival,
    deploy(site, plan, progress) {
      self.deploys.push({ site, plan });
      const step = (name: string, run: (log: (line: string) => void) => Promise<void>): Step => ({
        name,
        async run(ctx) {
          if (self.failAt.has(name)) throw new Error(`${name} failed`);
          await run(ctx.log);
        },
      });
      const source = plan.source;
      const hooks = plan.hooks.filter((h) => h.enabled);
      return [
        step('fetch', async (log) => {
          if (source.kind === 'artifact') {
            // The file the job was given must be the upload the API acknowledged.
            const got = createHash('sha256').update(readFileSync(source.file)).digest('hex');
            if (got !== source.sha256) throw new Error(`artifact ${source.file} has sha256 ${got}, not ${source.sha256}`);
            log(`unpack artifact ${source.sha256} (${source.bytes} bytes)`);
            return;
          }
          const creds = source.credentials;
          log(`fetch ${source.url} ${source.branch} ${source.commit ?? 'HEAD'}`);
          if (creds && 'httpsToken' in creds) log(`as ${creds.httpsUser} with token ${creds.httpsToken}`);
          if (creds && 'sshPrivateKey' in creds) log(`with key ${creds.sshPrivateKey}`);
          await progress.commitResolved({
            sha: source.commit ?? '0123456789abcdef0123456789abcdef01234567',
            message: `tip of ${source.branch}`,
            author: 'Dev <dev@example.com>',
          });
        }),
        step('build', async (log) => {
          log(`build ${plan.buildCommand ?? '(nothing)'} with ${JSON.stringify(plan.environment)}`);
          if (self.gate) {
            self.atGate++;
            try {
              await waitAtGate(self.gate, progress, arrived);
            } finally {
              self.atGate--;
            }
          }
        }),
        ...hooks.map((h) => step(`hook: ${h.name}`, async (log) => log(`${h.stage}: ${h.command}`))),
        step('activate', async (log) => log(`activate ${plan.release}`)),
        step('prune', async (log) => log(`keep ${plan.keepReleases}`)),
      ];
    },
    rollback(site, plan) {
      self.rollbacks.push({ site, plan });
      return [{ name: 'activate', run: async (ctx) => ctx.log(`re-point current to ${plan.release}`) }];
    },
  };

  const waiting = self.waiting;
  self.waiting = () => {
    const p = waiting();
    return p.then(() => reset());
  };
  return self;
}

async function waitAtGate(gate: Promise<void>, progress: DeployProgress, arrived: () => void): Promise<void> {
  arrived();
  await new Promise<void>((resolve, reject) => {
    if (progress.cancelled.aborted) return reject(new Error('build stopped: cancelled'));
    progress.cancelled.addEventListener('abort', () => reject(new Error('build stopped: cancelled')), { once: true });
    void gate.then(resolve);
  });
}

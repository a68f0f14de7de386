import { KILL_TIMEOUT_MS } from './graceful-stop.js';

/** How long a reload waits for the new worker to listen before it stops the old one anyway. */
export const LISTEN_TIMEOUT_MS = 30_000;
export const KILL_RETRY_MS = 25;

/**
 * The PM2 ecosystem file of a Node site (cluster mode, named after the domain, cwd `current`,
 * PORT in its environment — the peers' layout). Rendered as JSON inside `module.exports`, so every
 * value is a proper JavaScript literal whatever it contains. Deployments re-render it with their
 * own script and arguments.
 */
export interface EcosystemInput {
  name: string;
  cwd: string;
  /** Relative to cwd; a Node script (cluster mode runs it through node's cluster module). */
  script: string;
  args?: string[];
  port: number;
  env?: Record<string, string>;
  instances?: number;
  /**
   * fork: one process PM2 restarts in place (Generic Port's user command, which may be anything
   * but Node and so cannot take over the port from the cluster master). Default cluster.
   */
  execMode?: 'cluster' | 'fork';
}

export function renderEcosystem(input: EcosystemInput): string {
  const app = {
    name: input.name,
    cwd: input.cwd,
    script: input.script,
    ...(input.args && input.args.length > 0 ? { args: input.args } : {}),
    exec_mode: input.execMode ?? 'cluster',
    ...(input.execMode === 'fork' ? {} : { instances: input.instances ?? 1 }),
    autorestart: true,
    // A reload stops the old worker only once the new one listens: wait for that well past a slow
    // start on a loaded server (PM2's default, 3 s, was not enough), then give the old worker time
    // to finish its requests (graceful-stop.ts) before PM2 kills it.
    listen_timeout: LISTEN_TIMEOUT_MS,
    kill_timeout: KILL_TIMEOUT_MS,
    // How often PM2 looks whether the old worker has exited; its reload (and so a deploy's and a
    // rollback's activation) answers only after that. PM2's default is 100 ms.
    kill_retry_time: KILL_RETRY_MS,
    // Without this each worker PM2 starts (every reload, so every deploy and rollback) first loads
    // PM2's metrics module (@pm2/io, for PM2's paid dashboard, which Siteplane does not use): on a
    // loaded 2-core server a reload took ~1.3 s with it and ~0.8 s without (median of 8 each).
    pmx: false,
    env: { NODE_ENV: 'production', ...input.env, PORT: String(input.port) },
  };
  return `// Managed by Siteplane: the PM2 process of ${JSON.stringify(input.name)}.\nmodule.exports = ${JSON.stringify({ apps: [app] }, null, 2)};\n`;
}

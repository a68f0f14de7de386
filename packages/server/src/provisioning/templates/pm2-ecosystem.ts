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
}

export function renderEcosystem(input: EcosystemInput): string {
  const app = {
    name: input.name,
    cwd: input.cwd,
    script: input.script,
    ...(input.args && input.args.length > 0 ? { args: input.args } : {}),
    exec_mode: 'cluster',
    instances: input.instances ?? 1,
    autorestart: true,
    env: { NODE_ENV: 'production', ...input.env, PORT: String(input.port) },
  };
  return `// Managed by Siteplane: the PM2 process of ${JSON.stringify(input.name)}.\nmodule.exports = ${JSON.stringify({ apps: [app] }, null, 2)};\n`;
}

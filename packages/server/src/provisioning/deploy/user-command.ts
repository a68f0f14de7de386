import { SITE_TYPES } from '@siteplane/contract';
import type { CommandResult, RunOptions } from '../executor.js';
import { quoteArg } from '../shell-quote.js';
import type { Step, StepContext } from '../step.js';
import { longTimeoutMs, run, StepError } from '../steps/commands.js';
import { nativeBuildEnv } from '../steps/npm.js';
import { DeployCancelled } from './cancelled.js';
import { runLong } from './long-run.js';
import { phpPathLine } from './php-shims.js';
import type { DeployPlan, DeployProgress } from './plan.js';
import { asUserIn, releasePaths } from './release-paths.js';

/**
 * HOOK, as the site user in the release: $1 a file for the process group, $2 the user's command.
 * The group id is written first, so a cancel can stop the command and everything it started
 * (npm's children) at once. The build-time variables arrive on stdin as `export K='v'` lines that
 * Siteplane quoted (shell-quote.ts, names checked): they are in no argv and no file. The user's
 * command then runs as its own argument of `bash -euo pipefail -c`, with no stdin. PHP sites' hooks
 * get the site's PHP first on PATH the same way (php-shims.ts). The executor runs it without
 * SSH_CLIENT (executors/command.ts): Debian's bash would read the rc files, and under -u every hook's
 * log began with "/etc/bash.bashrc: line 7: PS1: unbound variable".
 */
export const HOOK = `cut -d' ' -f5 /proc/$$/stat > "$1" || exit
eval "$(cat)" || exit
exec bash -euo pipefail -c "$2" bash </dev/null`;

/**
 * CANCEL, as the site user: TERM to the recorded process group, KILL to what is left 3 s later.
 * `kill -TERM -N` (no `--`: dash's kill takes `--` for a pid and fails).
 */
export const CANCEL = `g=$(cat -- "$1" 2>/dev/null) || exit 0
case $g in ''|*[!0-9]*) exit 0 ;; esac
kill -TERM "-$g" 2>/dev/null || exit 0
sleep 3
kill -KILL "-$g" 2>/dev/null || true`;

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const OUTPUT_LINES = 200;

export function exportLines(vars: Record<string, string>): string {
  return Object.entries(vars)
    .map(([key, value]) => {
      if (!KEY.test(key)) throw new StepError(`environment variable name ${JSON.stringify(key)} is not valid`);
      return `export ${key}=${quoteArg(value)}\n`;
    })
    .join('');
}

/**
 * Node sites' hooks build native modules (Strapi's better-sqlite3, Directus's isolated-vm) against
 * the server's own Node headers, as Siteplane's installs do (npm.ts: nativeBuildEnv): node-gyp
 * would download them from nodejs.org otherwise, which a server may not reach. Before the user's
 * build-time variables, which may set it otherwise.
 */
async function nodeBuildLines(ctx: StepContext): Promise<string> {
  if (SITE_TYPES[ctx.site.type].runtime !== 'node') return '';
  return exportLines(await nativeBuildEnv(ctx));
}

/** Every value of the plan's environment replaced in text: a build that prints one does not log it. */
export function redact(text: string, plan: DeployPlan): string {
  const values = [...Object.values(plan.environment.build), ...Object.values(plan.environment.runtime)]
    .filter((value) => value.length >= 4)
    .sort((a, b) => b.length - a.length);
  let out = text;
  for (const value of values) out = out.split(value).join('[redacted]');
  return out;
}

/** The build or a hook: its own step, run detached (a dropped connection does not stop it), cancellable. */
export function userCommandStep(name: string, command: string, plan: DeployPlan, progress: DeployProgress): Step {
  return {
    name,
    async run(ctx: StepContext) {
      const paths = releasePaths(ctx.site, plan.release);
      const user = asUserIn(paths.layout, paths.dir);
      const groupFile = `${paths.layout.root}/.siteplane-deploy.pgid`;
      const argv = ['sh', '-c', HOOK, 'sh', groupFile, command];
      const stdin = phpPathLine(ctx.site) + (await nodeBuildLines(ctx)) + exportLines(plan.environment.build);
      const options: RunOptions = { ...user, stdin, timeoutMs: longTimeoutMs(ctx) };

      let cancelled = false;
      const cancel = () => {
        cancelled = true;
        ctx.log(`${name}: cancelling (TERM to its process group)`);
        void run(ctx, ['sh', '-c', CANCEL, 'sh', groupFile], asUserIn(paths.layout)).catch(() => undefined);
      };
      if (progress.cancelled.aborted) throw new DeployCancelled(name);
      progress.cancelled.addEventListener('abort', cancel, { once: true });
      const started = Date.now();
      let result: CommandResult;
      try {
        result = await runLong(ctx, argv, options, name);
      } finally {
        progress.cancelled.removeEventListener('abort', cancel);
      }
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const output = redact(`${result.stdout}${result.stderr}`, plan).trimEnd().split('\n').filter(Boolean);
      if (output.length > OUTPUT_LINES) ctx.log(`… ${output.length - OUTPUT_LINES} earlier lines of output not kept`);
      for (const line of output.slice(-OUTPUT_LINES)) ctx.log(`  ${line}`);
      ctx.log(`${name}: exit ${result.code} after ${seconds} s`);
      if (cancelled) throw new DeployCancelled(name);
      if (result.code !== 0) throw new UserCommandFailed(`${name} exited with ${result.code} after ${seconds} s`, result.code);
    },
  };
}

/** A hook or build that exited non-zero: its exit status becomes the failed step's and the operation's `exit_code`. */
export class UserCommandFailed extends StepError {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'UserCommandFailed';
  }
}

import type { StepContext } from '../../step.js';
import { ensurePackages, installedPackages } from '../apt.js';
import { AS_ROOT, run, StepCommandFailed, StepError } from '../commands.js';

/**
 * Soketi 1.x depends on uWebSockets.js by a GitHub URL (its package.json pins
 * github.com/uNetworking/uWebSockets.js.git#v20.10.0): uWebSockets.js is not published on the npm
 * registry (its `uws` name holds a placeholder), and no build of it there comes from its authors,
 * so there is no registry source to trust instead. npm resolves the dependency with git over
 * HTTPS. On a server that reaches only a registry mirror, the install would fail after a long
 * npm run with an obscure ENOENT; a probe of the same repository fails at once and says why.
 */
export const UWS_REPOSITORY = 'https://github.com/uNetworking/uWebSockets.js.git';
const UWS_TAG = 'v20.10.0';
const PROBE_TIMEOUT_MS = 30_000;

export const SOKETI_UNREACHABLE = `Soketi needs uWebSockets.js, which npm fetches from github.com (${UWS_REPOSITORY}), not from the npm registry; this server cannot reach it`;

/** git for npm's git dependency, then the repository itself, before npm spends minutes on the rest. */
export async function ensureUwsReachable(ctx: StepContext): Promise<void> {
  if (!(await installedPackages(ctx, ['git'])).has('git')) {
    // npm spawns git for a git dependency; a server without it fails with "spawn git ENOENT".
    await ctx.withServerLock('packages', () => ensurePackages(ctx, ['git']));
  }
  const probe = await run(ctx, ['git', 'ls-remote', '--exit-code', UWS_REPOSITORY, UWS_TAG], {
    ...AS_ROOT,
    timeoutMs: PROBE_TIMEOUT_MS,
    env: { GIT_TERMINAL_PROMPT: '0' },
  });
  if (probe.code !== 0)
    throw new StepError(`${SOKETI_UNREACHABLE}: ${lastLine(probe.stderr) || `git exited with ${probe.code}`}`);
  ctx.log(`${UWS_REPOSITORY} is reachable (uWebSockets.js ${UWS_TAG} for Soketi)`);
}

/** npm's failure to fetch uWebSockets.js (reached github.com and lost it, a proxy refused it) said plainly. */
export function explainSoketiInstallFailure(error: unknown): unknown {
  if (!(error instanceof StepCommandFailed)) return error;
  const output = `${error.result.stderr}\n${error.result.stdout}`;
  if (!/github\.com|uWebSockets|spawn git|git --no-replace-objects|An unknown git error/i.test(output)) return error;
  return new StepError(`${SOKETI_UNREACHABLE}: ${lastLine(output)}`);
}

function lastLine(text: string): string {
  return text.trim().split('\n').filter(Boolean).at(-1)?.trim() ?? '';
}

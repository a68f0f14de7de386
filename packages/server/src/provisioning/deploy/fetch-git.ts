import { randomUUID } from 'node:crypto';
import type { Step, StepContext } from '../step.js';
import { StepCommandFailed, StepError } from '../steps/commands.js';
import type { SiteLayout } from '../steps/site-layout.js';
import { ALLOWED_PROTOCOLS, checkGitUrl, credentialInput, revisionOf, treeOf } from './git-source.js';
import { mustRunLong, runLong } from './long-run.js';
import type { DeployPlan, DeployProgress, DeploySource } from './plan.js';
import { asUserIn, releasePaths } from './release-paths.js';
import type { DeployState } from './state.js';
import { liveTarget } from './switch-current.js';

/**
 * MIRROR, as the site user: $1 the mirror, $2 the URL, $3 none|ssh|https, $4 a key file path, $5
 * the site's `current` link, $6 this release's link target, $7 the revision to deploy.
 * It refuses (exit 3) when $6 is the live release (a deployment never rewrites what serves). The
 * credential arrives on stdin: an ssh key is written to a 0600 file of the user for this
 * fetch only (removed on exit; one an earlier fetch left, killed or cut off by a reboot, is removed
 * by the next once an hour old, long after any fetch still running would have read it); an https credential becomes an
 * `http.extraHeader` through git's GIT_CONFIG_* variables, exported by this shell, so it is in
 * no argv, no file and not in the URL the mirror's config keeps. The first fetch clones into
 * a temporary directory renamed into place, so a half-made mirror is never taken for one. Last,
 * `commit <sha>\0<author>\0<subject>` of $7 (exit 4 when the mirror has no such commit): the
 * check, the fetch and the commit in one round trip.
 */
export const MIRROR = `set -eu
if [ "$(readlink -- "$5" 2>/dev/null || true)" = "$6" ]; then exit 3; fi
export GIT_TERMINAL_PROMPT=0
case $3 in
  ssh)
    mkdir -p -m 700 -- "$HOME/.ssh"
    find "$HOME" -maxdepth 1 -type f -name '.siteplane-deploy-*.key' -mmin +60 -delete 2>/dev/null || true
    trap 'rm -f -- "$4"' EXIT
    (umask 077 && cat > "$4")
    export GIT_SSH_COMMAND="ssh -i $4 -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=accept-new"
    ;;
  https)
    IFS= read -r header
    export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=http.extraHeader GIT_CONFIG_VALUE_0="$header"
    ;;
esac
if [ -d "$1" ]; then
  git -C "$1" remote set-url origin "$2"
  git -C "$1" fetch --prune --quiet origin </dev/null
  echo fetched
else
  rm -rf -- "$1.partial"
  git clone --mirror --quiet -- "$2" "$1.partial" </dev/null
  mv -T -- "$1.partial" "$1"
  echo cloned
fi
printf 'commit '
git -C "$1" log -1 --no-walk '--format=%H%x00%an <%ae>%x00%s' --end-of-options "$7" 2>/dev/null || exit 4`;

/**
 * EXPORT, as the site user: the tree $2 of mirror $1 into release $3 (a temporary directory renamed
 * into place, so a release directory is always a whole export). A release directory that exists
 * was exported by an earlier attempt: it prints `exists` and leaves it.
 */
export const EXPORT = `set -euo pipefail
if [ -d "$3" ]; then echo exists; exit 0; fi
rm -rf -- "$3.partial"
mkdir -p -- "$3.partial"
git -C "$1" archive --format=tar "$2" | tar -x -f - -C "$3.partial"
mv -T -- "$3.partial" "$3"`;

/** Fetch: the mirror brought up to date, the commit resolved and reported, its tree exported into the release. */
export function fetchGit(plan: DeployPlan, progress: DeployProgress, state: DeployState): Step {
  return {
    name: 'fetch',
    async run(ctx: StepContext) {
      const source = plan.source as Extract<DeploySource, { kind: 'git' }>;
      const paths = releasePaths(ctx.site, plan.release);
      const user = asUserIn(paths.layout);
      const env = { ...user.env, GIT_ALLOW_PROTOCOL: ALLOWED_PROTOCOLS };
      // Every value checked before the first command: a bad branch must not cost a fetch.
      const url = checkGitUrl(source.url);
      const revision = revisionOf(source);
      treeOf('0'.repeat(40), source.appFolder);

      const { mode, stdin } = credentialInput(source);
      const keyFile = `${paths.layout.home}/.siteplane-deploy-${randomUUID()}.key`;
      const argv = [
        'bash',
        '-c',
        MIRROR,
        'mirror',
        paths.repo,
        url,
        mode,
        keyFile,
        paths.layout.current,
        paths.linkTarget,
        revision,
      ];
      const fetched = await runLong(ctx, argv, { ...user, env, stdin }, 'fetch the repository');
      if (fetched.code === 3) throw new StepError(`${paths.linkTarget} is the live release; a deployment makes a new one`);
      if (fetched.code === 4)
        throw new StepError(
          source.commit === null
            ? `branch ${source.branch} has no commit in ${source.url}`
            : `commit ${source.commit} is not in ${source.url}`,
        );
      if (fetched.code !== 0 && mode === 'ssh') refusedOverSsh(fetched.stderr, source.url);
      if (fetched.code !== 0) throw new StepCommandFailed(argv, fetched, 'fetch the repository');
      const lines = fetched.stdout.split('\n');
      ctx.log(`${lines.includes('cloned') ? 'cloned' : 'fetched'} ${source.url} into ${paths.repo}`);

      const [sha = '', author = '', message = ''] = (lines.find((l) => l.startsWith('commit ')) ?? '')
        .slice('commit '.length)
        .split('\0');
      state.commit = { sha, author, message };
      await progress.commitResolved(state.commit);
      ctx.log(`commit ${sha.slice(0, 12)} by ${author}: ${message}`);

      const exported = await mustRunLong(
        ctx,
        ['bash', '-c', EXPORT, 'export', paths.repo, treeOf(sha, source.appFolder), paths.dir],
        user,
        'export the commit',
      );
      if (exported.stdout.trim() === 'exists') {
        ctx.log(`${paths.dir} was exported by an earlier attempt`);
        return;
      }
      ctx.log(`exported ${sha.slice(0, 12)}${source.appFolder ? `:${source.appFolder}` : ''} into ${paths.dir}`);
    },
  };
}

/**
 * The two ssh refusals a user can act on, named as such: the git server does not (yet) admit the
 * site's deploy key, or its host key is not the one this site's user saw at its first fetch.
 */
function refusedOverSsh(stderr: string, url: string): void {
  const line = (pattern: RegExp) =>
    stderr
      .split('\n')
      .find((l) => pattern.test(l))
      ?.trim() ?? '';
  if (/Permission denied \([^)]*publickey/.test(stderr))
    throw new StepError(
      `the git server refused the site's deploy key (${line(/Permission denied/)}): add deploy_public_key (GET /api/v1/sites/<uuid>/source) to ${url} as a read-only deploy key, then deploy again`,
    );
  if (/Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/.test(stderr))
    throw new StepError(
      `the git server's ssh host key is not the one the site's user accepted at its first fetch (~/.ssh/known_hosts): ${line(/Host key|IDENTIFICATION/)}. If the server's key really changed, remove its line from that file`,
    );
}

/** A deployment never rewrites the release that serves (a plan reusing its name is a bug upstream). */
export async function refuseLiveRelease(ctx: StepContext, layout: SiteLayout, target: string): Promise<void> {
  if ((await liveTarget(ctx, layout)) === target)
    throw new StepError(`${target} is the live release; a deployment makes a new one`);
}

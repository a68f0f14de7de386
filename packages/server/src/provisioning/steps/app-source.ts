import type { RunOptions } from '../executor.js';
import type { StepContext } from '../step.js';
import { mustRun, mustRunLong, run, StepError } from './commands.js';
import { pathKind } from './remote-files.js';

/**
 * Copies an application's files (WordPress, phpMyAdmin) into a release from a source that
 * settings give (WORDPRESS_SOURCE, PHPMYADMIN_SOURCE): an http(s) URL of a tar archive with one
 * top-level directory (the upstream releases), or a directory on the server (the tree of Debian's
 * package, which `debian` installs first: debian-app-package.ts).
 *
 * Everything here runs as the site's user: the release lies in a tree that user controls, and
 * root must never follow a link the user may have planted there. So the copy is the user's own
 * from the start (no chown), and it is self-contained: links in a source directory are copied as
 * what they point to (`cp -L`), because Debian's trees link to /etc, /var/lib and shared libraries
 * with targets that break when moved and that the site must not share with the system.
 *
 * The files are staged beside the destination and renamed onto it (an empty directory) only when
 * complete, so a job that died during the copy — which, running detached, may even have gone on
 * without it — never leaves a tree that looks installed but is not. `prepare` edits the stage
 * before it goes live (WordPress: drop the source's own wp-config.php), as the owner too.
 */
export const DEBIAN_SOURCE = 'debian';

const SAFE_DIRECTORY = /^\/[A-Za-z0-9._\-/]+$/;

function isDirectorySource(value: string): boolean {
  return SAFE_DIRECTORY.test(value) && !value.split('/').includes('..');
}

/** Why a WORDPRESS_SOURCE / PHPMYADMIN_SOURCE value is unusable, or null (config.ts reports it at start). */
export function appSourceProblem(value: string): string | null {
  if (value === DEBIAN_SOURCE || isDirectorySource(value)) return null;
  if (/^https?:\/\//i.test(value)) {
    try {
      new URL(value);
      return null;
    } catch {
      return `is not a valid URL (got ${JSON.stringify(value)})`;
    }
  }
  return `must be "${DEBIAN_SOURCE}", an http(s) archive URL or an absolute directory on the server (got ${JSON.stringify(value)})`;
}

export async function copyAppFiles(
  ctx: StepContext,
  source: string,
  destination: string,
  owner: string,
  what: string,
  prepare?: (stage: string, asOwner: RunOptions) => Promise<void>,
): Promise<void> {
  const asOwner: RunOptions = { asUser: owner };
  const stage = `${destination}.siteplane-new`;
  // Whatever an earlier, interrupted attempt left.
  await mustRun(ctx, ['rm', '-rf', '--', stage], asOwner, `remove an unfinished copy of ${what}`);
  await mustRun(ctx, ['mkdir', '-m', '0755', '--', stage], asOwner, `create ${stage}`);
  await fill(ctx, source, stage, what, asOwner);
  if (prepare) await prepare(stage, asOwner);
  // rename(2) replaces the (empty) release directory in one step.
  await mustRun(ctx, ['mv', '-f', '-T', '--', stage, destination], asOwner, `put ${what} in place`);
}

async function fill(ctx: StepContext, source: string, stage: string, what: string, asOwner: RunOptions): Promise<void> {
  if (/^https?:\/\//i.test(source)) {
    let url: URL;
    try {
      url = new URL(source);
    } catch {
      throw new StepError(`${what} source ${JSON.stringify(source)} is not a valid URL`);
    }
    const archive = `${stage}.download`;
    await mustRunLong(ctx, ['curl', '-fsSL', '--proto', '=http,https', '-o', archive, url.href], asOwner, `download ${what}`);
    // GNU tar detects gzip, xz and bzip2 by itself when reading a file.
    await mustRunLong(
      ctx,
      ['tar', '-xf', archive, '-C', stage, '--strip-components=1', '--no-same-owner'],
      asOwner,
      `unpack ${what}`,
    );
    await mustRun(ctx, ['rm', '-f', '--', archive], asOwner, `remove the ${what} archive`);
    ctx.log(`unpacked ${what} from ${url.href}`);
  } else if (isDirectorySource(source)) {
    if ((await pathKind(ctx, source)) !== 'directory') {
      throw new StepError(
        `${what} source ${source} is not a directory on the server (install the distribution's package, or set an archive URL)`,
      );
    }
    // `cp -L` fails on a link whose target is gone; name them instead of a bare "cannot stat".
    // From /: root's working directory may be closed to the user.
    const dangling = await run(ctx, ['find', '-L', source, '-type', 'l'], { ...asOwner, cwd: '/' });
    const broken = dangling.stdout.split('\n').filter(Boolean);
    if (broken.length > 0) {
      throw new StepError(`${what} source ${source} has links whose targets are missing: ${broken.slice(0, 5).join(', ')}`);
    }
    await mustRunLong(ctx, ['cp', '-R', '-L', '--preserve=mode,timestamps', '--', `${source}/.`, stage], asOwner, `copy ${what}`);
    ctx.log(`copied ${what} from ${source}, links resolved`);
  } else {
    throw new StepError(`${what} source ${JSON.stringify(source)} ${appSourceProblem(source) ?? 'is not usable'}`);
  }
}

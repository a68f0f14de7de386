import type { StepContext } from '../step.js';
import { AS_ROOT, mustRun, mustRunLong, StepError } from './commands.js';
import { pathKind } from './remote-files.js';

/**
 * Copies an application's files (WordPress, phpMyAdmin) into a release from a source that
 * settings give: an http(s) URL of a tar archive with one top-level directory (the upstream
 * releases), or a directory on the server (Debian's /usr/share/wordpress, /usr/share/phpmyadmin).
 * Symlinks are kept as they are (Debian's trees link to shared libraries elsewhere), and
 * `chown -h` hands the copies to the user without touching what a link points to.
 *
 * The files are staged beside the destination and renamed onto it (an empty directory) only when
 * complete, so a job that died during the copy — which, running detached, may even have gone on
 * without it — never leaves a tree that looks installed but is not. `prepare` edits the stage
 * before it goes live (WordPress: drop the source's own wp-config.php).
 */
const SAFE_DIRECTORY = /^\/[A-Za-z0-9._\-/]+$/;

export async function copyAppFiles(
  ctx: StepContext,
  source: string,
  destination: string,
  owner: string,
  what: string,
  prepare?: (stage: string) => Promise<void>,
): Promise<void> {
  const stage = `${destination}.siteplane-new`;
  // Whatever an earlier, interrupted attempt left.
  await mustRun(ctx, ['rm', '-rf', '--', stage], AS_ROOT, `remove an unfinished copy of ${what}`);
  await mustRun(ctx, ['install', '-d', '-m', '0755', stage], AS_ROOT, `create ${stage}`);
  await fill(ctx, source, stage, what);
  if (prepare) await prepare(stage);
  await mustRun(ctx, ['chown', '-R', '-h', `${owner}:${owner}`, '--', stage], AS_ROOT, `hand ${what} to ${owner}`);
  // rename(2) replaces the (empty) release directory in one step.
  await mustRun(ctx, ['mv', '-f', '-T', '--', stage, destination], AS_ROOT, `put ${what} in place`);
}

async function fill(ctx: StepContext, source: string, destination: string, what: string): Promise<void> {
  if (/^https?:\/\//i.test(source)) {
    let url: URL;
    try {
      url = new URL(source);
    } catch {
      throw new StepError(`${what} source ${JSON.stringify(source)} is not a valid URL`);
    }
    const archive = `${destination}.download`;
    await mustRunLong(ctx, ['curl', '-fsSL', '--proto', '=http,https', '-o', archive, url.href], AS_ROOT, `download ${what}`);
    // GNU tar detects gzip, xz and bzip2 by itself when reading a file.
    await mustRunLong(
      ctx,
      ['tar', '-xf', archive, '-C', destination, '--strip-components=1', '--no-same-owner'],
      AS_ROOT,
      `unpack ${what}`,
    );
    await mustRun(ctx, ['rm', '-f', '--', archive], AS_ROOT, `remove the ${what} archive`);
    ctx.log(`unpacked ${what} from ${url.href}`);
  } else if (SAFE_DIRECTORY.test(source) && !source.split('/').includes('..')) {
    if ((await pathKind(ctx, source)) !== 'directory') {
      throw new StepError(
        `${what} source ${source} is not a directory on the server (install the distribution's package, or set an archive URL)`,
      );
    }
    await mustRunLong(ctx, ['cp', '-a', '--', `${source}/.`, destination], AS_ROOT, `copy ${what}`);
    ctx.log(`copied ${what} from ${source}`);
  } else {
    throw new StepError(`${what} source ${JSON.stringify(source)} must be an http(s) archive URL or an absolute directory`);
  }
}

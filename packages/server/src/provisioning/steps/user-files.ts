import type { RunOptions } from '../executor.js';
import type { StepContext } from '../step.js';
import { mustRun } from './commands.js';
import { sha256 } from './remote-files.js';

/**
 * Files in a site user's tree (the site root, its releases, `current`, shared/, the ecosystem
 * file), written and read as that user (ARCHITECTURE §3: the site user is not trusted, and root
 * never reads, writes or follows a path inside a tree that user controls). The user may plant a
 * link at any of these paths, or at any directory on the way to them, at any moment; done as the
 * user, following it reaches only what the user could reach anyway. Root's own files elsewhere
 * (the vhost, the pool) go through config-file.ts instead.
 */

/** Commands as the site user, from `/`: root's working directory may be closed to that user. */
export function asOwner(user: string): RunOptions {
  return { asUser: user, cwd: '/' };
}

/**
 * USER_FILE_SCRIPT, as the site user: $1 the file, $2 its mode, $3 the sha256 of the content on
 * stdin, or "" to write it whatever is there. When $3 matches what $1 holds, prints `unchanged`;
 * otherwise the content goes to a temporary name beside it, gets its mode, and is renamed over $1
 * (`mv -T`: a link at $1 is replaced, never written through; a directory there is an error), then
 * prints `created` or `updated`. The umask (077, from the caller) keeps the temporary file private
 * until its mode is set.
 */
export const USER_FILE_SCRIPT = `f=$1 mode=$2 want=$3 new="$1.siteplane-new"
if [ -n "$want" ] && h=$(sha256sum -- "$f" 2>/dev/null) && [ "\${h%% *}" = "$want" ]; then echo unchanged; exit 0; fi
if [ -e "$f" ] || [ -L "$f" ]; then was=updated; else was=created; fi
rm -f -- "$new" || exit
if cat > "$new" && chmod "$mode" -- "$new" && mv -f -T -- "$new" "$f"; then echo "$was"; exit 0; fi
rm -f -- "$new"
exit 1`;

export interface UserFile {
  /** The site user who owns the tree (and the file). */
  user: string;
  path: string;
  content: string;
  /** Octal, `0600`. */
  mode: string;
}

export type UserFileChange = 'unchanged' | 'created' | 'updated';

/**
 * Writes a file in the user's tree as that user, in one round trip. With `onlyIfChanged`, a file
 * that already holds this content is left alone (`unchanged`). A dry run answers `created`.
 */
export async function writeUserFile(
  ctx: StepContext,
  file: UserFile,
  options: { onlyIfChanged?: boolean } = {},
): Promise<UserFileChange> {
  if (!/^0?[0-7]{3}$/.test(file.mode)) throw new Error(`invalid mode ${JSON.stringify(file.mode)}`);
  const want = options.onlyIfChanged ? sha256(file.content) : '';
  const argv = ['sh', '-c', USER_FILE_SCRIPT, 'sh', file.path, file.mode, want];
  const result = await mustRun(ctx, argv, { ...asOwner(file.user), stdin: file.content, umask: '077' }, `write ${file.path}`);
  const said = result.stdout.trim();
  return said === 'unchanged' || said === 'updated' ? said : 'created';
}

/**
 * Points `link` at `target` as the user: a temporary link renamed over it, so the switch is
 * atomic and whatever the user put at `link` is replaced, not followed.
 */
export const USER_LINK_SCRIPT = 'ln -s -f -n -- "$1" "$2" && mv -f -T -- "$2" "$3"';

export async function pointUserLink(ctx: StepContext, user: string, link: string, target: string): Promise<void> {
  const argv = ['sh', '-c', USER_LINK_SCRIPT, 'sh', target, `${link}.siteplane-new`, link];
  await mustRun(ctx, argv, asOwner(user), `link ${link}`);
}

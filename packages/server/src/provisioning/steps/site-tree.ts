import type { StepContext } from '../step.js';
import { AS_ROOT, mustRun } from './commands.js';

/**
 * The two commands that make a site's directories (ensure-site-directory.ts), each one round trip.
 * Root makes only what lies outside the user's reach or holds the site (the site root itself, with
 * mkdir, which never follows or adopts what is already there); everything inside the site root is
 * made by the site's user, so root never writes through a path that user controls.
 *
 * ROOT_PART: $1 a home to make traversable for nginx ("" for none), $2 the site root to create
 * ("" for none), owned by $3, and $4 the site's ACME challenge directory to create ("" for none).
 */
export const ROOT_PART = `if [ -n "$1" ]; then chmod o+x -- "$1" || exit; fi
if [ -n "$2" ]; then mkdir -m 0755 -- "$2" && chown -h "$3:$3" -- "$2" || exit; fi
if [ -n "$4" ]; then install -d -m 0755 -o root -g root -- "$4" || exit; fi`;

/**
 * USER_PART, as the site's user in the site root $1: releases/initial and shared, `current` →
 * releases/initial when $2 is "link" (a temporary link renamed over it: atomic), and the
 * placeholder file $4 (content on stdin) in directory $3 when $4 is not "".
 */
export const USER_PART = `cd -- "$1" || exit
mkdir -p -- releases/initial shared || exit
if [ "$2" = link ]; then
  ln -s -f -n -- releases/initial current.siteplane-new && mv -f -T -- current.siteplane-new current || exit
fi
if [ -n "$4" ]; then mkdir -p -- "$3" && cat > "$4" || exit; fi`;

export interface RootPart {
  traversableHome?: string;
  siteRoot?: { path: string; owner: string };
  acmeDir?: string;
}

export async function makeRootPart(ctx: StepContext, part: RootPart): Promise<void> {
  if (!part.traversableHome && !part.siteRoot && !part.acmeDir) return;
  const argv = [
    'sh',
    '-c',
    ROOT_PART,
    'sh',
    part.traversableHome ?? '',
    part.siteRoot?.path ?? '',
    part.siteRoot?.owner ?? '',
    part.acmeDir ?? '',
  ];
  await mustRun(ctx, argv, AS_ROOT, 'create the site directory');
}

export interface UserPart {
  user: string;
  root: string;
  link: boolean;
  placeholder?: { dir: string; file: string; content: string };
}

/** umask 022: directories 0755 and files 0644, readable by nginx, whatever the user's own umask. */
export async function makeUserPart(ctx: StepContext, part: UserPart): Promise<void> {
  const { placeholder } = part;
  const argv = ['sh', '-c', USER_PART, 'sh', part.root, part.link ? 'link' : '', placeholder?.dir ?? '', placeholder?.file ?? ''];
  await mustRun(
    ctx,
    argv,
    { asUser: part.user, umask: '022', ...(placeholder ? { stdin: placeholder.content } : {}) },
    `create the releases of ${part.root} as ${part.user}`,
  );
}

import { quoteArg } from '../shell-quote.js';
import type { StepContext } from '../step.js';
import { AS_ROOT, mustRun } from './commands.js';

/**
 * The one command that makes a site's directories (ensure-site-directory.ts): root's part, then the
 * site user's part, in one round trip. Root makes only what lies outside the user's reach or holds
 * the site (the site root itself, with mkdir, which never follows or adopts what is already there);
 * everything inside the site root is made by the site's user (runuser, as the executors switch
 * users), so root never writes through a path that user controls.
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
 * placeholder file $4 (content on stdin) in directory $3 when $4 is not "". umask 022 whatever a
 * PAM session set: directories 0755 and files 0644, readable by nginx.
 */
export const USER_PART = `umask 022
cd -- "$1" || exit
mkdir -p -- releases/initial shared || exit
if [ "$2" = link ]; then
  ln -s -f -n -- releases/initial current.siteplane-new && mv -f -T -- current.siteplane-new current || exit
fi
if [ -n "$4" ]; then mkdir -p -- "$3" && cat > "$4" || exit; fi`;

/** Root's part ($1-$4), then, when $5 names the site's user, that user's part with $6-$9. */
export const SITE_DIRECTORIES = `${ROOT_PART}
[ -n "$5" ] || exit 0
exec runuser -u "$5" -- sh -c ${quoteArg(USER_PART)} sh "$6" "$7" "$8" "$9"`;

export interface SiteDirectories {
  traversableHome?: string;
  siteRoot?: { path: string; owner: string };
  acmeDir?: string;
  /** The user's part: releases, `current` (link) and the placeholder, below root. */
  tree?: { user: string; root: string; link: boolean; placeholder?: { dir: string; file: string; content: string } };
}

export async function makeSiteDirectories(ctx: StepContext, part: SiteDirectories): Promise<void> {
  const { tree } = part;
  if (!part.traversableHome && !part.siteRoot && !part.acmeDir && !tree) return;
  const argv = [
    'sh',
    '-c',
    SITE_DIRECTORIES,
    'sh',
    part.traversableHome ?? '',
    part.siteRoot?.path ?? '',
    part.siteRoot?.owner ?? '',
    part.acmeDir ?? '',
    tree?.user ?? '',
    tree?.root ?? '',
    tree?.link ? 'link' : '',
    tree?.placeholder?.dir ?? '',
    tree?.placeholder?.file ?? '',
  ];
  const content = tree?.placeholder?.content;
  await mustRun(ctx, argv, { ...AS_ROOT, ...(content === undefined ? {} : { stdin: content }) }, 'create the site directory');
}

import { quoteArg } from '../shell-quote.js';
import type { StepContext } from '../step.js';
import { AS_ROOT, mustRun } from './commands.js';
import { NGINX_GROUP } from './site-layout.js';

/**
 * The one command that makes a site's directories (ensure-site-directory.ts): root's part, then the
 * site user's part, in one round trip. Root makes only what lies outside the user's reach or holds
 * the site (the site root itself, with mkdir, which never follows or adopts what is already there);
 * everything inside the site root is made by the site's user (runuser, as the executors switch
 * users), so root never writes through a path that user controls.
 *
 * Other site users must not read a site: the home is 0710 and the site root 0750, both in nginx's
 * group, so nginx (www-data) passes through the home and reads the site while other users are
 * stopped at the home. Root changes the home's mode itself (it lies in /home, which the user
 * cannot change) but only the group of an existing site root, with `chgrp -h`, which never follows
 * a link the user may have put there; the mode of that root is set by its user.
 *
 * ROOT_PART: $1 nginx's group; $2 a home to make 0710 in that group ("" for none); $3 the site root
 * to create ("" for none), owned by $4; $5 an existing site root to put in nginx's group ("" for
 * none); $6 the site's ACME challenge directory to create ("" for none).
 */
export const ROOT_PART = `if [ -n "$2" ]; then chgrp -h -- "$1" "$2" && chmod 0710 -- "$2" || exit; fi
if [ -n "$3" ]; then mkdir -m 0750 -- "$3" && chown -h "$4:$1" -- "$3" || exit; fi
if [ -n "$5" ]; then chgrp -h -- "$1" "$5" || exit; fi
if [ -n "$6" ]; then install -d -m 0755 -o root -g root -- "$6" || exit; fi`;

/**
 * USER_PART, as the site's user in the site root $1: the root's mode 0750 when $5 is "private";
 * releases/initial and shared, `current` → releases/initial when $2 is "link" (a temporary link
 * renamed over it: atomic), and the placeholder file $4 (content on stdin) in directory $3 when $4
 * is not "". umask 022 whatever a PAM session set: directories 0755 and files 0644 inside the
 * root, readable by nginx (the root's mode keeps other users out).
 */
export const USER_PART = `umask 022
cd -- "$1" || exit
if [ "$5" = private ]; then chmod 0750 . || exit; fi
mkdir -p -- releases/initial shared || exit
if [ "$2" = link ]; then
  ln -s -f -n -- releases/initial current.siteplane-new && mv -f -T -- current.siteplane-new current || exit
fi
if [ -n "$4" ]; then mkdir -p -- "$3" && cat > "$4" || exit; fi`;

/** Root's part ($1-$6), then, when $7 names the site's user, that user's part with the rest. */
export const SITE_DIRECTORIES = `${ROOT_PART}
u=$7
shift 7
[ -n "$u" ] || exit 0
exec runuser -u "$u" -- sh -c ${quoteArg(USER_PART)} sh "$@"`;

export interface SiteDirectories {
  /** A home to make 0710 in nginx's group. */
  privateHome?: string;
  siteRoot?: { path: string; owner: string };
  /** An existing site root to put in nginx's group (root's part) and make 0750 (its user's part). */
  privateRoot?: string;
  acmeDir?: string;
  /** The user's part: releases, `current` (link) and the placeholder, below root. */
  tree?: { user: string; root: string; link: boolean; placeholder?: { dir: string; file: string; content: string } };
}

export async function makeSiteDirectories(ctx: StepContext, part: SiteDirectories): Promise<void> {
  const { tree } = part;
  if (!part.privateHome && !part.siteRoot && !part.privateRoot && !part.acmeDir && !tree) return;
  if (part.privateRoot && part.privateRoot !== tree?.root) throw new Error('privateRoot needs the user part for that root');
  const argv = [
    'sh',
    '-c',
    SITE_DIRECTORIES,
    'sh',
    NGINX_GROUP,
    part.privateHome ?? '',
    part.siteRoot?.path ?? '',
    part.siteRoot?.owner ?? '',
    part.privateRoot ?? '',
    part.acmeDir ?? '',
    tree?.user ?? '',
    tree?.root ?? '',
    tree?.link ? 'link' : '',
    tree?.placeholder?.dir ?? '',
    tree?.placeholder?.file ?? '',
    part.privateRoot ? 'private' : '',
  ];
  const content = tree?.placeholder?.content;
  await mustRun(ctx, argv, { ...AS_ROOT, ...(content === undefined ? {} : { stdin: content }) }, 'create the site directory');
}

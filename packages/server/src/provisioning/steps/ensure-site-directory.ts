import type { ProvisionedSite, Step, StepContext } from '../step.js';
import { PLACEHOLDER_APP_FILE, renderPlaceholderApp, renderPlaceholderPage } from '../templates/placeholder.js';
import { claim } from './ledger.js';
import { accessOf, kindOf, linkOf, probe } from './probe.js';
import { below, INITIAL_RELEASE, NGINX_GROUP, type SiteLayout, siteLayout } from './site-layout.js';
import { makeSiteDirectories } from './site-tree.js';
import { asOwner } from './user-files.js';

/**
 * What the first release holds until a deployment: a page at `pageDir` (relative to the release:
 * the web root nginx serves), a Node server for process types, or nothing (WordPress and
 * phpMyAdmin, whose files are installed into the release by their own steps).
 */
export type Placeholder =
  | { kind: 'page'; pageDir?: (site: ProvisionedSite) => string | undefined }
  | { kind: 'node-app' }
  | { kind: 'none' };

const FIRST = `releases/${INITIAL_RELEASE}`;

/** What other site users must not get past: the home (nginx only passes) and the site root (nginx reads). */
const HOME_MODE = '710';
const ROOT_MODE = '750';

/**
 * /home/<user>/<domain>/ with releases/initial, `current` → releases/initial and shared/, owned
 * by the user; and the site's ACME challenge directory (owned by root, outside the user's reach).
 * The home (0710) and the site root (0750) are in nginx's group and closed to everyone else
 * (site-tree.ts); a site made before that gets those modes on its next run.
 * A new site costs two round trips: one probe of everything, then one command for root's part and
 * the user's (site-tree.ts). A resumed job makes only what the probe found missing.
 */
export function ensureSiteDirectory(placeholder: Placeholder): Step {
  return {
    name: 'ensure site directory',
    async run(ctx: StepContext) {
      const layout = siteLayout(ctx.site);
      const file = placeholderFile(ctx.site, layout, placeholder);
      // Asked as the site user: the tree is theirs (root must not follow a link planted at releases/),
      // and everything asked is theirs to see: their home, the tree, the ACME directory (0755).
      const [home, rootKind, rootAccess, releases, initial, shared, current, fileKind, acmeKind] = await probe(
        ctx,
        [
          accessOf(layout.home),
          kindOf(layout.root),
          accessOf(layout.root),
          kindOf(layout.releases),
          kindOf(layout.initialRelease),
          kindOf(layout.shared),
          linkOf(layout.current),
          // Without a placeholder the release stands in (its answer is not used).
          kindOf(file?.file ?? layout.initialRelease),
          kindOf(layout.acmeDir),
        ],
        asOwner(layout.user),
      );
      const rootExists = rootKind !== null;
      const acmeExists = acmeKind !== null;
      await claim(
        ctx,
        { kind: 'directory', ref: layout.root, details: { user: layout.user, contains: 'site' } },
        rootExists,
        'site directory',
      );
      await claim(
        ctx,
        { kind: 'directory', ref: layout.acmeDir, details: { contains: 'acme-challenges' } },
        acmeExists,
        'ACME challenge directory',
      );

      // nginx must pass through the home to read the site's files; no other user may.
      const homeOk = home?.mode === HOME_MODE && home.group === NGINX_GROUP;
      // In a directory created just now nothing else can be there.
      const fresh = !rootExists;
      const rootOk = fresh || (rootKind === 'directory' && rootAccess?.mode === ROOT_MODE && rootAccess.group === NGINX_GROUP);
      const dirsMissing = fresh || releases === null || initial === null || shared === null;
      const link = fresh || current === null;
      // Only the first release gets a placeholder; once deployed, `current` points elsewhere.
      const target = link ? FIRST : current;
      const writePlaceholder = file !== null && target === FIRST && (fresh || fileKind === null);
      const tree = dirsMissing || link || writePlaceholder || !rootOk;
      await makeSiteDirectories(ctx, {
        ...(homeOk ? {} : { privateHome: layout.home }),
        ...(rootExists ? {} : { siteRoot: { path: layout.root, owner: layout.user } }),
        ...(rootOk ? {} : { privateRoot: layout.root }),
        ...(acmeExists ? {} : { acmeDir: layout.acmeDir }),
        ...(tree
          ? { tree: { user: layout.user, root: layout.root, link, ...(writePlaceholder ? { placeholder: file } : {}) } }
          : {}),
      });
      if (!homeOk)
        ctx.log(`made ${layout.home} mode 0${HOME_MODE}, group ${NGINX_GROUP}: nginx passes through, other users do not`);
      if (!rootOk) ctx.log(`made ${layout.root} mode 0${ROOT_MODE}, group ${NGINX_GROUP}: nginx reads it, other users do not`);
      if (!rootExists) ctx.log(`created ${layout.root}`);
      if (!acmeExists) ctx.log(`created ${layout.acmeDir} for HTTP-01 challenges`);
      if (dirsMissing) ctx.log(`created ${layout.releases}, ${layout.initialRelease}, ${layout.shared} as ${layout.user}`);
      if (link) ctx.log(`linked ${layout.current} to ${FIRST}`);
      if (writePlaceholder) ctx.log(`wrote the placeholder ${file.file}`);
    },
  };
}

function placeholderFile(
  site: ProvisionedSite,
  layout: SiteLayout,
  placeholder: Placeholder,
): { dir: string; file: string; content: string } | null {
  if (placeholder.kind === 'none') return null;
  if (placeholder.kind === 'node-app') {
    const dir = layout.initialRelease;
    return { dir, file: `${dir}/${PLACEHOLDER_APP_FILE}`, content: renderPlaceholderApp(layout.domain) };
  }
  const dir = below(layout.initialRelease, placeholder.pageDir?.(site), 'web directory');
  return { dir, file: `${dir}/index.html`, content: renderPlaceholderPage(layout.domain) };
}

import type { ProvisionedSite, Step, StepContext } from '../step.js';
import { PLACEHOLDER_APP_FILE, renderPlaceholderApp, renderPlaceholderPage } from '../templates/placeholder.js';
import { claim } from './ledger.js';
import { kindOf, linkOf, modeOf, probe } from './probe.js';
import { below, INITIAL_RELEASE, type SiteLayout, siteLayout } from './site-layout.js';
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

/**
 * /home/<user>/<domain>/ with releases/initial, `current` → releases/initial and shared/, owned
 * by the user; and the site's ACME challenge directory (owned by root, outside the user's reach).
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
      const [homeMode, rootKind, releases, initial, shared, current, fileKind, acmeKind] = await probe(
        ctx,
        [
          modeOf(layout.home),
          kindOf(layout.root),
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

      // nginx (www-data) must pass through the home directory to read the site's files.
      const traversable = homeMode !== null && (Number.parseInt(homeMode.slice(-1), 8) & 1) === 1;
      // In a directory created just now nothing else can be there.
      const fresh = !rootExists;
      const dirsMissing = fresh || releases === null || initial === null || shared === null;
      const link = fresh || current === null;
      // Only the first release gets a placeholder; once deployed, `current` points elsewhere.
      const target = link ? FIRST : current;
      const writePlaceholder = file !== null && target === FIRST && (fresh || fileKind === null);
      const tree = dirsMissing || link || writePlaceholder;
      await makeSiteDirectories(ctx, {
        ...(traversable ? {} : { traversableHome: layout.home }),
        ...(rootExists ? {} : { siteRoot: { path: layout.root, owner: layout.user } }),
        ...(acmeExists ? {} : { acmeDir: layout.acmeDir }),
        ...(tree
          ? { tree: { user: layout.user, root: layout.root, link, ...(writePlaceholder ? { placeholder: file } : {}) } }
          : {}),
      });
      if (!traversable) ctx.log(`made ${layout.home} traversable for nginx (o+x)`);
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

import type { ProvisionedSite, Step, StepContext } from '../step.js';
import { PLACEHOLDER_APP_FILE, renderPlaceholderApp, renderPlaceholderPage } from '../templates/placeholder.js';
import { AS_ROOT, mustRun, run } from './commands.js';
import { claim } from './ledger.js';
import { linkTarget, makeDirectories, makeDirectory, newLink, pathKind, pointLink, writeFile } from './remote-files.js';
import { below, INITIAL_RELEASE, siteLayout } from './site-layout.js';

/**
 * What the first release holds until a deployment: a page at `pageDir` (relative to the release:
 * the web root nginx serves), a Node server for process types, or nothing (WordPress and
 * phpMyAdmin, whose files are installed into the release by their own steps).
 */
export type Placeholder =
  | { kind: 'page'; pageDir?: (site: ProvisionedSite) => string | undefined }
  | { kind: 'node-app' }
  | { kind: 'none' };

/**
 * /home/<user>/<domain>/ with releases/initial, `current` → releases/initial and shared/, owned
 * by the user; and the site's ACME challenge directory (owned by root, outside the user's reach).
 */
export function ensureSiteDirectory(placeholder: Placeholder): Step {
  return {
    name: 'ensure site directory',
    async run(ctx: StepContext) {
      const layout = siteLayout(ctx.site);
      const own = { owner: layout.user, group: layout.user, mode: '0755' };
      await ensureTraversableHome(ctx, layout.home);

      const rootExists = (await pathKind(ctx, layout.root)) !== null;
      await claim(
        ctx,
        { kind: 'directory', ref: layout.root, details: { user: layout.user, contains: 'site' } },
        rootExists,
        'site directory',
      );
      const dirs = [layout.root, layout.releases, layout.initialRelease, layout.shared];
      if (!rootExists) {
        // A new site: none of them exists yet; one `install -d` creates them all (one round trip).
        await makeDirectories(ctx, dirs, own);
        ctx.log(`created ${dirs.join(', ')}`);
      } else {
        for (const dir of dirs.slice(1)) {
          if ((await pathKind(ctx, dir)) === null) {
            await makeDirectory(ctx, dir, own);
            ctx.log(`created ${dir}`);
          }
        }
      }
      // In a directory created just now there is nothing to look for (fewer round trips).
      const fresh = !rootExists;
      let target = fresh ? null : await linkTarget(ctx, layout.current);
      if (target === null) {
        target = `releases/${INITIAL_RELEASE}`;
        if (fresh) await newLink(ctx, layout.current, target, layout.user);
        else await pointLink(ctx, layout.current, target, layout.user);
        ctx.log(`linked ${layout.current} to ${target}`);
      }
      // Only the first release gets a placeholder; once deployed, `current` points elsewhere.
      if (target === `releases/${INITIAL_RELEASE}`) await ensurePlaceholder(ctx, placeholder, fresh);

      const acmeExists = (await pathKind(ctx, layout.acmeDir)) !== null;
      await claim(
        ctx,
        { kind: 'directory', ref: layout.acmeDir, details: { contains: 'acme-challenges' } },
        acmeExists,
        'ACME challenge directory',
      );
      if (!acmeExists) {
        await makeDirectory(ctx, layout.acmeDir, { owner: 'root', group: 'root', mode: '0755' });
        ctx.log(`created ${layout.acmeDir} for HTTP-01 challenges`);
      }
    },
  };
}

/** nginx (www-data) must pass through the home directory to read the site's files. */
async function ensureTraversableHome(ctx: StepContext, home: string): Promise<void> {
  const mode = (await run(ctx, ['stat', '-c', '%a', '--', home], AS_ROOT)).stdout.trim();
  if (/^[0-7]{3,4}$/.test(mode) && (Number.parseInt(mode.slice(-1), 8) & 1) === 1) return;
  await mustRun(ctx, ['chmod', 'o+x', '--', home], AS_ROOT, `let nginx traverse ${home}`);
  ctx.log(`made ${home} traversable for nginx (o+x)`);
}

/** `fresh`: the release directory was created empty by this run, so nothing in it needs a look. */
async function ensurePlaceholder(ctx: StepContext, placeholder: Placeholder, fresh: boolean): Promise<void> {
  if (placeholder.kind === 'none') return;
  const layout = siteLayout(ctx.site);
  const own = { owner: layout.user, group: layout.user, mode: '0644' };
  if (placeholder.kind === 'node-app') {
    const file = `${layout.initialRelease}/${PLACEHOLDER_APP_FILE}`;
    if (!fresh && (await pathKind(ctx, file)) !== null) return;
    await writeFile(ctx, file, renderPlaceholderApp(layout.domain), own);
    ctx.log(`wrote the placeholder app ${file}`);
    return;
  }
  const dir = below(layout.initialRelease, placeholder.pageDir?.(ctx.site), 'web directory');
  const page = `${dir}/index.html`;
  if (!fresh && (await pathKind(ctx, page)) !== null) return;
  if (dir !== layout.initialRelease && (fresh || (await pathKind(ctx, dir)) === null)) {
    await mustRun(ctx, ['install', '-d', '-m', '0755', '-o', layout.user, '-g', layout.user, dir], AS_ROOT, `create ${dir}`);
    // install -d creates missing parents owned by root; hand them to the user as well.
    await mustRun(
      ctx,
      ['chown', '-R', '-h', `${layout.user}:${layout.user}`, '--', layout.initialRelease],
      AS_ROOT,
      `own ${dir}`,
    );
  }
  await writeFile(ctx, page, renderPlaceholderPage(layout.domain), own);
  ctx.log(`wrote the placeholder page ${page}`);
}

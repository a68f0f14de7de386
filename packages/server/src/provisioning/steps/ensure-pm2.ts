import type { Step, StepContext } from '../step.js';
import { ensurePackages } from './apt.js';
import { AS_ROOT, mustRun, mustRunLong, programPath, run, StepError } from './commands.js';
import { npmRegistryArgs } from './npm.js';

/**
 * PM2 from npm (settings.npmRegistry when set), installed globally once per server and run by
 * every site user. Root's umask is unknown (a detached run's is 077), so npm may leave the package
 * readable by root only: its files are opened to everyone explicitly (directories and programs
 * 0755, other files 0644), after the install and on a server where an earlier install left them
 * closed. Works with either Node source: the global prefix is /usr for Debian's and NodeSource's
 * npm, /usr/local for npm from the registry (node-from-npm.ts).
 */
export function ensurePm2(): Step {
  return {
    name: 'ensure PM2',
    async run(ctx: StepContext) {
      // Looked for and installed under one hold of the packages lock: another site's job may be
      // installing PM2 right now (npm links the program before the package's dependencies are all
      // in place), and when two jobs on a new server both looked first and installed after, the
      // second `npm install --global` replaced the package under the first one's running `pm2`
      // ("Cannot find module '/usr/local/bin/pm2'", seen with five Node sites created at once).
      const found = await ctx.withServerLock('packages', async () => {
        const path = await programPath(ctx, 'pm2', AS_ROOT);
        if (path) return path;
        await ensureNpm(ctx);
        await mustRunLong(
          ctx,
          ['npm', 'install', '--global', '--no-audit', '--no-fund', ...npmRegistryArgs(ctx), 'pm2@latest'],
          AS_ROOT,
          'install PM2',
        );
        return null;
      });
      let pm2 = found;
      if (pm2) ctx.log(`PM2 is installed (${pm2})`);
      else {
        // Its version reaches the facts at the next detection (which reads package.json, not `pm2 -v`).
        ctx.log('installed PM2 with npm');
        pm2 = await programPath(ctx, 'pm2', AS_ROOT);
        // A dry-run server answers nothing: there is nothing to look at.
        if (!pm2 && ctx.exec.kind === 'dry-run') return;
        if (!pm2) throw new StepError("npm installed PM2, but `pm2` is not on root's PATH");
      }
      const closed = await closedPackage(ctx, pm2);
      if (closed) await ctx.withServerLock('packages', () => openToEveryone(ctx, closed));
    },
  };
}

/**
 * npm for the global install. Debian ships it as a package of its own, beside /usr/bin/node;
 * NodeSource's nodejs and Node from the registry bring theirs, so a Node elsewhere without npm
 * is not one Siteplane installed, and Debian's npm (which pulls Debian's nodejs) would not fit it.
 */
async function ensureNpm(ctx: StepContext): Promise<void> {
  if (await programPath(ctx, 'npm', AS_ROOT)) return;
  const node = await programPath(ctx, 'node', AS_ROOT);
  if (node !== null && node !== '/usr/bin/node') {
    throw new StepError(`npm is missing beside ${node}; install the npm that belongs to this Node.js, then retry`);
  }
  await ensurePackages(ctx, ['npm']);
}

interface GlobalPackage {
  /** npm's global node_modules directory. */
  modules: string;
  dir: string;
}

/** The global package behind the `pm2` program when some user could not read or run it; else null. */
async function closedPackage(ctx: StepContext, pm2: string): Promise<GlobalPackage | null> {
  const real = (await run(ctx, ['readlink', '-f', '--', pm2], AS_ROOT)).stdout.trim();
  const modules = /^(\/.+\/node_modules)\/pm2\/bin\/pm2$/.exec(real)?.[1];
  if (!modules) {
    ctx.log(`${pm2} is not npm's global PM2 (${real || 'unresolved'}); its permissions are left as they are`);
    return null;
  }
  const dir = `${modules}/pm2`;
  // The package's top directory and its program show how npm left the whole tree.
  for (const path of [modules, dir, real]) if (!(await worldReadable(ctx, path))) return { modules, dir };
  return null;
}

async function openToEveryone(ctx: StepContext, { modules, dir }: GlobalPackage): Promise<void> {
  await mustRun(ctx, ['chmod', 'u=rwx,go=rx', '--', modules], AS_ROOT, `open ${modules} to every user`);
  // Directories 0755, programs 0755, other files 0644; symlinks inside are not followed.
  await mustRun(ctx, ['chmod', '-R', 'u=rwX,go=rX', '--', dir], AS_ROOT, `open ${dir} to every user`);
  ctx.log(`made ${dir} readable and runnable by every user`);
}

async function worldReadable(ctx: StepContext, path: string): Promise<boolean> {
  const result = await run(ctx, ['stat', '-c', '%a', '--', path], AS_ROOT);
  const mode = Number.parseInt(result.stdout.trim(), 8);
  return result.code === 0 && (mode & 0o005) === 0o005;
}

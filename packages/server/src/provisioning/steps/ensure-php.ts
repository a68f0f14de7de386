import type { Step, StepContext } from '../step.js';
import { aptCandidate, aptInstall, ensureAptSource, installedPackages, osRelease } from './apt.js';
import { StepError } from './commands.js';
import { checkPhpVersion, requirePhpVersion } from './site-layout.js';

/** Extensions every PHP site type here needs (Laravel, WordPress, phpMyAdmin, plain PHP). */
export function phpPackages(version: string): string[] {
  const v = checkPhpVersion(version);
  return ['fpm', 'cli', 'mysql', 'pgsql', 'mbstring', 'xml', 'curl', 'zip'].map((ext) => `php${v}-${ext}`);
}

/**
 * PHP <version> with FPM and the common extensions (spec §2.2: installed if missing; other versions
 * left alone). Debian's own repository is used when it offers the version (Debian 12: 8.2 only);
 * otherwise Ondřej Surý's repository (packages.sury.org/php) is added first, as Forge and Ploi do.
 */
export function ensurePhp(phpVersion: string | undefined): Step {
  return {
    name: `ensure PHP ${phpVersion ?? ''}`.trim(),
    async run(ctx: StepContext) {
      const version = requirePhpVersion(phpVersion);
      const packages = phpPackages(version);
      const installed = await ctx.withServerLock('packages', async () => {
        const present = await installedPackages(ctx, packages);
        const missing = packages.filter((name) => !present.has(name));
        if (missing.length === 0) return false;
        if (!(await aptCandidate(ctx, `php${version}-fpm`))) await addSuryRepository(ctx, version);
        await aptInstall(ctx, missing);
        return true;
      });
      if (!installed) {
        ctx.log(`PHP ${version} with its extensions is installed`);
        return;
      }
      const php = [...new Set([...ctx.facts.php, version])].sort();
      await ctx.updateFacts({ php });
    },
  };
}

async function addSuryRepository(ctx: StepContext, version: string): Promise<void> {
  const os = await osRelease(ctx);
  if (os.id !== 'debian' || os.codename === '') {
    throw new StepError(
      `PHP ${version} is not offered by this server's package sources, and Siteplane adds the Sury PHP repository on Debian only (this server reports ${os.id || 'an unknown OS'})`,
    );
  }
  ctx.log(`PHP ${version} is not in Debian's repository; adding packages.sury.org/php`);
  await ensureAptSource(ctx, {
    name: 'sury-php',
    keyUrl: 'https://packages.sury.org/php/apt.gpg',
    keyFormat: 'gpg',
    uri: 'https://packages.sury.org/php/',
    suite: os.codename,
    components: 'main',
  });
}

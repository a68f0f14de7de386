import { SITE_TYPES } from '@siteplane/contract';
import type { RunOptions } from '../executor.js';
import type { ProvisionedSite } from '../step.js';
import { StepError } from '../steps/commands.js';
import { asSiteUser } from '../steps/pm2.js';
import { type SiteLayout, siteLayout } from '../steps/site-layout.js';

/**
 * Where a deployment works on the server (plan.ts has the picture): the bare mirror, the releases
 * and the live link, all inside the site root and all written by the site user. A release name
 * becomes a path, so it is checked here again whatever validated it before.
 */
const RELEASE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export interface ReleasePaths {
  layout: SiteLayout;
  /** The bare mirror of the repository (`git fetch` only what changed). */
  repo: string;
  name: string;
  /** releases/<name>, absolute. */
  dir: string;
  /** What `current` points to when this release is live (relative, as site-tree.ts makes it). */
  linkTarget: string;
}

export function checkReleaseName(name: string): string {
  if (!RELEASE_NAME.test(name) || name.endsWith('.partial'))
    throw new StepError(`release name ${JSON.stringify(name)} must be letters, digits, . _ - (at most 100)`);
  return name;
}

export function releasePaths(site: ProvisionedSite, release: string): ReleasePaths {
  const layout = siteLayout(site);
  const name = checkReleaseName(release);
  return { layout, repo: `${layout.root}/repo`, name, dir: `${layout.releases}/${name}`, linkTarget: `releases/${name}` };
}

/** The site user in a directory of the site, HOME set (npm's ~/.npm cache, composer's, PM2's). */
export function asUserIn(layout: SiteLayout, cwd?: string): RunOptions {
  return asSiteUser(layout, cwd ?? layout.root);
}

/** How a type's release goes live: files nginx serves, PHP through FPM, or a process under PM2. */
export type Activation = 'files' | 'php' | 'process';

const PROCESS_TYPES = new Set(['nodejs-ssr', 'nuxt-ssr', 'next-ssr', 'adonis', 'generic-port', 'strapi', 'directus']);
const NOT_DEPLOYABLE = new Set(['wordpress', 'phpmyadmin', 'soketi']);

export function activationOf(site: ProvisionedSite): Activation {
  if (NOT_DEPLOYABLE.has(site.type)) throw new StepError(`${site.type} sites are not deployed from a repository`);
  if (SITE_TYPES[site.type].runtime === 'php') return 'php';
  return PROCESS_TYPES.has(site.type) ? 'process' : 'files';
}

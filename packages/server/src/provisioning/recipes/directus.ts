import { ensureBuildTools } from '../steps/ensure-build-tools.js';
import { directusProcess, installDirectus } from '../steps/frameworks/install-directus.js';
import { numberOption } from '../steps/site-layout.js';
import { nodeProcessRecipe } from './builders.js';

/**
 * Directus: Node, PM2, optional PostgreSQL database, build tools for its native modules (isolated-vm),
 * Directus <site_type_version> from npm with the directusReleaseType update range, bootstrapped
 * (step "install Directus N from npm").
 */
export const directusRecipe = nodeProcessRecipe(
  'directus',
  (site) => directusProcess(`/home/${site.user}/${site.domain}/current`),
  (site) => [ensureBuildTools(), installDirectus(numberOption(site, 'site_type_version') ?? 11)],
);

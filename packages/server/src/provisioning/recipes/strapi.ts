import { ensureBuildTools } from '../steps/ensure-build-tools.js';
import { installStrapi, STRAPI_PROCESS } from '../steps/frameworks/install-strapi.js';
import { numberOption } from '../steps/site-layout.js';
import { nodeProcessRecipe } from './builders.js';

/**
 * Strapi: Node, PM2, optional PostgreSQL database, build tools for its native modules (better-sqlite3),
 * Strapi <site_type_version> scaffolded from npm and built (step "install Strapi N from npm"), run by
 * PM2; its tables are created on first start.
 */
export const strapiRecipe = nodeProcessRecipe(
  'strapi',
  () => STRAPI_PROCESS,
  (site) => [ensureBuildTools(), installStrapi(numberOption(site, 'site_type_version') ?? 5)],
);

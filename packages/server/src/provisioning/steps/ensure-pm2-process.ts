import type { Step, StepContext } from '../step.js';
import { type EcosystemInput, renderEcosystem } from '../templates/pm2-ecosystem.js';
import { mustRun, StepError } from './commands.js';
import { claim, recordOnce } from './ledger.js';
import { asSiteUser, pm2, pm2DaemonEntry, pm2Lock, pm2Processes } from './pm2.js';
import { ensureBootResurrection } from './pm2-startup.js';
import { modeOf, probe } from './probe.js';
import { readFile } from './remote-files.js';
import { type SiteLayout, siteLayout, sitePort } from './site-layout.js';
import { asOwner, writeUserFile } from './user-files.js';

/** What PM2 runs, relative to `current`; the recipe decides (placeholder app or a framework's CLI). */
export type ProcessCommand = Pick<EcosystemInput, 'script' | 'args' | 'env'> & {
  /** A JSON file of string variables in the release (generated secrets), merged into env. */
  envFile?: string;
  /** A variable that receives the port besides PORT (Soketi reads SOKETI_PORT). */
  portVariable?: string;
};

/**
 * The ecosystem file carries the process's environment, generated secrets included (Soketi's app
 * key and secret): only its user (whose PM2 reads it) may read it.
 */
export const ECOSYSTEM_MODE = '600';

/**
 * The site's PM2 process from an ecosystem file in the site directory (cluster mode, named after
 * the domain, cwd `current`, PORT set, mode 0600), run by the site user's PM2 and saved with `pm2 save`.
 * The user's daemon is recorded first, as shared: the removal of their last Node site stops it.
 * The ecosystem file and the env file lie in the user's tree: written and read as that user.
 */
export function ensurePm2Process(command: ProcessCommand): Step {
  return {
    name: 'ensure PM2 process',
    async run(ctx: StepContext) {
      const layout = siteLayout(ctx.site);
      await ctx.withServerLock(pm2Lock(layout.user), async () => {
        await recordOnce(ctx, pm2DaemonEntry(layout));
        await ensureProcess(ctx, layout, command);
        await keepPrivate(ctx, layout);
      });
    },
  };
}

async function ensureProcess(ctx: StepContext, layout: SiteLayout, command: ProcessCommand): Promise<void> {
  const name = layout.domain;
  const before = await pm2Processes(ctx, layout);
  const existing = before.find((p) => p.name === name);
  await claim(
    ctx,
    { kind: 'pm2_process', ref: name, details: { user: layout.user, ecosystem: layout.ecosystem } },
    !!existing,
    'PM2 process',
  );

  const port = sitePort(ctx.site);
  const env = {
    ...command.env,
    ...(command.envFile ? await envFromFile(ctx, layout.user, `${layout.current}/${command.envFile}`) : {}),
    ...(command.portVariable ? { [command.portVariable]: String(port) } : {}),
  };
  const change = await writeUserFile(
    ctx,
    {
      user: layout.user,
      path: layout.ecosystem,
      content: renderEcosystem({ name, cwd: layout.current, port, script: command.script, args: command.args, env }),
      mode: `0${ECOSYSTEM_MODE}`,
    },
    { onlyIfChanged: true },
  );
  if (change !== 'unchanged') ctx.log(`wrote ${layout.ecosystem}`);

  if (!existing) {
    await pm2(ctx, layout, ['start', layout.ecosystem], `start ${name}`);
    ctx.log(`started PM2 process ${name} as ${layout.user}`);
  } else if (change !== 'unchanged') {
    await pm2(ctx, layout, ['startOrReload', layout.ecosystem, '--update-env'], `reload ${name}`);
    ctx.log(`reloaded PM2 process ${name} with its new ecosystem file`);
  } else if (existing.status !== 'online') {
    await pm2(ctx, layout, ['restart', name], `restart ${name}`);
    ctx.log(`restarted PM2 process ${name} (it was ${existing.status})`);
  } else {
    ctx.log(`PM2 process ${name} is online`);
    return;
  }
  await pm2(ctx, layout, ['save'], 'save the PM2 process list');
  await ensureBootResurrection(ctx, layout.user, layout.home);
}

/**
 * The ecosystem file, and PM2's home: `pm2 save` dumps every process's environment into
 * ~/.pm2/dump.pm2 and the logs are there, all under PM2's umask 022. Other site users stop at the
 * home already (0710); nginx's group passes through it, and need not read these. A file or
 * directory made before (0644, 0755) is narrowed by its user on the next run; content is kept.
 */
export async function keepPrivate(ctx: StepContext, layout: SiteLayout): Promise<void> {
  const asOwner = asSiteUser(layout);
  const pm2Home = `${layout.home}/.pm2`;
  const [ecosystem, home] = await probe(ctx, [modeOf(layout.ecosystem), modeOf(pm2Home)], asOwner);
  const open = [
    ...(ecosystem !== null && ecosystem !== ECOSYSTEM_MODE ? [layout.ecosystem] : []),
    ...(home !== null && !home.endsWith('00') ? [pm2Home] : []),
  ];
  if (open.length === 0) return;
  // go=: group and others lose every right, the owner's stay (0600 for the file, 0700 for the directory).
  await mustRun(ctx, ['chmod', 'go=', '--', ...open], asOwner, `restrict ${open.join(', ')}`);
  ctx.log(`restricted ${open.join(', ')} to ${layout.user}`);
}

/**
 * The env file's variables, read as the site user. Its text never reaches the log: a file that is
 * not a JSON object of variables is reported by name only (JSON.parse's message quotes the text).
 */
async function envFromFile(ctx: StepContext, user: string, path: string): Promise<Record<string, string>> {
  const text = await readFile(ctx, path, asOwner(user));
  if (text === null) throw new StepError(`${path} is missing or unreadable by ${user}; the install step writes it`);
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new StepError(`${path} is not a JSON object of environment variables`);
  return Object.fromEntries(Object.entries(parsed).map(([key, value]) => [key, String(value)]));
}

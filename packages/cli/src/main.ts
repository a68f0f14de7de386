#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { backupCommands } from './backup-commands.js';
import { completionCommand } from './completion.js';
import { deployCommands } from './deploy-commands.js';
import { reportError } from './errors.js';
import { loginCommands } from './login-commands.js';
import { outgoingWebhookCommands } from './outgoing-webhook-commands.js';
import { setJsonOutput } from './output.js';
import { profileCommands } from './profile-commands.js';
import { serveCommand } from './serve.js';
import { serverCommands } from './server-commands.js';
import { siteCommands } from './site-commands.js';
import { tokenCommands } from './token-commands.js';
import { webhookCommands } from './webhook-commands.js';

/** Written into the built command (scripts/build.mjs); read from the package when run from the sources. */
const version =
  process.env.SITEPLANE_BUILT_VERSION ??
  (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const program = new Command('siteplane')
  .description('Siteplane: sites on your own servers. Tables on a terminal; JSON with --json or when piped.')
  .version(version)
  .option('--json', 'print JSON (the default when standard output is not a terminal)')
  .showHelpAfterError()
  // A mistake in the command line (unknown option, missing argument) exits 2, as a wrong name does.
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
  .hook('preAction', () => setJsonOutput(program.opts().json === true));
serveCommand(program);
tokenCommands(program);
loginCommands(program);
serverCommands(program);
siteCommands(program);
profileCommands(program);
deployCommands(program);
webhookCommands(program);
outgoingWebhookCommands(program);
backupCommands(program);
completionCommand(program);
program.parseAsync(process.argv).catch((error: unknown) => {
  process.exitCode = reportError(error);
});

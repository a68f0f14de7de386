#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { apiCommands } from './api-commands.js';
import { backupCommands } from './backup-commands.js';
import { deployCommands } from './deploy-commands.js';
import { serveCommand } from './serve.js';
import { tokenCommands } from './token-commands.js';

/** Written into the built command (scripts/build.mjs); read from the package when run from the sources. */
const version =
  process.env.SITEPLANE_BUILT_VERSION ??
  (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const program = new Command('siteplane')
  .description('Siteplane: sites on your own servers')
  .version(version)
  .showHelpAfterError();
serveCommand(program);
tokenCommands(program);
apiCommands(program);
deployCommands(program);
backupCommands(program);
program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

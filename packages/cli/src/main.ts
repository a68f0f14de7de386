#!/usr/bin/env node
import { Command } from 'commander';
import { apiCommands } from './api-commands.js';
import { deployCommands } from './deploy-commands.js';
import { serveCommand } from './serve.js';
import { tokenCommands } from './token-commands.js';

const program = new Command('siteplane').description('Siteplane: sites on your own servers').showHelpAfterError();
serveCommand(program);
tokenCommands(program);
apiCommands(program);
deployCommands(program);
program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

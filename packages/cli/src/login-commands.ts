import { SiteplaneClient } from '@siteplane/sdk';
import type { Command } from 'commander';
import { configPath, removeConfig, writeConfig } from './config.js';
import { UsageError } from './errors.js';
import { readSecret } from './input.js';

/** `login` keeps the service's URL and a token in a 0600 file; `logout` removes it. */
export function loginCommands(program: Command): void {
  program
    .command('login')
    .description(
      `Save the URL and token for later commands (in ${configPath()}, mode 0600); the token is asked for (or read from stdin) unless --token`,
    )
    .requiredOption('--url <url>', 'the Siteplane service, e.g. https://siteplane.example.com')
    .option('--token <token>', 'API token (visible in the process list; prefer stdin)')
    .option('--no-check', 'save without asking the service whether the token works')
    .action(async (o: { url: string; token?: string; check: boolean }) => {
      try {
        new URL(o.url);
      } catch {
        throw new UsageError(`--url ${o.url} is not a URL`);
      }
      const token = (o.token ?? (await readSecret('Token (not shown): '))).trim();
      if (!token) throw new UsageError('No token: pipe it in (siteplane login --url … < token-file) or give --token');
      // A wrong URL or token fails here, once, not on every command after it.
      if (o.check) await new SiteplaneClient({ baseUrl: o.url, token }).listServers();
      const path = writeConfig({ url: o.url, token });
      process.stderr.write(`Logged in to ${o.url}; saved in ${path}\n`);
    });
  program
    .command('logout')
    .description('Forget the saved URL and token')
    .action(() => {
      process.stderr.write(removeConfig() ? `Removed ${configPath()}\n` : 'Not logged in\n');
    });
}

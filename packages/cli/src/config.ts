import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { SiteplaneClient } from '@siteplane/sdk';
import { UsageError } from './errors.js';

export interface CliConfig {
  url: string;
  token: string;
}

const DEFAULT_URL = 'http://127.0.0.1:8080';

/** `$XDG_CONFIG_HOME/siteplane/config.json`, `~/.config/siteplane/config.json` without it. */
export const configPath = (): string =>
  join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'siteplane', 'config.json');

export function readConfig(): Partial<CliConfig> {
  try {
    return JSON.parse(readFileSync(configPath(), 'utf8')) as Partial<CliConfig>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new UsageError(`Cannot read ${configPath()}: ${(error as Error).message}`);
  }
}

/**
 * Written to a new 0600 file then renamed over the old one, so the token is never readable by
 * others, not even for a moment, and a crash leaves the old file whole.
 */
export function writeConfig(config: CliConfig): string {
  const path = configPath();
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(temporary, 0o600); // against a umask that took bits away the mode argument asked for
  renameSync(temporary, path);
  return path;
}

export function removeConfig(): boolean {
  const path = configPath();
  try {
    rmSync(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** SITEPLANE_URL and SITEPLANE_TOKEN when set, else what `siteplane login` saved. */
export function connection(): { url: string; token: string | undefined } {
  const needsFile = !process.env.SITEPLANE_URL || !process.env.SITEPLANE_TOKEN;
  const saved = needsFile ? readConfig() : {};
  return {
    url: process.env.SITEPLANE_URL || saved.url || DEFAULT_URL,
    token: process.env.SITEPLANE_TOKEN || saved.token,
  };
}

export function client(): SiteplaneClient {
  const { url, token } = connection();
  if (!token) throw new UsageError('Not logged in: run `siteplane login --url <url>` (token on stdin) or set SITEPLANE_TOKEN');
  return new SiteplaneClient({ baseUrl: url, token });
}

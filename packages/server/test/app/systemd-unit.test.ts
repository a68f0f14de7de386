// The operator's files (issue 13 item 2): deploy/systemd/siteplane.service and siteplane.env.
// This machine kind runs no systemd, so the unit cannot be started here; systemd's own offline
// checks stand in: `systemd-analyze verify` (unknown keys, bad values, a missing ExecStart binary)
// and `systemd-analyze security --offline` (the sandbox's exposure score). Skipped where
// systemd-analyze is not installed.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const UNIT = `${ROOT}deploy/systemd/siteplane.service`;
const ENV_FILE = `${ROOT}deploy/systemd/siteplane.env`;
const BACKUP = `${ROOT}deploy/systemd/siteplane-backup.service`;
const BACKUP_TIMER = `${ROOT}deploy/systemd/siteplane-backup.timer`;
const hasAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;

/** KEY=value lines as systemd's EnvironmentFile reads them; `#KEY=` lines are the commented-out ones. */
function envLines(text: string, commented: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  const pattern = commented ? /^#([A-Z][A-Z0-9_]*)=(.*)$/ : /^([A-Z][A-Z0-9_]*)=(.*)$/;
  for (const line of text.split('\n')) {
    const m = pattern.exec(line.trim());
    if (m) out[m[1] as string] = m[2] as string;
  }
  return out;
}

describe('the systemd unit and its environment file', () => {
  it.skipIf(!hasAnalyze)('passes systemd-analyze verify without a single warning', () => {
    const r = spawnSync('systemd-analyze', ['verify', UNIT], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.trim()).toBe('');
  });

  it.skipIf(!hasAnalyze)('is sandboxed: systemd rates its exposure at most 2.0 ("OK")', () => {
    const r = spawnSync('systemd-analyze', ['security', '--offline=yes', UNIT], { encoding: 'utf8' });
    const score = /Overall exposure level for siteplane\.service: ([0-9.]+)/.exec(r.stdout);
    expect(score, r.stdout + r.stderr).not.toBeNull();
    expect(Number(score?.[1])).toBeLessThanOrEqual(2.0);
  });

  it('starts the `siteplane` command the CLI package installs, with `serve`', () => {
    const exec = /^ExecStart=(.*)$/m.exec(readFileSync(UNIT, 'utf8'))?.[1];
    const bin = JSON.parse(readFileSync(`${ROOT}packages/cli/package.json`, 'utf8')).bin;
    expect(exec).toBe('/usr/bin/env siteplane serve');
    expect(Object.keys(bin)).toContain('siteplane');
  });

  it('its environment file holds only settings Siteplane reads, and the active ones load', () => {
    const text = readFileSync(ENV_FILE, 'utf8');
    const configSource = readFileSync(`${ROOT}packages/server/src/app/config.ts`, 'utf8');
    const active = envLines(text, false);
    const named = { ...active, ...envLines(text, true) };
    expect(Object.keys(named).length).toBeGreaterThan(5);
    // HOST and PORT are read by `serve`, NODE_OPTIONS by Node itself.
    for (const name of Object.keys(named).filter((n) => !['HOST', 'PORT', 'NODE_OPTIONS'].includes(n)))
      expect(configSource, `${name} is not read by app/config.ts`).toContain(`'${name}'`);
    expect(() => loadConfig(active)).not.toThrow();
  });
});

describe('the nightly backup: siteplane-backup.service and its timer (docs/backups.md)', () => {
  it.skipIf(!hasAnalyze)('pass systemd-analyze verify without a single warning', () => {
    const r = spawnSync('systemd-analyze', ['verify', BACKUP, BACKUP_TIMER], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.trim()).toBe('');
  });

  it.skipIf(!hasAnalyze)('the service is sandboxed: exposure at most 1.0 (it needs no network)', () => {
    const r = spawnSync('systemd-analyze', ['security', '--offline=yes', BACKUP], { encoding: 'utf8' });
    const score = /Overall exposure level for siteplane-backup\.service: ([0-9.]+)/.exec(r.stdout);
    expect(score, r.stdout + r.stderr).not.toBeNull();
    expect(Number(score?.[1])).toBeLessThanOrEqual(1.0);
  });

  it('runs `siteplane backup` as the service’s user, with its settings, into the directory it may write', () => {
    const unit = readFileSync(BACKUP, 'utf8');
    const main = readFileSync(UNIT, 'utf8');
    for (const key of ['User', 'Group', 'EnvironmentFile'])
      expect(new RegExp(`^${key}=(.*)$`, 'm').exec(unit)?.[1]).toBe(new RegExp(`^${key}=(.*)$`, 'm').exec(main)?.[1]);
    expect(unit).toMatch(/^ExecStart=.*siteplane backup "\/var\/backups\/siteplane\/siteplane-\$\$\(date \+%%F\)\.db"'$/m);
    expect(unit).toMatch(/^ReadWritePaths=\/var\/lib\/siteplane \/var\/backups\/siteplane$/m);
    expect(readFileSync(BACKUP_TIMER, 'utf8')).toMatch(/^Persistent=true$/m);
  });
});

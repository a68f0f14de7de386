import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADOPT } from '../../src/provisioning/deploy/adopt-installed-data.js';
import { ecosystemScript } from '../../src/provisioning/deploy/adopt-pm2-process.js';
import { RELEASE_ENTRY, renderLauncher, startOf } from '../../src/provisioning/deploy/launcher.js';
import { LINK_SHARED } from '../../src/provisioning/deploy/link-shared.js';
import { renderEnvFile } from '../../src/provisioning/deploy/write-environment.js';
import type { ProvisionedSite } from '../../src/provisioning/step.js';
import { renderEcosystem } from '../../src/provisioning/templates/pm2-ecosystem.js';

/**
 * The first deployment of a site whose app Siteplane installed (Strapi, Directus): ADOPT run by
 * this machine's bash in a temporary site root, the launcher's configuration file, the ecosystem
 * check that decides the one-time restart.
 */
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'siteplane-adopt-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function bash(script: string, args: string[]) {
  const result = spawnSync('bash', ['-c', script, 'script', ...args], { cwd: root, encoding: 'utf8' });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

const STRAPI_PAIRS = ['file', '.env', 'directory', 'public/uploads', 'directory', '.tmp'];

function installedStrapi() {
  mkdirSync(join(root, 'releases/strapi/public/uploads'), { recursive: true });
  writeFileSync(join(root, 'releases/strapi/.env'), 'APP_KEYS=a,b\n');
  writeFileSync(join(root, 'releases/strapi/public/uploads/photo.jpg'), 'jpeg');
  symlinkSync('releases/strapi', join(root, 'current'));
}

describe('ADOPT (the installed instance’s data into shared/ at the first deploy)', () => {
  it('moves what shared/ lacks, leaves links behind, and keeps an open file the same file', () => {
    installedStrapi();
    const before = lstatSync(join(root, 'releases/strapi/.env')).ino;
    const result = bash(ADOPT, ['strapi', join(root, 'shared'), ...STRAPI_PAIRS]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('moved .env\nmoved public/uploads\nlinked .tmp\n');
    // rename(2): the same inode, so the running instance's open database or upload continues in shared/.
    expect(lstatSync(join(root, 'shared/.env')).ino).toBe(before);
    expect(readFileSync(join(root, 'shared/public/uploads/photo.jpg'), 'utf8')).toBe('jpeg');
    for (const path of ['.env', 'public/uploads', '.tmp'])
      expect(readlinkSync(join(root, 'releases/strapi', path))).toBe(join(root, 'shared', path));

    // The new release then links the same shared paths; nothing is seeded from it over the user's data.
    mkdirSync(join(root, 'releases/r1/public/uploads'), { recursive: true });
    writeFileSync(join(root, 'releases/r1/.env'), 'from the repository');
    const linked = bash(LINK_SHARED, [join(root, 'releases/r1'), join(root, 'shared'), ...STRAPI_PAIRS]);
    expect(linked.code, linked.stderr).toBe(0);
    expect(linked.stdout).toBe('');
    expect(readFileSync(join(root, 'releases/r1/.env'), 'utf8')).toBe('APP_KEYS=a,b\n');
  });

  it('does nothing once the installed release is no longer live, or when shared/ has the path already', () => {
    installedStrapi();
    mkdirSync(join(root, 'shared'));
    writeFileSync(join(root, 'shared/.env'), 'kept');
    let result = bash(ADOPT, ['strapi', join(root, 'shared'), ...STRAPI_PAIRS]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('moved public/uploads\nlinked .tmp\n');
    expect(readFileSync(join(root, 'shared/.env'), 'utf8')).toBe('kept');
    expect(lstatSync(join(root, 'releases/strapi/.env')).isFile()).toBe(true);

    rmSync(join(root, 'current'));
    symlinkSync('releases/20261126T000000Z-abc', join(root, 'current'));
    writeFileSync(join(root, 'releases/strapi/late.txt'), '');
    result = bash(ADOPT, ['strapi', join(root, 'shared2'), ...STRAPI_PAIRS]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
    expect(existsSync(join(root, 'shared2'))).toBe(false);
  });
});

describe('the launcher of Strapi and Directus releases', () => {
  const site = (type: string) => ({ type }) as ProvisionedSite;

  it("runs the framework's CLI; Directus's configuration file fills the variables the API did not set, PORT never", () => {
    expect(startOf(site('strapi'))).toMatchObject({ entry: 'node_modules/@strapi/strapi/bin/strapi.js', args: ['start'] });
    const start = startOf(site('directus'));
    expect(start).toMatchObject({ entry: 'node_modules/directus/cli.js', args: ['start'], configJson: 'directus.config.json' });

    // A stand-in for Directus's CLI that prints what it was given.
    mkdirSync(join(root, 'node_modules/directus'), { recursive: true });
    writeFileSync(
      join(root, 'node_modules/directus/cli.js'),
      'const e = process.env; console.log(JSON.stringify({ argv: process.argv.slice(2), port: e.PORT, key: e.KEY, user: e.DB_USER, greeting: e.GREETING, config: e.CONFIG_PATH ?? null }));',
    );
    writeFileSync(
      join(root, 'directus.config.json'),
      JSON.stringify({ PORT: 3000, KEY: 'from-config', DB_USER: 'string:12345', GREETING: 'from-config' }),
    );
    writeFileSync(join(root, '.siteplane.env'), renderEnvFile({ GREETING: 'from-api' }));
    writeFileSync(join(root, RELEASE_ENTRY), renderLauncher('.', start));
    const out = execFileSync('node', [join(root, RELEASE_ENTRY)], {
      env: { ...process.env, PORT: '4555', CONFIG_PATH: '/elsewhere/directus.config.json' },
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({
      argv: ['start'],
      port: '4555',
      key: 'from-config',
      user: 'string:12345',
      greeting: 'from-api',
      config: null,
    });
  });
});

describe('ecosystemScript (whether the one-time restart under the launcher is due)', () => {
  it("reads the script of Siteplane's ecosystem file", () => {
    const ecosystem = (script: string) => renderEcosystem({ name: 'a.test', cwd: '/home/u/a.test/current', port: 3001, script });
    expect(ecosystemScript(ecosystem('node_modules/directus/cli.js'))).toBe('node_modules/directus/cli.js');
    expect(ecosystemScript(ecosystem(RELEASE_ENTRY))).toBe(RELEASE_ENTRY);
    expect(ecosystemScript('module.exports = {};')).toBeNull();
  });
});

/**
 * The `siteplane` command as users get it (issue 12 item 1): built to one JavaScript bundle by
 * `npm run build` (scripts/build.mjs), run by plain Node through packages/cli/bin/siteplane.js —
 * the file npm links as `node_modules/.bin/siteplane` and a global install puts on the PATH — with
 * no tsx at run time. `npm pack` of the CLI package ships exactly that.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = 'packages/cli/bin/siteplane.js';
const BUNDLE = 'packages/cli/dist/siteplane.js';
const cliManifest = JSON.parse(readFileSync('packages/cli/package.json', 'utf8')) as {
  version: string;
  bin: Record<string, string>;
  dependencies: Record<string, string>;
  files: string[];
};

function siteplane(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
}

describe('the built siteplane command', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'siteplane-built-'));
  let serve: ChildProcess | null = null;

  beforeAll(() => {
    const build = spawnSync('npm', ['run', '-s', 'build'], { encoding: 'utf8', timeout: 120_000 });
    expect(build.status, build.stderr).toBe(0);
  }, 180_000);

  afterAll(() => {
    if (serve?.pid) process.kill(serve.pid, 'SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is a `siteplane` bin whose bundle imports no tsx and only declared npm packages', () => {
    expect(cliManifest.bin).toEqual({ siteplane: 'bin/siteplane.js' });
    const bundle = readFileSync(BUNDLE, 'utf8');
    expect(bundle).not.toMatch(/from ["']tsx|import\(["']tsx/);
    expect(bundle).not.toMatch(/from ["']@siteplane\//);
    expect(Object.keys(cliManifest.dependencies).filter((name) => name.startsWith('@siteplane/'))).toEqual([]);
  });

  it('answers --version with the package version', () => {
    const result = siteplane(['--version']);
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(cliManifest.version);
  });

  it('serves the API from the bundle, and its token command works on the same data directory', async () => {
    serve = spawn(process.execPath, [BIN, 'serve'], {
      env: { ...process.env, SITEPLANE_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', SITEPLANE_WORKER: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const address = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`serve printed no address: ${out}`)), 60_000);
      serve?.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /Siteplane listening on (http:\/\/[\d.:]+)/.exec(out);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      serve?.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
    });
    const health = (await (await fetch(`${address}/api/v1/health`)).json()) as { status: string; version: string };
    expect(health).toMatchObject({ status: 'ok', version: cliManifest.version });

    const token = siteplane(['token', 'create', '--name', 'built'], { SITEPLANE_DATA_DIR: dataDir });
    expect(token.status, token.stderr).toBe(0);
    const servers = await fetch(`${address}/api/v1/servers`, { headers: { authorization: `Bearer ${token.stdout.trim()}` } });
    expect(servers.status).toBe(200);
  }, 90_000);

  it('packs the bin and the bundle, not the sources', () => {
    const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '-w', 'packages/cli'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(pack.status, pack.stderr).toBe(0);
    const [tarball] = JSON.parse(pack.stdout) as { files: { path: string }[] }[];
    const paths = tarball?.files.map((file) => file.path) ?? [];
    expect(paths).toEqual(expect.arrayContaining(['bin/siteplane.js', 'dist/siteplane.js', 'package.json']));
    expect(paths.filter((path) => path.startsWith('src/'))).toEqual([]);
  });
});

import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Executor } from '../../src/provisioning/executor.js';
import { DryRunExecutor } from '../../src/provisioning/executors/dry-run.js';
import { LocalExecutor } from '../../src/provisioning/executors/local.js';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import { ensurePm2Process } from '../../src/provisioning/steps/ensure-pm2-process.js';
import { SOKETI_PROCESS } from '../../src/provisioning/steps/frameworks/install-soketi.js';
import { pointUserLink, writeUserFile } from '../../src/provisioning/steps/user-files.js';
import { makeContext, runSteps } from './support/context.js';
import { FakeLedger } from './support/fake-ledger.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

/**
 * user-files.ts: files in a site user's tree are written as that user, through a temporary file
 * renamed over the path, so a link the user planted there is replaced and never written through.
 * The scripts run here with this machine's sh and coreutils, as whoever runs the tests (the switch
 * to the site's user is left out, as in step-scripts.test.ts); the dry run shows the exact command.
 */
const local = new LocalExecutor();
const asMe: Executor = {
  kind: 'local',
  run: (argv, { asUser: _user, ...options } = {}) => local.run(argv, { ...options, sudo: false }),
  close: async () => {},
};
const ctx = () => makeContext(asMe, siteOf('strapi'));

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'siteplane-user-files-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const mode = (path: string) => (lstatSync(path).mode & 0o777).toString(8);

describe('writing a file in the user’s tree', () => {
  it('creates it with its mode, then leaves the same content alone and replaces other content', async () => {
    const path = join(dir, '.env');
    const file = { user: 'alice', path, content: 'A=1\n', mode: '0600' };
    expect(await writeUserFile(ctx(), file, { onlyIfChanged: true })).toBe('created');
    expect(readFileSync(path, 'utf8')).toBe('A=1\n');
    expect(mode(path)).toBe('600');
    expect(await writeUserFile(ctx(), file, { onlyIfChanged: true })).toBe('unchanged');
    expect(await writeUserFile(ctx(), { ...file, content: 'A=2\n', mode: '0644' }, { onlyIfChanged: true })).toBe('updated');
    expect(readFileSync(path, 'utf8')).toBe('A=2\n');
    expect(mode(path)).toBe('644');
    // Without onlyIfChanged it writes whatever is there.
    expect(await writeUserFile(ctx(), { ...file, content: 'A=2\n' })).toBe('updated');
    expect(mode(path)).toBe('600');
  });

  it('replaces a link planted at the path (or at its temporary name) instead of writing through it', async () => {
    const outside = join(dir, 'outside');
    writeFileSync(outside, 'root only\n', { mode: 0o600 });
    const tree = join(dir, 'tree');
    mkdirSync(tree);
    const path = join(tree, 'wp-config.php');
    symlinkSync(outside, path);
    symlinkSync(join(dir, 'made-through-temp'), `${path}.siteplane-new`);
    expect(await writeUserFile(ctx(), { user: 'alice', path, content: '<?php // site\n', mode: '0640' })).toBe('updated');
    expect(lstatSync(path).isFile()).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('<?php // site\n');
    expect(readFileSync(outside, 'utf8')).toBe('root only\n');
    expect(() => lstatSync(join(dir, 'made-through-temp'))).toThrow();
    expect(() => lstatSync(`${path}.siteplane-new`)).toThrow();
  });

  it('fails, changing nothing, when a directory is at the path', async () => {
    const path = join(dir, 'ecosystem.config.cjs');
    mkdirSync(path);
    writeFileSync(join(path, 'keep'), 'x');
    await expect(writeUserFile(ctx(), { user: 'alice', path, content: 'x', mode: '0644' })).rejects.toThrow(
      /write .*ecosystem\.config\.cjs: sh exited with 1/,
    );
    expect(readFileSync(join(path, 'keep'), 'utf8')).toBe('x');
    expect(() => lstatSync(`${path}.siteplane-new`)).toThrow();
  });

  it('refuses a mode that is not octal', async () => {
    await expect(writeUserFile(ctx(), { user: 'alice', path: join(dir, 'f'), content: '', mode: 'u+s' })).rejects.toThrow(
      /invalid mode/,
    );
  });
});

describe('pointing a link in the user’s tree', () => {
  it('replaces the link in one rename, never entering a directory it points to', async () => {
    mkdirSync(join(dir, 'releases', 'a'), { recursive: true });
    mkdirSync(join(dir, 'elsewhere'));
    const current = join(dir, 'current');
    symlinkSync(join(dir, 'elsewhere'), current);
    await pointUserLink(ctx(), 'alice', current, 'releases/a');
    expect(readlinkSync(current)).toBe('releases/a');
    expect(readdirSync(join(dir, 'elsewhere'))).toEqual([]);
  });
});

describe('on a dry-run server', () => {
  it('WordPress writes wp-config.php as the site user, never with root’s install and dd', async () => {
    const lines: string[] = [];
    const exec = new DryRunExecutor({ onCommand: (line) => lines.push(line) });
    const site = siteOf('wordpress');
    const dryCtx = makeContext(exec, site, { facts: { os: 'debian 12', php: [], node: null, mysql: null, postgresql: null } });
    await runSteps(dryCtx, recipeFor('wordpress').create(site));
    const config = '/home/alice/wordpress.example.com/releases/initial/wp-config.php';
    const writes = lines.filter((line) => line.includes(config) && !line.includes('stat'));
    expect(writes).toHaveLength(1);
    // The dry run prints the argv, then the options the executor turns into `runuser -u alice --`.
    expect(writes[0]).toMatch(/^sh -c 'f=\$1 mode=\$2 want=\$3 /);
    expect(writes[0]).toContain(` sh ${config} 0640 '' `);
    expect(writes[0]).toContain('"asUser":"alice","cwd":"/","umask":"077","stdin":"<redacted');
    const asRoot = lines.filter((line) => line.includes('/home/alice/') && !line.includes('"asUser":"alice"'));
    expect(asRoot.filter((line) => /^(install|dd|cat|stat|sha256sum|readlink|ln|mv|chown|chmod) /.test(line))).toEqual([]);
  });
});

describe('what the PM2 step reads from the user’s tree', () => {
  it('never puts the env file’s text in an error or the log (JSON.parse would quote it)', async () => {
    const server = new FakeServer();
    const site = siteOf('soketi');
    const ledger = new FakeLedger();
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor('soketi').create(site));
    // The user replaces the file with something that is not JSON: a copy of a secret of theirs, say.
    const envFile = '/home/alice/soketi.example.com/releases/soketi/soketi.env.json';
    server.fs.write(envFile, 'TOP-SECRET-VALUE not json', { owner: 'alice', group: 'alice', mode: '600' });
    const again = makeContext(server.exec, site, { ledger });
    const failure = await ensurePm2Process(SOKETI_PROCESS)
      .run(again)
      .then(
        () => null,
        (error: Error) => error.message,
      );
    expect(failure).toBe('/home/alice/soketi.example.com/current/soketi.env.json is not a JSON object of environment variables');
    expect(again.logs.join('\n')).not.toContain('TOP-SECRET');
  });
});

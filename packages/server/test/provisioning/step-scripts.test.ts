import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Executor } from '../../src/provisioning/executor.js';
import { LocalExecutor } from '../../src/provisioning/executors/local.js';
import { readAccount } from '../../src/provisioning/read-account.js';
import { ConfigTestFailed, installConfigFile } from '../../src/provisioning/steps/config-file.js';
import { groupsOf, hashOf, kindOf, linkOf, livePidOf, modeOf, passwdEntryOf, probe } from '../../src/provisioning/steps/probe.js';
import { sha256 } from '../../src/provisioning/steps/remote-files.js';
import { USER_PART } from '../../src/provisioning/steps/site-tree.js';
import { makeContext } from './support/context.js';
import { siteOf } from './support/sites.js';

/**
 * The steps' constant scripts run by this machine's own sh and coreutils (the fake server acts
 * them out instead, fake-scripts.ts): what they answer and change, in a temporary directory, as
 * whoever runs the tests: `sudo` and the switch to the site's user are left out (the site's user is
 * the one running the tests), nothing here needs root.
 */
const local = new LocalExecutor();
const asMe: Executor = {
  kind: 'local',
  run: (argv, { asUser: _user, ...options } = {}) => local.run(argv, { ...options, sudo: false }),
  close: async () => {},
};
const me = userInfo().username;
const myGroup = execFileSync('id', ['-gn'], { encoding: 'utf8' }).trim();
const ctx = () => makeContext(asMe, siteOf('static-html'));
const own = { owner: me, group: myGroup, mode: '0644' };

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'siteplane-scripts-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('reading an account (uid, groups)', () => {
  it("reads root's uid and groups, the runner's own, and nothing for a missing account", async () => {
    expect(await readAccount(asMe, 'root')).toEqual({ uid: 0, groups: expect.arrayContaining(['root']) });
    expect(await readAccount(asMe, me)).toEqual({ uid: userInfo().uid, groups: expect.arrayContaining([myGroup]) });
    expect(await readAccount(asMe, 'no-such-user-sp')).toBeNull();
    const [entry, groups] = await probe(ctx(), [passwdEntryOf('root'), groupsOf('root')], {});
    expect(entry).toMatch(/^root:[^:]*:0:/);
    expect(groups.split(' ')).toContain('root');
    expect(await probe(ctx(), [passwdEntryOf('no-such-user-sp'), groupsOf('no-such-user-sp')], {})).toEqual(['', '']);
  });
});

describe('the probe script', () => {
  it('answers every query in order, a link target with a newline included', async () => {
    writeFileSync(join(dir, 'f'), 'x');
    mkdirSync(join(dir, 'd'), { mode: 0o750 });
    symlinkSync('a\nb', join(dir, 'l'));
    writeFileSync(join(dir, 'alive.pid'), `${process.pid}\n`);
    writeFileSync(join(dir, 'zero.pid'), '0\n');
    const answers = await probe(
      ctx(),
      [
        kindOf(join(dir, 'f')),
        kindOf(join(dir, 'd')),
        linkOf(join(dir, 'l')),
        kindOf(join(dir, 'l')),
        kindOf(join(dir, 'missing')),
        modeOf(join(dir, 'd')),
        hashOf(join(dir, 'f')),
        hashOf(join(dir, 'missing')),
        livePidOf(join(dir, 'alive.pid')),
        livePidOf(join(dir, 'zero.pid')),
        livePidOf(join(dir, 'missing.pid')),
      ],
      {},
    );
    expect(answers).toEqual([
      'file',
      'directory',
      'a\nb',
      'symlink',
      null,
      '750',
      sha256('x'),
      null,
      String(process.pid),
      null,
      null,
    ]);
  });
});

describe('the config file script', () => {
  const file = () => join(dir, 'site.conf');
  const link = () => join(dir, 'enabled.conf');
  const passes = ['true'];
  const fails = ['sh', '-c', 'echo "bad directive" >&2; exit 7'];

  it('creates, leaves alone, updates, and restores the previous file when the test fails', async () => {
    expect(await installConfigFile(ctx(), { path: file(), content: 'one\n', ownership: own, test: passes })).toBe('created');
    expect(await installConfigFile(ctx(), { path: file(), content: 'one\n', ownership: own, test: fails })).toBe('unchanged');
    expect(await installConfigFile(ctx(), { path: file(), content: 'two\n', ownership: own, test: passes })).toBe('updated');
    const error = await installConfigFile(ctx(), { path: file(), content: 'three\n', ownership: own, test: fails }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigTestFailed);
    expect((error as ConfigTestFailed).exitCode).toBe(7);
    expect((error as ConfigTestFailed).output).toContain('bad directive');
    expect(readFileSync(file(), 'utf8')).toBe('two\n');
    expect(lstatSync(file()).mode & 0o777).toBe(0o644);
    for (const leftover of ['.siteplane-new', '.siteplane-previous']) expect(() => lstatSync(`${file()}${leftover}`)).toThrow();
  });

  it('enables a file with its link, and takes link and file away when the test fails', async () => {
    const failed = await installConfigFile(ctx(), {
      path: file(),
      content: 'one\n',
      ownership: own,
      test: fails,
      enableLink: link(),
    }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ConfigTestFailed);
    expect(() => lstatSync(file())).toThrow();
    expect(() => lstatSync(link())).toThrow();
    const content = { path: file(), content: 'one\n', ownership: own, test: passes };
    expect(await installConfigFile(ctx(), { ...content, enableLink: link() })).toBe('created');
    expect(readlinkSync(link())).toBe(file());
    // Right but not enabled (a job stopped in between): only enabled.
    rmSync(link());
    expect(await installConfigFile(ctx(), { ...content, enableLink: link() })).toBe('updated');
    expect(readlinkSync(link())).toBe(file());
  });

  it('does not write through a link at the temporary path', async () => {
    writeFileSync(join(dir, 'target'), 'keep\n');
    symlinkSync(join(dir, 'target'), `${file()}.siteplane-new`);
    await installConfigFile(ctx(), { path: file(), content: 'one\n', ownership: own });
    expect(readFileSync(join(dir, 'target'), 'utf8')).toBe('keep\n');
    expect(readFileSync(file(), 'utf8')).toBe('one\n');
  });
});

describe("the site user's part of a site directory", () => {
  // Run as whoever runs the tests (the step runs it through runuser as the site's user).
  const userPart = (root: string, link: boolean, dir = '', file = '', content = '', mode = '') =>
    asMe.run(['sh', '-c', USER_PART, 'sh', root, link ? 'link' : '', dir, file, mode], { stdin: content, umask: '077' });

  it('closes a site root made before to other users (0750) when asked, and leaves its mode alone otherwise', async () => {
    const root = join(dir, 'old.example.com');
    mkdirSync(root, { mode: 0o755 });
    expect((await userPart(root, true)).code).toBe(0);
    expect(lstatSync(root).mode & 0o777).toBe(0o755);
    const made = await userPart(root, false, '', '', '', 'private');
    expect(made.code, made.stderr).toBe(0);
    expect(lstatSync(root).mode & 0o777).toBe(0o750);
  });

  it('makes the releases, `current` and the placeholder, and later only what is missing', async () => {
    const root = join(dir, 'example.com');
    mkdirSync(root);
    const web = join(root, 'releases/initial/web');
    const made = await userPart(root, true, web, join(web, 'index.html'), 'hi\n');
    expect(made.code, made.stderr).toBe(0);
    expect(readlinkSync(join(root, 'current'))).toBe('releases/initial');
    expect(readFileSync(join(web, 'index.html'), 'utf8')).toBe('hi\n');
    expect(lstatSync(join(root, 'shared')).isDirectory()).toBe(true);
    // Its own umask 022, whatever it was started with: nginx reads the files.
    expect(lstatSync(join(web, 'index.html')).mode & 0o777).toBe(0o644);
    expect(lstatSync(web).mode & 0o777).toBe(0o755);
    rmSync(join(root, 'shared'), { recursive: true });
    expect((await userPart(root, false)).code).toBe(0);
    expect(lstatSync(join(root, 'shared')).isDirectory()).toBe(true);
    expect(readFileSync(join(web, 'index.html'), 'utf8')).toBe('hi\n');
  });
});

import { describe, expect, it } from 'vitest';
import { buildArgv } from '../../src/provisioning/executors/command.js';

// Every command runs under a known umask, whatever root's session has (027, 077): a constant
// script, the command as its positional arguments.
const umask = (mask = '022') => ['sh', '-c', `umask ${mask} && exec "$@"`, 'sh'];
// As another user, without sshd's session variables (Debian's bash reads rc files when it sees them).
const withoutSshSession = ['-u', 'SSH_CLIENT', '-u', 'SSH2_CLIENT', '-u', 'SSH_CONNECTION'];

// Pure: how RunOptions become argv (no system needed).
describe('buildArgv', () => {
  it('runs a plain command under umask 022', () => {
    expect(buildArgv(['ls', '-la'], {}, false)).toEqual([...umask(), 'ls', '-la']);
  });

  it('takes another umask when asked', () => {
    expect(buildArgv(['touch', 'f'], { umask: '077' }, true)).toEqual([...umask('077'), 'touch', 'f']);
    expect(buildArgv(['touch', 'f'], { umask: '0027' }, true)).toEqual([...umask('0027'), 'touch', 'f']);
  });

  it('uses sudo -n only for a non-root user that asks for it, the umask after it (sudo sets its own)', () => {
    expect(buildArgv(['id'], { sudo: true }, false)).toEqual(['sudo', '-n', '--', ...umask(), 'id']);
    expect(buildArgv(['id'], { sudo: true }, true)).toEqual([...umask(), 'id']);
  });

  it('switches user with runuser as root and sudo -u -H otherwise, umask, cwd and env after the switch', () => {
    const options = { asUser: 'web', cwd: '/srv/a b', env: { PORT: '3000', X: '$(id)' } };
    const inner = [...umask(), 'env', ...withoutSshSession, '-C', '/srv/a b', 'PORT=3000', 'X=$(id)', 'npm', 'ci'];
    expect(buildArgv(['npm', 'ci'], options, true)).toEqual(['runuser', '-u', 'web', '--', ...inner]);
    expect(buildArgv(['npm', 'ci'], options, false)).toEqual(['sudo', '-n', '-u', 'web', '-H', '--', ...inner]);
  });

  it('puts a server-side timeout innermost, TERM then KILL', () => {
    expect(buildArgv(['sleep', '9'], { timeoutMs: 1500, sudo: true }, false)).toEqual([
      'sudo',
      '-n',
      '--',
      ...umask(),
      'timeout',
      '-k',
      '2s',
      '1.5s',
      'sleep',
      '9',
    ]);
  });

  it('refuses what it cannot pass safely', () => {
    expect(() => buildArgv([], {}, true)).toThrow(/empty command/);
    expect(() => buildArgv(['echo', 'a\0b'], {}, true)).toThrow(/NUL/);
    expect(() => buildArgv(['id'], { asUser: '-x' }, true)).toThrow(/invalid user name/);
    expect(() => buildArgv(['id'], { env: { 'A B': '1' } }, true)).toThrow(/invalid environment variable name/);
    expect(() => buildArgv(['A=1'], { env: { B: '1' } }, true)).toThrow(/"="/);
    expect(() => buildArgv(['id'], { timeoutMs: 0 }, true)).toThrow(/invalid timeoutMs/);
    for (const bad of ['22', '0888', '022; id', 'u=rwx', ''])
      expect(() => buildArgv(['id'], { umask: bad }, true)).toThrow(/invalid umask/);
  });
});

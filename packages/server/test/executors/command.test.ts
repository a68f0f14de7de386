import { describe, expect, it } from 'vitest';
import { buildArgv } from '../../src/provisioning/executors/command.js';

// Pure: how RunOptions become argv (no system needed).
describe('buildArgv', () => {
  it('leaves a plain command alone', () => {
    expect(buildArgv(['ls', '-la'], {}, false)).toEqual(['ls', '-la']);
  });

  it('uses sudo -n only for a non-root user that asks for it', () => {
    expect(buildArgv(['id'], { sudo: true }, false)).toEqual(['sudo', '-n', '--', 'id']);
    expect(buildArgv(['id'], { sudo: true }, true)).toEqual(['id']);
  });

  it('switches user with runuser as root and sudo -u -H otherwise, cwd and env after the switch', () => {
    const options = { asUser: 'web', cwd: '/srv/a b', env: { PORT: '3000', X: '$(id)' } };
    const inner = ['env', '-C', '/srv/a b', 'PORT=3000', 'X=$(id)', 'npm', 'ci'];
    expect(buildArgv(['npm', 'ci'], options, true)).toEqual(['runuser', '-u', 'web', '--', ...inner]);
    expect(buildArgv(['npm', 'ci'], options, false)).toEqual(['sudo', '-n', '-u', 'web', '-H', '--', ...inner]);
  });

  it('puts a server-side timeout innermost, TERM then KILL', () => {
    expect(buildArgv(['sleep', '9'], { timeoutMs: 1500, sudo: true }, false)).toEqual([
      'sudo',
      '-n',
      '--',
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
  });
});

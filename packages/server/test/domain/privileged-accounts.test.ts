import { describe, expect, it } from 'vitest';
import { parseAccount, privilegedAccount, privilegedName } from '../../src/domain/servers/privileged-accounts.js';

describe('accounts that may not own sites', () => {
  it('refuses by name: root, the SSH user (any case), system names, systemd-*', () => {
    for (const name of ['root', 'daemon', 'bin', 'sys', 'www-data', 'nobody', 'postgres', 'mysql', 'systemd-timesync'])
      expect(privilegedName(name, 'deployer'), name).toMatch(/system account/);
    expect(privilegedName('Deployer', 'deployer')).toMatch(/logs in to this server/);
    expect(privilegedName('alice', 'deployer')).toBeNull();
    expect(privilegedName('alice', null)).toBeNull();
  });

  it('refuses by account: uid below 1000, nobody, members of sudo/wheel/adm/root', () => {
    expect(privilegedAccount('a', { uid: 999, groups: ['a'] })).toMatch(/uid 999/);
    expect(privilegedAccount('a', { uid: 65534, groups: ['a'] })).toMatch(/uid 65534/);
    for (const group of ['sudo', 'wheel', 'adm', 'root'])
      expect(privilegedAccount('a', { uid: 1000, groups: ['a', group] }), group).toMatch(`group ${group}`);
    expect(privilegedAccount('a', { uid: 1000, groups: ['a', 'www-pub'] })).toBeNull();
  });

  it('reads getent and id output; an unreadable uid counts as root', () => {
    expect(parseAccount('alice:x:1001:1001::/home/alice:/bin/bash\n', 'alice docker\n')).toEqual({
      uid: 1001,
      groups: ['alice', 'docker'],
    });
    expect(parseAccount('', '')).toBeNull();
    expect(parseAccount('weird', '')).toEqual({ uid: 0, groups: [] });
  });
});

// SITEPLANE_LONG_COMMAND_MINUTES (README "Configuration"): how long one long command on a server may run.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.js';
import { configProblems } from '../support/config-problems.js';

describe('SITEPLANE_LONG_COMMAND_MINUTES', () => {
  it('defaults to 20 minutes and takes whole minutes up to a day', () => {
    expect(loadConfig({}).longCommandMinutes).toBe(20);
    expect(loadConfig({ SITEPLANE_LONG_COMMAND_MINUTES: '45' }).longCommandMinutes).toBe(45);
    expect(loadConfig({ SITEPLANE_LONG_COMMAND_MINUTES: '1440' }).longCommandMinutes).toBe(1440);
  });

  it('refuses what is not a whole number of minutes from 1 to 1440, with the other problems', () => {
    for (const value of ['0', '1441', '2.5', 'forever']) {
      expect(configProblems({ SITEPLANE_LONG_COMMAND_MINUTES: value }), value).toEqual([
        `SITEPLANE_LONG_COMMAND_MINUTES must be an integer from 1 to 1440 (got "${value}")`,
      ]);
    }
  });
});

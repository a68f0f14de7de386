// NODE_SOURCE (ARCHITECTURE §2 "Configuration"): validated at start with every other problem.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.js';
import { configProblems } from '../support/config-problems.js';

describe('NODE_SOURCE', () => {
  it("defaults to nodesource (Debian's package when its major matches, else NodeSource's repository)", () => {
    expect(loadConfig({}).nodeSource).toBe('nodesource');
  });

  it('takes npm (Node from the npm registry), case-insensitively', () => {
    expect(loadConfig({ NODE_SOURCE: 'npm' }).nodeSource).toBe('npm');
    expect(loadConfig({ NODE_SOURCE: ' NPM ' }).nodeSource).toBe('npm');
  });

  it('refuses anything else, listed with the other problems', () => {
    expect(configProblems({ NODE_SOURCE: 'nodejs.org', PORT: 'x' }).sort()).toEqual([
      'NODE_SOURCE must be one of nodesource, npm (got "nodejs.org")',
      'PORT must be an integer from 0 to 65535 (got "x")',
    ]);
  });
});

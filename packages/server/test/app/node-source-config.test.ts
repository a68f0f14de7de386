// NODE_SOURCE (ARCHITECTURE §2 "Configuration"): validated at start with every other problem.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/app/config.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('NODE_SOURCE', () => {
  it("defaults to nodesource (Debian's package when its major matches, else NodeSource's repository)", () => {
    expect(loadConfig({}).nodeSource).toBe('nodesource');
  });

  it('takes npm (Node from the npm registry), case-insensitively', () => {
    expect(loadConfig({ NODE_SOURCE: 'npm' }).nodeSource).toBe('npm');
    expect(loadConfig({ NODE_SOURCE: ' NPM ' }).nodeSource).toBe('npm');
  });

  it('refuses anything else, listed with the other problems', () => {
    expect(problems({ NODE_SOURCE: 'nodejs.org', PORT: 'x' }).sort()).toEqual([
      'NODE_SOURCE must be one of nodesource, npm (got "nodejs.org")',
      'PORT must be an integer from 0 to 65535 (got "x")',
    ]);
  });
});

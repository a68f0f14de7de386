import { ConfigError, loadConfig } from '../../src/app/config.js';

/** What loadConfig refuses in `env`, every problem at once (none: []). */
export function configProblems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

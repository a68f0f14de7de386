// Every setting the service reads (app/config.ts) is in the README's configuration table, so an
// operator never meets a variable only the code knows about.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

describe('the README names every setting', () => {
  it('each environment variable app/config.ts reads has a row in the configuration table', () => {
    const source = readFileSync(`${ROOT}packages/server/src/app/config.ts`, 'utf8');
    const readme = readFileSync(`${ROOT}README.md`, 'utf8');
    const names = [...new Set([...source.matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|HOST|PORT)'/g)].map((m) => m[1] as string))];
    expect(names.length).toBeGreaterThan(15);
    const rows = readme.split('\n').filter((line) => line.startsWith('| `'));
    const missing = names.filter((name) => !rows.some((row) => row.split('|')[1]?.includes(`\`${name}\``)));
    expect(missing).toEqual([]);
  });
});

// How the benchmarks start Siteplane: as operators run it (`npm start`), the built command
// (scripts/build.mjs) under plain Node with the start script's flags, not through tsx.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Builds the command once per bench; answers node's arguments before `serve`, `token …` and the like. */
export function builtServiceCommand(): string[] {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'ignore' });
  return ['packages/cli/dist/siteplane.js'];
}

/** The flags `npm start` passes to node (package.json's start script: `node <flags> <script> serve`). */
export function startFlags(): string {
  const start = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start;
  return start
    .split(' ')
    .filter((word) => word.startsWith('--'))
    .join(' ');
}

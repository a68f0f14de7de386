#!/usr/bin/env node
// The `siteplane` command: runs the built bundle (scripts/build.mjs, run by `npm ci` and `npm pack`).
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/siteplane.js', import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write('siteplane is not built yet: run `npm run build` in the Siteplane checkout\n');
  process.exit(1);
}
await import(bundle.href);

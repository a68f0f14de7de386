#!/usr/bin/env node
// Builds the `siteplane` command: the CLI with the server, contract and SDK it uses bundled into
// one JavaScript file (packages/cli/dist/siteplane.js), so `npm start`, `npx siteplane` and an
// installed tarball run plain Node, not tsx. npm packages stay outside the bundle (they are the
// CLI package's dependencies: better-sqlite3 and ssh2 carry native code and must be installed, not
// copied). Run by `npm ci` (the root's `prepare`) and `npm pack` (the CLI's `prepack`).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'packages/cli');
const manifest = JSON.parse(readFileSync(join(cli, 'package.json'), 'utf8'));
const { version } = manifest;

// Workspace packages (@siteplane/*) and relative imports are bundled; every other bare import is
// an npm dependency, left for Node to resolve from node_modules.
const npmPackagesOutside = {
  name: 'npm-packages-outside',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@siteplane/') ? undefined : { path: args.path, external: true },
    );
  },
};

const result = await build({
  entryPoints: [join(cli, 'src/main.ts')],
  outfile: join(cli, 'dist/siteplane.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  plugins: [npmPackagesOutside],
  define: { 'process.env.SITEPLANE_BUILT_VERSION': JSON.stringify(version) },
  logLevel: 'warning',
  metafile: true,
});

// Every npm package the bundle imports must be a dependency of the CLI package, or an installed
// tarball would fail at its first import of it.
const declared = new Set(Object.keys(manifest.dependencies ?? {}));
const missing = new Set();
for (const output of Object.values(result.metafile.outputs)) {
  for (const { path, external } of output.imports) {
    if (!external || path.startsWith('node:')) continue;
    const name = path.startsWith('@') ? path.split('/').slice(0, 2).join('/') : path.split('/')[0];
    if (!declared.has(name)) missing.add(name);
  }
}
if (missing.size > 0) {
  console.error(`packages/cli/package.json must list these dependencies of the bundle: ${[...missing].join(', ')}`);
  process.exit(1);
}
console.log(`built packages/cli/dist/siteplane.js (siteplane ${version})`);

// Writes packages/sdk/src/generated/ from openapi.json. `npm run openapi && npm run sdk:generate`
// after changing a route; a test fails while the committed files are stale.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { generateSdk } from '../packages/sdk/codegen/generate-sdk.js';

const doc = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8'));
const dir = new URL('../packages/sdk/src/generated/', import.meta.url);
mkdirSync(dir, { recursive: true });
for (const [name, text] of Object.entries(await generateSdk(doc))) writeFileSync(new URL(name, dir), text);
console.log('packages/sdk/src/generated written');

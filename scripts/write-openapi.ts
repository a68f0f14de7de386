// Writes openapi.json from the route definitions (the same document the service serves).
// `npm run openapi` after changing a route; a test fails while the committed file is stale.
import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../packages/server/test/support/openapi-document.js';

const doc = await buildOpenApiDocument();
writeFileSync(new URL('../openapi.json', import.meta.url), `${JSON.stringify(doc, null, 2)}\n`);
console.log('openapi.json written');

import { GRACEFUL_STOP } from './graceful-stop.js';

/**
 * What a new site shows until its first deployment: a page for nginx-served types, a tiny Node
 * server for process types (so PM2 has something listening on PORT and nginx a working upstream).
 */
export function renderPlaceholderPage(domain: string): string {
  const name = escapeHtml(domain);
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${name}</title></head>
<body>
<h1>${name} is ready</h1>
<p>This placeholder was created by Siteplane. Deploy your site to replace it.</p>
</body>
</html>
`;
}

export const PLACEHOLDER_APP_FILE = 'siteplane-placeholder.cjs';

export function renderPlaceholderApp(domain: string): string {
  return `// Created by Siteplane: answers on PORT until the first deployment replaces this release.
${GRACEFUL_STOP}
const http = require('node:http');
const page = ${JSON.stringify(renderPlaceholderPage(domain))};
const port = Number(process.env.PORT);
http
  .createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(page);
  })
  .listen(port, '127.0.0.1');
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * A readable API reference at /docs, rendered on the server from the OpenAPI document (no CDN or
 * script: the service must work offline).
 */
export function renderDocsPage(doc: {
  info: { title: string; version: string };
  paths: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, unknown> };
}): string {
  const esc = (s: string) =>
    s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);
  const sections: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const o = op as {
        summary: string;
        tags: string[];
        parameters?: { name: string; in: string; description?: string }[];
        requestBody?: unknown;
        responses: Record<string, { description?: string }>;
      };
      const params = (o.parameters ?? [])
        .map((p) => `<li><code>${esc(p.name)}</code> (${p.in})${p.description ? ` — ${esc(p.description)}` : ''}</li>`)
        .join('');
      const responses = Object.entries(o.responses)
        .map(([status, r]) => `<li><code>${status}</code> ${esc(r.description ?? 'problem+json')}</li>`)
        .join('');
      const body = o.requestBody
        ? `<details><summary>Request body schema</summary><pre>${esc(JSON.stringify((o.requestBody as { content: { 'application/json': { schema: unknown } } }).content['application/json'].schema, null, 2))}</pre></details>`
        : '';
      sections.push(
        `<section><h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${esc(path)}</code></h3><p>${esc(o.summary)} <em>(${esc(o.tags.join(', '))})</em></p>${params ? `<ul>${params}</ul>` : ''}${body}<ul>${responses}</ul></section>`,
      );
    }
  }
  // Shared shapes are $refs in the operations above; each is shown once here under its name.
  const schemas = Object.entries(doc.components?.schemas ?? {}).map(
    ([name, schema]) =>
      `<section id="schema-${esc(name)}"><h3><code>${esc(name)}</code></h3><details><summary>Schema</summary><pre>${esc(JSON.stringify(schema, null, 2))}</pre></details></section>`,
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(doc.info.title)} ${esc(doc.info.version)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222}section{border-top:1px solid #ddd;padding:.5em 0}
.m{display:inline-block;min-width:4.5em;font-size:.8em;padding:.1em .4em;border-radius:3px;color:#fff;background:#555}.get{background:#2a7}.post{background:#27a}.delete{background:#c33}pre{background:#f6f6f6;padding:.5em;overflow:auto;font-size:12px}</style></head>
<body><h1>${esc(doc.info.title)} <small>${esc(doc.info.version)}</small></h1>
<p>Every request carries <code>Authorization: Bearer &lt;token&gt;</code> (create one with <code>siteplane token create</code>). Bodies are JSON. Errors are <code>application/problem+json</code> with a stable <code>code</code> and every invalid field in <code>errors[]</code>. The machine-readable document is at <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</p>
${sections.join('\n')}
<h2>Schemas</h2>
${schemas.join('\n')}</body></html>`;
}

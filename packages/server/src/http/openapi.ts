import { ProblemSchema } from '@siteplane/contract';
import type { RouteDef } from './route.js';

/** OpenAPI 3.1 built from the route definitions: the document cannot drift from the routes. */
export function buildOpenApi(routes: RouteDef[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.url.replace(/:([A-Za-z]+)/g, '{$1}').replace(/\/\*$/, '/{repo_name}');
    const params = Object.entries(route.params ?? {}).map(([name, description]) => ({
      name: name === '*' ? 'repo_name' : name,
      in: 'path',
      required: true,
      description,
      schema: { type: 'string' },
    }));
    const query = route.query
      ? Object.entries((route.query as unknown as { properties: Record<string, unknown>; required?: string[] }).properties).map(
          ([name, schema]) => ({
            name,
            in: 'query',
            required: (route.query as unknown as { required?: string[] }).required?.includes(name) ?? false,
            schema: strip(schema),
          }),
        )
      : [];
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(route.responses)) {
      responses[status] = {
        description: r.description,
        ...(r.schema ? { content: { [r.mediaType ?? 'application/json']: { schema: strip(r.schema) } } } : {}),
        ...(r.headers
          ? {
              headers: Object.fromEntries(
                Object.entries(r.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }]),
              ),
            }
          : {}),
      };
    }
    if (route.auth !== 'none') {
      responses['401'] = { $ref: '#/components/responses/Problem' };
      responses.default = { $ref: '#/components/responses/Problem' };
    }
    paths[path] ??= {};
    (paths[path] as Record<string, unknown>)[route.method.toLowerCase()] = {
      summary: route.summary,
      tags: [route.tag],
      operationId: operationId(route),
      ...(route.auth === 'none' ? { security: [] } : {}),
      parameters: [
        ...params,
        ...query,
        ...((route.method === 'POST' || route.method === 'DELETE') && route.auth !== 'none' ? [IDEMPOTENCY] : []),
      ],
      ...(route.body
        ? {
            requestBody: {
              required: route.method === 'POST' && !route.bodyOptional,
              content: {
                'application/json': { schema: strip(route.body) },
                ...Object.fromEntries(
                  (route.upload?.mediaTypes ?? []).map((type) => [
                    type,
                    { schema: { type: 'string', format: 'binary', description: route.upload?.description } },
                  ]),
                ),
              },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Siteplane API',
      version,
      description: 'Sites on servers and version control profiles. Errors are application/problem+json.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer sp_…' } },
      schemas: { Problem: strip(ProblemSchema) },
      responses: {
        Problem: {
          description: 'Problem',
          content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
        },
      },
    },
  };
}

const IDEMPOTENCY = { name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } };

function operationId(route: RouteDef): string {
  const words = route.summary
    .replace(/[^A-Za-z ]/g, '')
    .split(/\s+/)
    .slice(0, 6);
  return words.map((w, i) => (i === 0 ? w.toLowerCase() : w.charAt(0).toUpperCase() + w.slice(1).toLowerCase())).join('');
}

/** TypeBox schemas carry symbol keys; JSON round-trip leaves plain JSON Schema. */
function strip(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema));
}

import { NAMED_SCHEMAS } from '@siteplane/contract';
import type { RouteDef } from './route.js';

/** OpenAPI 3.1 built from the route definitions: the document cannot drift from the routes. */
export function buildOpenApi(routes: RouteDef[], version: string) {
  assertOperationIds(routes);
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
        ...(r.schema ? { content: { [r.mediaType ?? 'application/json']: { schema: toJsonSchema(r.schema) } } } : {}),
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
      operationId: route.operationId,
      ...(route.auth === 'none' ? { security: [] } : {}),
      parameters: [
        ...params,
        ...query,
        ...((route.method === 'POST' || route.method === 'DELETE') && route.auth !== 'none' ? [IDEMPOTENCY] : []),
      ],
      ...(route.body
        ? {
            requestBody: {
              required: route.method !== 'DELETE' && !route.bodyOptional,
              content: {
                'application/json': { schema: toJsonSchema(route.body) },
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
      schemas: Object.fromEntries(Object.entries(NAMED_SCHEMAS).map(([name, schema]) => [name, toJsonSchema(schema, schema)])),
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

/** Operation ids name the SDK's methods: each route declares its own, and no two may share one. */
export function assertOperationIds(routes: RouteDef[]): void {
  const seen = new Set<string>();
  for (const route of routes) {
    if (!/^[a-z][A-Za-z0-9]*$/.test(route.operationId))
      throw new Error(`${route.method} ${route.url}: operationId "${route.operationId}" is not lowerCamelCase`);
    if (seen.has(route.operationId)) throw new Error(`operationId "${route.operationId}" is used twice`);
    seen.add(route.operationId);
  }
}

const NAME_OF = new Map<unknown, string>(Object.entries(NAMED_SCHEMAS).map(([name, schema]) => [schema, name]));

/**
 * Plain JSON Schema from a TypeBox schema (symbol keys dropped), each named shape of
 * NAMED_SCHEMAS replaced by a $ref to its component; `self` is the component being written.
 */
function toJsonSchema(schema: unknown, self?: unknown): unknown {
  if (Array.isArray(schema)) return schema.map((s) => toJsonSchema(s));
  if (typeof schema !== 'object' || schema === null) return schema;
  const name = schema === self ? undefined : NAME_OF.get(schema);
  if (name) return { $ref: `#/components/schemas/${name}` };
  const json = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, toJsonSchema(v)]));
  return 'discriminator' in json ? discriminated(json) : json;
}

/**
 * A TypeBox union with a discriminator (the site create body) is a oneOf in the document, its
 * mapping naming each branch's component, as OpenAPI tools expect of a discriminated union.
 */
function discriminated(json: Record<string, unknown>): Record<string, unknown> {
  const { anyOf, discriminator, ...rest } = json as { anyOf: { $ref?: string }[]; discriminator: { propertyName: string } };
  const mapping: Record<string, string> = {};
  for (const branch of anyOf) {
    const name = branch.$ref?.replace('#/components/schemas/', '');
    const value = name ? (NAMED_SCHEMAS[name] as { properties?: Record<string, { const?: string }> }) : undefined;
    const key = value?.properties?.[discriminator.propertyName]?.const;
    if (!key || !branch.$ref) throw new Error('a discriminated union needs named branches with a const discriminator');
    mapping[key] = branch.$ref;
  }
  return { ...rest, oneOf: anyOf, discriminator: { ...discriminator, mapping } };
}

/** Parameters and other leaves: plain JSON Schema without references. */
function strip(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema));
}

import { Type as T, type TObject, type TSchema } from '@sinclair/typebox';
import {
  DATABASE_OPTION_NAMES,
  DB_SERVERS,
  DIRECTUS_RELEASE_TYPES,
  DNS_PROVIDERS,
  NODE_VERSIONS,
  PHP_VERSIONS,
  SITE_TYPE_IDS,
  SITE_TYPES,
  type SiteTypeId,
  type SiteTypeSpec,
  SSL_PROVIDERS,
} from './site-types.js';

/**
 * The create body, one schema per site type (spec §2.1–2.5), built from the table of site-types.ts:
 * each type's branch has only the options that type takes, its required ones required, and its
 * site_type_version values. The server checks a body against its type's branch besides the rules
 * across fields (use cases), so every limit written here is enforced.
 */
const lit = <V extends string | number>(values: readonly V[]) => T.Union(values.map((v) => T.Literal(v)));
const Uuid = T.String({ format: 'uuid' });
/** One line: no control characters (it reaches a shell as one argument of bash -c). */
const ONE_LINE = '^[^\\u0000-\\u001f\\u007f]*$';

export const BUILD_COMMAND_MAX_LENGTH = 2000;

/** Every option a type may take, with its own limits. */
const OPTION_SCHEMAS: Record<string, TSchema> = {
  phpVersion: lit(PHP_VERSIONS),
  nodejsVersion: lit(NODE_VERSIONS),
  buildCommand: T.String({ maxLength: BUILD_COMMAND_MAX_LENGTH, pattern: ONE_LINE, description: 'One line' }),
  enableCache: T.Boolean(),
  shouldCreateDatabaseAndUser: T.Boolean(),
  database: T.String({ pattern: '^[A-Za-z0-9_$]{1,63}$' }),
  databaseUser: T.String(),
  databasePassword: T.String({ writeOnly: true }),
  useCachingSha2Password: T.Boolean(),
  preferredDbServer: lit(DB_SERVERS),
  directusReleaseType: lit(DIRECTUS_RELEASE_TYPES),
  port: T.Integer({ minimum: 1024, maximum: 65535 }),
  artifactPath: T.String({ description: 'Relative to the site root: letters, digits, . _ - and /, without ..' }),
  webDirectory: T.String({ description: 'Relative to the site root: letters, digits, . _ - and /, without ..' }),
  performInstallSetup: T.Boolean({ default: true }),
  wpAdminSetup: T.Object(
    {
      title: T.String({ minLength: 1, maxLength: 200, pattern: ONE_LINE }),
      adminUser: T.String({ pattern: '^[A-Za-z0-9_.@-]{1,60}$' }),
      adminPassword: T.String({ minLength: 8, maxLength: 200, pattern: ONE_LINE, writeOnly: true }),
      adminEmail: T.String({ pattern: '^[^\\s@]{1,64}@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$' }),
    },
    { additionalProperties: false, description: 'Required unless performInstallSetup is false' },
  ),
};

/** The fields every type shares. */
const COMMON = {
  server: Uuid,
  serverUser: Uuid,
  domain: T.Optional(T.String({ description: 'Required unless freeDomain is true' })),
  freeDomain: T.Optional(T.Boolean()),
  ssl: T.Optional(T.Boolean({ description: 'Required with a custom domain' })),
  sslEmail: T.Optional(T.String({ format: 'email', description: 'Required when ssl is true' })),
  sslProvider: T.Optional(lit(SSL_PROVIDERS)),
  includeWwwSslCert: T.Optional(T.Boolean()),
};

function optionNames(spec: SiteTypeSpec): string[] {
  return [...spec.options, ...(spec.database === 'none' ? [] : DATABASE_OPTION_NAMES)];
}

function createBodyOf(spec: SiteTypeSpec): TObject {
  const options: Record<string, TSchema> = {};
  for (const name of optionNames(spec)) {
    const schema = OPTION_SCHEMAS[name];
    if (!schema) throw new Error(`${spec.id}: option ${name} has no schema`);
    options[name] = spec.requiredOptions.includes(name) ? schema : T.Optional(schema);
  }
  const top: Record<string, TSchema> = {};
  if (spec.typeVersions.length) {
    // Accepted at the top or among the options (the peers' bodies use both); the same value if both.
    top.site_type_version = T.Optional(lit(spec.typeVersions));
    options.site_type_version = T.Optional(lit(spec.typeVersions));
  }
  if (spec.wildcardAllowed) {
    top.wildcard = T.Optional(T.Boolean());
    top.dnsProfile = T.Optional(
      T.Object({ uuid: Uuid, provider: lit(DNS_PROVIDERS) }, { description: 'Required when wildcard is true' }),
    );
  }
  if (spec.id === 'laravel') top.supportsLivewire = T.Optional(T.Boolean());
  return T.Object(
    {
      type: T.Literal(spec.id, { description: `${spec.id}; the display name "${spec.displayName}" is accepted too` }),
      ...COMMON,
      ...top,
      options: T.Object(options, {
        additionalProperties: false,
        description: `The options of ${spec.displayName} sites${spec.requiredOptions.length ? ` (${spec.requiredOptions.join(', ')} required)` : ''}`,
      }),
    },
    { title: spec.displayName, additionalProperties: false },
  );
}

/** One create body per type, by canonical id. */
export const CREATE_SITE_BODIES = Object.fromEntries(SITE_TYPE_IDS.map((id) => [id, createBodyOf(SITE_TYPES[id])])) as Record<
  SiteTypeId,
  TObject
>;

/** The create body of POST /api/v1/sites: a oneOf of the types' bodies, discriminated by `type`. */
export const CreateSiteBody = T.Union(
  SITE_TYPE_IDS.map((id) => CREATE_SITE_BODIES[id]),
  {
    discriminator: { propertyName: 'type' },
    description: 'One schema per site type, chosen by `type`; each lists the options of its type.',
  },
);

import { Type as T, type TSchema } from '@sinclair/typebox';
import { DB_ENGINE_PATTERN, DB_SERVERS, DNS_PROVIDERS, PHP_VERSIONS, SITE_TYPE_IDS } from './site-types.js';

/**
 * TypeBox schemas of every request and response: the server validates admin bodies with them and
 * builds the OpenAPI document from them; the SDK types come from them.
 */
const lit = (values: readonly string[]) => T.Union(values.map((v) => T.Literal(v)));
const Uuid = T.String({ format: 'uuid' });

export const FieldErrorSchema = T.Object({ field: T.String(), code: T.String(), message: T.String() });
export const ProblemSchema = T.Object(
  {
    type: T.String(),
    title: T.String(),
    status: T.Integer(),
    detail: T.String(),
    code: T.String(),
    errors: T.Optional(T.Array(FieldErrorSchema)),
    request_id: T.String(),
  },
  { description: 'application/problem+json' },
);

export const ListMeta = T.Object({ next_cursor: T.Union([T.String(), T.Null()]), limit: T.Integer() });
export const listOf = (item: TSchema) => T.Object({ data: T.Array(item), meta: ListMeta });

export const OperationRef = T.Object({ uuid: Uuid, kind: T.String(), status: T.String() });

export const SiteRecordSchema = T.Object({
  uuid: Uuid,
  server: Uuid,
  server_user: Uuid,
  type: lit(SITE_TYPE_IDS),
  domain: T.String(),
  free_domain: T.Boolean(),
  free_domain_base: T.Union([T.String(), T.Null()]),
  status: lit(['pending', 'installing', 'installed', 'failed', 'deleting', 'deleted', 'delete_failed']),
  ssl: T.Object({
    enabled: T.Boolean(),
    provider: T.Union([T.String(), T.Null()]),
    wildcard: T.Boolean(),
    include_www: T.Boolean(),
    status: T.String({ description: 'none (ssl false), pending, issuing, active or failed' }),
    expires_at: T.Union([T.String(), T.Null()]),
    error: T.Optional(
      T.Union([
        T.Object({
          code: T.String({
            description:
              'dns_not_pointing, challenge_failed, rate_limited, ca_unreachable, account_failed, dns_provider_failed or deploy_failed; ' +
              'for temporary names in the operator zone also certificate_retry_limited, zone_certificates_exhausted or team_certificates_exhausted',
          }),
          message: T.String(),
          operation: T.String({ description: 'The operation whose log has the details' }),
          at: T.String(),
          retry_after_seconds: T.Optional(T.Integer()),
          retry_at: T.Optional(
            T.String({ description: 'When Siteplane orders again by itself (a limit was reached, or the CA rate-limited)' }),
          ),
        }),
        T.Null(),
      ]),
    ),
  }),
  supports_livewire: T.Boolean(),
  options: T.Record(T.String(), T.Unknown()),
  database: T.Union([
    T.Object({ name: T.Union([T.String(), T.Null()]), user: T.Union([T.String(), T.Null()]), engine: T.String() }),
    T.Null(),
  ]),
  port: T.Union([T.Integer(), T.Null()]),
  failure: T.Unknown(),
  operation: T.Union([OperationRef, T.Null()]),
  deploy_needed: T.Boolean({ description: 'An environment change waits for the next successful deploy' }),
  created_at: T.String(),
  updated_at: T.String(),
});

export const CreatedSiteSchema = T.Intersect([
  SiteRecordSchema,
  T.Object({
    generated_database_password: T.Optional(T.String({ description: 'Shown once, when Siteplane generated the password.' })),
  }),
]);

export const DeleteSiteBody = T.Object({ deleteDatabase: T.Optional(T.Boolean()) });

export const FactsSchema = T.Object({
  os: T.Union([T.String(), T.Null()]),
  arch: T.Optional(T.Union([T.String(), T.Null()])),
  php: T.Array(lit(PHP_VERSIONS)),
  node: T.Union([T.String(), T.Null()]),
  mysql: T.Union([
    lit(DB_SERVERS.filter((d) => !d.startsWith('postgresql'))),
    T.String({ pattern: DB_ENGINE_PATTERN.mysql, description: 'a version outside §2.4, e.g. mariadb118 (MariaDB 11.8)' }),
    T.Null(),
  ]),
  postgresql: T.Union([
    lit(DB_SERVERS.filter((d) => d.startsWith('postgresql'))),
    T.String({ pattern: DB_ENGINE_PATTERN.postgresql, description: 'a version outside §2.4, e.g. postgresql16' }),
    T.Null(),
  ]),
  nginx: T.Optional(T.Union([T.String(), T.Null()])),
  pm2: T.Optional(T.Union([T.String(), T.Null()])),
});

export const CreateServerBody = T.Object(
  {
    name: T.String({ minLength: 1, maxLength: 100 }),
    ip: T.String({ description: 'IPv4 or IPv6 address, or a host name' }),
    connection: lit(['ssh', 'local', 'dry-run']),
    sshPort: T.Optional(T.Integer({ minimum: 1, maximum: 65535 })),
    sshUser: T.Optional(T.String({ pattern: '^[a-z_][a-z0-9_-]{0,31}$' })),
    team: T.Optional(Uuid),
    facts: T.Optional(T.Partial(FactsSchema)),
  },
  { additionalProperties: false },
);

export const ServerRecordSchema = T.Object({
  uuid: Uuid,
  team: Uuid,
  name: T.String(),
  ip: T.String(),
  connection: T.String(),
  ssh_port: T.Integer(),
  ssh_user: T.String(),
  public_key: T.Union([T.String(), T.Null()]),
  host_key_sha256: T.Union([T.String(), T.Null()]),
  status: T.String(),
  facts: FactsSchema,
  facts_source: T.String(),
  facts_at: T.Union([T.String(), T.Null()]),
  created_at: T.String(),
});

export const CreateServerUserBody = T.Object(
  { username: T.String({ pattern: '^[a-z_][a-z0-9_-]{0,31}$' }) },
  { additionalProperties: false },
);
export const ServerUserSchema = T.Object({ uuid: Uuid, server: Uuid, username: T.String(), created_at: T.String() });

export const CreateDnsProfileBody = T.Object(
  {
    provider: lit(DNS_PROVIDERS),
    name: T.String({ minLength: 1, maxLength: 100 }),
    credentials: T.Record(T.String(), T.String(), {
      description:
        'cloudflare {apiToken}; digitalocean {token}; porkbun {apiKey, secretApiKey}; aws {accessKeyId, secretAccessKey, region?}',
    }),
    team: T.Optional(Uuid),
  },
  { additionalProperties: false },
);
export const DnsProfileSchema = T.Object({
  uuid: Uuid,
  team: Uuid,
  provider: T.String(),
  name: T.String(),
  verified_at: T.Union([T.String(), T.Null()]),
  created_at: T.String(),
});

export const VC_PROVIDERS = ['github', 'gitlab', 'bitbucket', 'gitea', 'git'] as const;
export const CreateVcProfileBody = T.Object(
  {
    provider: lit(VC_PROVIDERS),
    name: T.String({ minLength: 1, maxLength: 100 }),
    token: T.Optional(T.String({ writeOnly: true })),
    baseUrl: T.Optional(T.String({ format: 'uri' })),
    repositories: T.Optional(T.Array(T.String(), { description: 'git provider: remote URLs' })),
    team: T.Optional(Uuid),
  },
  { additionalProperties: false },
);
export const VcProfileSchema = T.Object({
  uuid: Uuid,
  team: Uuid,
  provider: T.String(),
  name: T.String(),
  base_url: T.Union([T.String(), T.Null()]),
  account: T.Union([T.String(), T.Null()]),
  created_at: T.String(),
});
export const RepositorySchema = T.Object({
  name: T.String({ description: '<owner>/<repo>' }),
  default_branch: T.Union([T.String(), T.Null()]),
  private: T.Union([T.Boolean(), T.Null()]),
  web_url: T.Union([T.String(), T.Null()]),
});
export const RepositoryDetailSchema = T.Intersect([
  RepositorySchema,
  T.Object({
    branches: T.Array(T.Object({ name: T.String(), commit: T.Union([T.String(), T.Null()]) })),
    ssh_url: T.Union([T.String(), T.Null()], {
      description: 'The ssh clone address (fetched with a deploy key); null when the provider gives none or for plain git',
    }),
  }),
]);

export const OperationSchema = T.Object({
  uuid: Uuid,
  site: Uuid,
  kind: T.String({ description: 'create, delete, ssl, deploy or rollback' }),
  status: lit(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
  error: T.Unknown(),
  created_at: T.String(),
  started_at: T.Union([T.String(), T.Null()]),
  finished_at: T.Union([T.String(), T.Null()]),
  steps: T.Array(
    T.Object({
      index: T.Integer(),
      name: T.String(),
      status: T.String(),
      exit_code: T.Union([T.Integer(), T.Null()]),
      started_at: T.String(),
      finished_at: T.Union([T.String(), T.Null()]),
    }),
  ),
  logs: T.Array(T.Object({ seq: T.Integer(), at: T.String(), line: T.String() })),
  next_after: T.Union([T.Integer(), T.Null()]),
});

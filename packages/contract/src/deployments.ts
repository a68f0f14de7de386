import { Type as T } from '@sinclair/typebox';

/**
 * Deployments (the user's code onto a site): a site's source, deploy settings, environment,
 * deployments and rollbacks. The server validates bodies with these and builds the OpenAPI document
 * from them, so each rule is written once; rules across fields (a hook name used twice, a source
 * checked through its profile) are the use cases'.
 */
const Uuid = T.String({ format: 'uuid' });
const Nullable = <S extends Parameters<typeof T.Union>[0][number]>(s: S) => T.Union([s, T.Null()]);

/** A relative path inside the release: no leading slash, no `..`, no control characters. */
export const RELATIVE_PATH_PATTERN = '^(?!/)(?!.*(^|/)\\.\\.(/|$))[A-Za-z0-9._@+/-]{1,255}$';
/** A branch name git accepts and no shell or argv reader takes for something else. */
export const BRANCH_PATTERN = '^(?!-)(?!.*\\.\\.)(?!.*//)[A-Za-z0-9._/+@-]{1,255}(?<![./])$';
export const COMMIT_PATTERN = '^[0-9a-fA-F]{7,64}$';
export const ENV_KEY_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';
/** One command line for bash -euo pipefail -c: printable, at most 4,000 characters. */
const Command = T.String({ minLength: 1, maxLength: 4000, pattern: '^[^\\u0000-\\u0008\\u000b-\\u001f\\u007f]*$' });

export const PutSiteSourceBody = T.Object(
  {
    vcProfile: Uuid,
    repository: T.String({ minLength: 1, maxLength: 255, description: '<owner>/<repo>, as the profile lists it' }),
    branch: T.String({ pattern: BRANCH_PATTERN, description: 'A branch the repository has' }),
    appFolder: T.Optional(
      T.String({ pattern: RELATIVE_PATH_PATTERN, description: 'Sub-directory holding the app (monorepos); default the root' }),
    ),
    access: T.Optional(
      T.Union([T.Literal('token'), T.Literal('deploy_key')], {
        description:
          'Hosted providers only (GitHub, GitLab, Bitbucket, Gitea/Forgejo). token (default): each fetch uses the profile’s token over https. deploy_key: Siteplane generates an ed25519 key for this site, registers it read-only at the provider through the profile’s token, and fetches over ssh with it; when the token may not manage deploy keys, the answer says so and shows the public key to add by hand. Plain git profiles choose by their remote (ssh: a deploy key) and refuse this field.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const DeployKeyRegistrationSchema = T.Object({
  status: T.Union([T.Literal('registered'), T.Literal('not_registered')]),
  provider_key_id: Nullable(T.String({ description: 'The provider’s id of the key (removed there on unbind or site deletion)' })),
  reason: Nullable(
    T.String({
      description:
        'Why it is not registered (hosted: the provider refused, the token lacks the right to manage deploy keys; plain git: the remote refused the key, not added yet); add deploy_public_key to the repository as a read-only deploy key by hand, then deploy or PUT again',
    }),
  ),
});

export const DeployKeyRemovalSchema = T.Object({
  uuid: Uuid,
  provider: T.String(),
  repository: T.String(),
  provider_key_id: T.String(),
  cause: T.Union([T.Literal('unbound'), T.Literal('rebound'), T.Literal('site_deleted')], {
    description: 'unbound: the source was unbound; rebound: bound to another repository or to token access; site_deleted',
  }),
  outcome: T.Union([T.Literal('removed'), T.Literal('already_gone'), T.Literal('failed')], {
    description: 'failed: the key is still at the provider; detail says why and which key to remove by hand',
  }),
  detail: Nullable(T.String()),
  created_at: T.String(),
});

export const SiteSourceSchema = T.Object({
  site: Uuid,
  vc_profile: Uuid,
  provider: T.String(),
  repository: T.String(),
  branch: T.String(),
  app_folder: Nullable(T.String()),
  auth: T.Union([T.Literal('token'), T.Literal('deploy_key'), T.Literal('none')], {
    description:
      'token: the profile’s token reaches the server for each fetch (never stored there); deploy_key: the server fetches over ssh with the site’s key (registered at the provider when deploy_key_registration says so, else add deploy_public_key to the repository, read-only); none: a public remote',
  }),
  deploy_public_key: Nullable(T.String({ description: 'ed25519 key Siteplane generated for this site (ssh remotes)' })),
  deploy_key_registration: T.Union([DeployKeyRegistrationSchema, T.Null()], {
    description:
      'Hosted providers with access deploy_key: whether the key is registered at the provider. Plain git ssh remotes: whether the remote accepted the key when the source was PUT (registered, the branch checked with it) or refused it (not_registered: the branch is not checked yet, deploys fail until the key is added). Null otherwise',
  }),
  created_at: T.String(),
  updated_at: T.String(),
});

export const HOOK_STAGES = ['after-fetch', 'before-activate', 'after-activate'] as const;
export const DeployHookSchema = T.Object(
  {
    name: T.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9 ._:()/-]*$' }),
    command: Command,
    stage: T.Union(HOOK_STAGES.map((s) => T.Literal(s))),
    enabled: T.Boolean(),
  },
  { additionalProperties: false },
);
export const SharedPathSchema = T.Object(
  { path: T.String({ pattern: RELATIVE_PATH_PATTERN }), kind: T.Union([T.Literal('file'), T.Literal('directory')]) },
  { additionalProperties: false },
);
export const HealthCheckSchema = T.Object(
  {
    path: T.String({ pattern: '^/[\\x21-\\x7e]{0,255}$', description: 'Asked on the new release; default /' }),
    timeoutSeconds: T.Integer({ minimum: 1, maximum: 600 }),
  },
  { additionalProperties: false },
);

export const DEPLOY_SETTING_NAMES = [
  'buildCommand',
  'artifactPath',
  'hooks',
  'sharedPaths',
  'keepReleases',
  'healthCheck',
  'startCommand',
] as const;
/**
 * PATCH: each field given replaces that setting; `reset` returns settings to their defaults (the
 * type's, or the site's options.buildCommand / options.artifactPath). Plain types, no nullable
 * unions, so every violation is reported on its own field.
 */
export const PatchDeploySettingsBody = T.Object(
  {
    buildCommand: T.Optional(
      T.String({
        maxLength: 4000,
        pattern: '^[^\\u0000-\\u0008\\u000b-\\u001f\\u007f]*$',
        description: 'Empty: nothing to build',
      }),
    ),
    artifactPath: T.Optional(
      T.String({ pattern: RELATIVE_PATH_PATTERN, description: 'Directory of the release that is served or run' }),
    ),
    hooks: T.Optional(
      T.Array(DeployHookSchema, {
        maxItems: 50,
        description:
          'Every hook in order (the whole list: add, reorder, disable); fetch, build, activate and prune are not hooks',
      }),
    ),
    sharedPaths: T.Optional(T.Array(SharedPathSchema, { maxItems: 50 })),
    keepReleases: T.Optional(T.Integer({ minimum: 1, maximum: 50 })),
    healthCheck: T.Optional(HealthCheckSchema),
    startCommand: T.Optional(
      T.String({
        minLength: 1,
        maxLength: 4000,
        pattern: '^[^\\u0000-\\u0008\\u000b-\\u001f\\u007f]*$',
        description:
          'Generic Port only (required to deploy one): the command PM2 runs in the release, as the site user, with PORT set to the site’s port',
      }),
    ),
    reset: T.Optional(
      T.Array(T.Union(DEPLOY_SETTING_NAMES.map((n) => T.Literal(n))), {
        maxItems: DEPLOY_SETTING_NAMES.length,
        description: 'Settings to return to their defaults',
      }),
    ),
  },
  { additionalProperties: false },
);

export const DeploySettingsSchema = T.Object({
  site: Uuid,
  build_command: Nullable(T.String()),
  artifact_path: Nullable(T.String()),
  hooks: T.Array(DeployHookSchema),
  shared_paths: T.Array(SharedPathSchema),
  keep_releases: T.Integer(),
  health_check: T.Object({ path: T.String(), timeout_seconds: T.Integer() }),
  start_command: Nullable(
    T.String({
      description: 'Generic Port: the command PM2 runs with PORT set; null for other types (their framework starts them)',
    }),
  ),
  platform_steps: T.Array(T.String(), { description: 'Fixed steps around the hooks: fetch, build, activate, prune' }),
  defaults: T.Array(T.String(), { description: 'Settings that follow the type’s defaults (never set, or named in reset)' }),
  updated_at: Nullable(T.String()),
});

export const ENV_SCOPES = ['build', 'runtime'] as const;
export const MAX_ENV_VALUE_BYTES = 32 * 1024;
export const MAX_ENV_KEYS = 200;
export const PatchEnvironmentBody = T.Object(
  {
    set: T.Optional(
      T.Record(
        // A key that does not match is reported as an unknown field of `set` (set.<KEY>).
        T.RegExp(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/),
        T.Object(
          {
            value: T.String({ maxLength: MAX_ENV_VALUE_BYTES, writeOnly: true }),
            scope: T.Union(ENV_SCOPES.map((s) => T.Literal(s))),
          },
          { additionalProperties: false },
        ),
        {
          additionalProperties: false,
          description: 'Keys (^[A-Za-z_][A-Za-z0-9_]*$, at most 128 characters) to set; others are left as they are',
        },
      ),
    ),
    unset: T.Optional(T.Array(T.String({ pattern: ENV_KEY_PATTERN, maxLength: 128 }), { maxItems: MAX_ENV_KEYS })),
  },
  { additionalProperties: false },
);
export const EnvironmentSchema = T.Object({
  site: Uuid,
  variables: T.Array(
    T.Object({ key: T.String(), scope: T.String(), updated_at: T.String() }, { description: 'Values are never returned' }),
  ),
  deploy_needed: T.Boolean(),
});

export const DEPLOYMENT_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export const DEPLOYMENT_TRIGGERS = ['manual', 'webhook', 'rollback', 'api'] as const;
export const CreateDeploymentBody = T.Object(
  {
    branch: T.Optional(T.String({ pattern: BRANCH_PATTERN })),
    commit: T.Optional(T.String({ pattern: COMMIT_PATTERN, description: 'A commit sha (7-64 hex); default the branch head' })),
  },
  { additionalProperties: false },
);
export const RollbackBody = T.Object(
  {
    release: T.Optional(T.String({ pattern: '^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{7}$', description: 'Default: the previous release' })),
  },
  { additionalProperties: false },
);

export const DeploymentSchema = T.Object({
  uuid: Uuid,
  site: Uuid,
  status: T.Union(DEPLOYMENT_STATUSES.map((s) => T.Literal(s))),
  trigger: T.String({ description: 'manual, webhook or rollback' }),
  branch: Nullable(T.String()),
  requested_commit: Nullable(T.String()),
  source_kind: T.Union([T.Literal('git'), T.Literal('artifact')], {
    description: 'git: fetched from the site’s source; artifact: an uploaded .tar.gz, unpacked without building',
  }),
  artifact: Nullable(
    T.Object(
      { sha256: T.String(), bytes: T.Integer() },
      { description: 'The uploaded archive (artifact deploys; a rollback to such a release names it too)' },
    ),
  ),
  commit: Nullable(T.Object({ sha: T.String(), message: T.String(), author: T.String() })),
  release: T.String(),
  operation: T.Object({ uuid: Uuid, kind: T.String(), status: T.String() }),
  superseded_by: Nullable(Uuid),
  cancel_requested: T.Boolean(),
  rollback: Nullable(
    T.Object({
      from_release: Nullable(T.String()),
      environment_changed: T.Boolean(),
      migrations_changed: T.Boolean(),
    }),
  ),
  release_bad: T.Boolean({ description: 'A rollback left this release; it is not chosen by default again' }),
  created_at: T.String(),
  started_at: Nullable(T.String()),
  finished_at: Nullable(T.String()),
  duration_ms: Nullable(T.Integer()),
});

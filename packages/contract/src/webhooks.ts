import { Type as T } from '@sinclair/typebox';

/**
 * Push-to-deploy webhooks of a site: their configuration (`/api/v1/sites/<uuid>/webhook`), the
 * deliveries received, and what an incoming hook answers.
 */
const Uuid = T.String({ format: 'uuid' });
const nullable = <S extends Parameters<typeof T.Union>[0][number]>(s: S) => T.Union([s, T.Null()]);

/** A branch name, or a pattern where `*` stands for any run of characters (`release/*`). */
export const BranchPattern = T.String({
  minLength: 1,
  maxLength: 255,
  // What git allows in a ref name, plus `*`: no spaces, control characters, `~ ^ : ? [ \`.
  pattern: '^[^\\s\\x00-\\x1f\\x7f~^:?\\[\\\\]+$',
});

export const BranchList = T.Array(BranchPattern, {
  maxItems: 50,
  description: 'Pushes to these branches deploy; [] = any branch; null (the default) = the branch of the site’s source.',
});

export const HOOK_PROVIDERS = ['github', 'gitlab', 'bitbucket', 'gitea'] as const;

export const ConfigureWebhookBody = T.Object(
  {
    branches: T.Optional(nullable(BranchList)),
    rotate: T.Optional(
      T.Array(T.Union([T.Literal('secret'), T.Literal('trigger_url')]), {
        maxItems: 2,
        uniqueItems: true,
        description:
          'On a configured webhook, what to replace (default both; [] changes only `branches`). A new webhook gets both.',
      }),
    ),
    register: T.Optional(
      T.Object(
        {
          vcProfile: Uuid,
          repository: T.String({ minLength: 1, maxLength: 512, description: '<owner>/<repo> as the profile lists it' }),
        },
        {
          additionalProperties: false,
          description:
            'Also create the hook at the provider, through the profile’s token; when the site’s hook there was registered through this profile for this repository, it is updated (URL and secret) instead, never duplicated. A hook registered elsewhere before is deleted there (see …/webhook/removals).',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

const HookUrls = T.Object({
  github: T.String(),
  gitlab: T.String(),
  bitbucket: T.String(),
  gitea: T.String({ description: 'Gitea and Forgejo' }),
});

export const WebhookSchema = T.Object({
  site: Uuid,
  enabled: T.Boolean(),
  branches: nullable(T.Array(T.String())),
  urls: nullable(HookUrls),
  /** Shown only in the answer that generated it. */
  secret: nullable(T.String({ description: 'The shared secret; only in the answer that generated it, never again' })),
  trigger_url: nullable(
    T.String({ description: 'POST here from CI or a git hook; only in the answer that generated it, never again' }),
  ),
  registered: nullable(
    T.Object(
      { provider: T.String(), repository: T.String(), hook_id: nullable(T.String()) },
      {
        description:
          'Created at the provider. Rotating the secret gives it the new one there (through the profile it was created with); turning the webhook off or deleting the site deletes it there. Null again when the provider answered 404 for it on rotation (deleted by hand)',
      },
    ),
  ),
  secret_rotated_at: nullable(T.String()),
  trigger_rotated_at: nullable(T.String()),
  created_at: nullable(T.String()),
  updated_at: nullable(T.String()),
});

export const WebhookRemovalSchema = T.Object({
  uuid: Uuid,
  provider: T.String(),
  repository: T.String(),
  provider_hook_id: T.String(),
  cause: T.Union([T.Literal('disabled'), T.Literal('replaced'), T.Literal('site_deleted')], {
    description:
      'disabled: the webhook was turned off (DELETE …/webhook); replaced: registered again for another repository or through another profile; site_deleted',
  }),
  outcome: T.Union([T.Literal('removed'), T.Literal('already_gone'), T.Literal('failed')], {
    description:
      'already_gone: the provider answered 404; failed: the hook is still at the provider (it posts to a URL that answers 404), detail says why and which hook to delete by hand',
  }),
  detail: nullable(T.String()),
  created_at: T.String(),
});

export const WEBHOOK_OUTCOMES = ['accepted', 'ignored', 'rejected'] as const;

export const WebhookDeliverySchema = T.Object({
  uuid: Uuid,
  provider: T.String({ description: 'github, gitlab, bitbucket, gitea or trigger' }),
  delivery_id: nullable(T.String()),
  event: nullable(T.String()),
  outcome: T.Union(
    WEBHOOK_OUTCOMES.map((o) => T.Literal(o)),
    {
      description: 'accepted: a deployment was started; ignored: authentic, nothing to deploy; rejected: refused',
    },
  ),
  reason: nullable(T.String()),
  detail: nullable(T.String()),
  branch: nullable(T.String()),
  commit: nullable(T.String()),
  deployment: nullable(Uuid),
  created_at: T.String(),
});

export const HookAnswerSchema = T.Object({
  delivery: Uuid,
  outcome: T.Union(WEBHOOK_OUTCOMES.map((o) => T.Literal(o))),
  reason: nullable(T.String()),
  duplicate: T.Boolean(),
  deployment: nullable(Uuid),
});

/** A branch name as git allows it (no `*`). */
export const BranchName = T.String({ minLength: 1, maxLength: 255, pattern: '^[^\\s\\x00-\\x1f\\x7f~^:?*\\[\\\\]+$' });

export const TriggerBody = T.Object(
  {
    branch: T.Optional(BranchName),
    commit: T.Optional(T.String({ pattern: '^[0-9a-fA-F]{7,64}$' })),
  },
  { additionalProperties: false },
);

import { Type as T } from '@sinclair/typebox';

/**
 * Outgoing webhooks (`/api/v1/webhooks`): the team's change-log events POSTed to a URL, signed the
 * Standard Webhooks way. Not to be confused with a site's incoming push webhook (webhooks.ts).
 */
const Uuid = T.String({ format: 'uuid' });
const nullable = <S extends Parameters<typeof T.Union>[0][number]>(s: S) => T.Union([s, T.Null()]);

export const CreateOutgoingWebhookBody = T.Object(
  {
    url: T.String({
      minLength: 1,
      maxLength: 2048,
      description: 'Where events are POSTed: https (http only on loopback); the egress policy applies.',
    }),
    events: T.Array(T.String({ minLength: 1, maxLength: 100 }), {
      minItems: 1,
      maxItems: 50,
      description: 'Event types (`site.installed`) or families (`site.*`) to send.',
    }),
    team: T.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const OutgoingWebhookSchema = T.Object({
  uuid: Uuid,
  team: Uuid,
  url: T.String(),
  events: T.Array(T.String(), { description: 'The event types sent (families expanded).' }),
  last_event: T.Integer({ description: 'The seq of the last event dealt with (delivered or given up).' }),
  next_attempt_at: nullable(T.String({ description: 'When the current event is retried, if its last attempt failed.' })),
  enabled: T.Boolean({
    description: 'False while paused: events wait (the cursor stays) and are delivered, in order, on resume.',
  }),
  previous_secret_expires_at: nullable(
    T.String({ description: 'After a rotation: until when the previous secret also signs each delivery.' }),
  ),
  created_at: T.String(),
});

/** PATCH /api/v1/webhooks/<uuid>: any of these; the same rules as at creation. */
export const UpdateOutgoingWebhookBody = T.Object(
  {
    url: T.Optional(CreateOutgoingWebhookBody.properties.url),
    events: T.Optional(CreateOutgoingWebhookBody.properties.events),
    enabled: T.Optional(
      T.Boolean({ description: 'false pauses deliveries (events wait, nothing is skipped); true resumes them.' }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** The longest grace period of a rotated secret: a week. */
export const MAX_SECRET_GRACE_SECONDS = 7 * 24 * 3600;

/** POST /api/v1/webhooks/<uuid>/rotate-secret. */
export const RotateOutgoingWebhookSecretBody = T.Object(
  {
    graceSeconds: T.Optional(
      T.Integer({
        minimum: 0,
        maximum: MAX_SECRET_GRACE_SECONDS,
        default: 86_400,
        description: 'How long the old secret keeps signing beside the new one (default a day; 0: at once only the new one).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CreatedOutgoingWebhookSchema = T.Intersect([
  OutgoingWebhookSchema,
  T.Object({
    secret: T.String({ description: 'The signing secret, `whsec_<base64>`: shown only in this answer.' }),
  }),
]);

export const OutgoingWebhookDeliverySchema = T.Object({
  uuid: Uuid,
  event_seq: T.Integer(),
  event_type: T.String(),
  attempt: T.Integer({ description: '1 for the first try of this event, then 2, 3, …' }),
  status_code: nullable(T.Integer({ description: "The receiver's HTTP status; null when no answer came." })),
  error: nullable(T.String()),
  duration_ms: T.Integer(),
  next_attempt_at: nullable(T.String({ description: 'When the event is tried again; null when delivered or given up.' })),
  delivered_at: nullable(T.String()),
  resend_of: nullable(
    T.String({ format: 'uuid', description: "The delivery this attempt resent by hand; null for the dispatcher's own." }),
  ),
  created_at: T.String(),
});

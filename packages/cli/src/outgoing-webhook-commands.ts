import type { Command } from 'commander';
import { client } from './config.js';
import { details, paint, print, statusText } from './output.js';
import { table } from './table.js';

type Json = Record<string, unknown>;

const when = (at: unknown) => (typeof at === 'string' ? at.replace('T', ' ').slice(0, 19) : null);

const endpointDetails = (w: Json) =>
  details([
    ['UUID', w.uuid],
    ['URL', w.url],
    ['Events', (w.events as string[]).join(', ')],
    // Shown only in the create's answer: say so, so nobody waits to see it again.
    ['Secret', w.secret ? `${w.secret} ${paint('yellow', '(shown once)')}` : null],
    ['Enabled', w.enabled === false ? paint('yellow', 'no (paused: events wait)') : 'yes'],
    ['Old secret signs until', when(w.previous_secret_expires_at)],
    ['Last event', w.last_event],
    ['Next attempt', when(w.next_attempt_at)],
  ]);

const endpointTable = (rows: Json[]) =>
  table(
    [
      { header: 'UUID', value: (w) => w.uuid },
      { header: 'URL', value: (w) => w.url },
      { header: 'EVENTS', value: (w) => (w.events as string[]).join(',') },
      { header: 'ENABLED', value: (w) => (w.enabled === false ? 'paused' : 'yes') },
      { header: 'LAST EVENT', value: (w) => w.last_event },
      { header: 'RETRY AT', value: (w) => when(w.next_attempt_at) },
    ],
    rows,
    'No webhooks yet.',
  );

const deliveryTable = (rows: Json[]) =>
  table(
    [
      { header: 'UUID', value: (d) => d.uuid },
      { header: 'AT', value: (d) => when(d.created_at) },
      { header: 'EVENT', value: (d) => `${d.event_seq} ${d.event_type}` },
      { header: 'ATTEMPT', value: (d) => d.attempt },
      { header: 'STATUS', value: (d) => (d.delivered_at ? statusText('succeeded') : statusText('failed')) },
      { header: 'CODE', value: (d) => d.status_code },
      { header: 'MS', value: (d) => d.duration_ms },
      { header: 'ERROR', value: (d) => d.error },
      { header: 'NEXT ATTEMPT', value: (d) => when(d.next_attempt_at) },
      { header: 'RESEND OF', value: (d) => d.resend_of },
    ],
    rows,
    'No deliveries yet.',
  );

/** Outgoing webhooks: the team's events POSTed to a URL (not a site's push webhook: `siteplane webhook`). */
export function outgoingWebhookCommands(program: Command): void {
  const hooks = program.command('webhooks').description("Outgoing webhooks: the team's events POSTed to a URL, signed");
  hooks
    .command('add <url>')
    .description('Send events to a URL; the signing secret is shown this once')
    .option(
      '--event <type>',
      'an event type or family such as site.* (repeatable; default: every event)',
      (v, all: string[]) => [...all, v],
      [],
    )
    .option('--team <uuid>', 'the team (default: the token’s default team)')
    .action(async (url: string, o: { event: string[]; team?: string }) => {
      const events = o.event.length > 0 ? o.event : ['site.*', 'operation.*', 'deployment.*', 'certificate.*'];
      print(await client().createOutgoingWebhook({ url, events, ...(o.team ? { team: o.team } : {}) }), endpointDetails);
    });
  hooks.command('list').action(async () => print(await client().listOutgoingWebhooks(), endpointTable));
  hooks.command('get <uuid>').action(async (uuid: string) => print(await client().getOutgoingWebhook(uuid), endpointDetails));
  hooks
    .command('remove <uuid>')
    .description('Stop sending; the delivery log goes too')
    .action(async (uuid: string) => print(await client().deleteOutgoingWebhook(uuid)));
  hooks
    .command('deliveries <uuid>')
    .description('Every delivery attempt: status code, error, duration, next attempt')
    .action(async (uuid: string) => print(await client().listOutgoingWebhookDeliveries(uuid), deliveryTable));
  hooks
    .command('pause <uuid>')
    .description('Stop sending for now: events wait (none is skipped) and go out in order on resume')
    .action(async (uuid: string) => print(await client().updateOutgoingWebhook(uuid, { enabled: false }), endpointDetails));
  hooks
    .command('resume <uuid>')
    .description('Send again, starting with the events recorded while paused')
    .action(async (uuid: string) => print(await client().updateOutgoingWebhook(uuid, { enabled: true }), endpointDetails));
  hooks
    .command('update <uuid>')
    .description('Change the URL or the events (the same rules as add)')
    .option('--url <url>', 'the new URL')
    .option(
      '--event <type>',
      'the new event types or families (repeatable; replaces the list)',
      (v, all: string[]) => [...all, v],
      [],
    )
    .action(async (uuid: string, o: { url?: string; event: string[] }) =>
      print(
        await client().updateOutgoingWebhook(uuid, {
          ...(o.url ? { url: o.url } : {}),
          ...(o.event.length ? { events: o.event } : {}),
        }),
        endpointDetails,
      ),
    );
  hooks
    .command('rotate-secret <uuid>')
    .description('A new signing secret, shown this once; the old one also signs during the grace period')
    .option('--grace <seconds>', 'how long the old secret keeps signing (default 86400; 0: not at all)', (v) => Number(v))
    .action(async (uuid: string, o: { grace?: number }) =>
      print(await client().rotateOutgoingWebhookSecret(uuid, o.grace), endpointDetails),
    );
  hooks
    .command('resend <uuid> <delivery>')
    .description("Send a delivery's event again now, once (its uuid from `webhooks deliveries`)")
    .action(async (uuid: string, delivery: string) =>
      print(await client().resendOutgoingWebhookDelivery(uuid, delivery), (d: Json) => deliveryTable([d])),
    );
}

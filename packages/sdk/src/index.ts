import type { Problem } from '@siteplane/contract';
import { type ApiCall, type CallOptions, type Schemas, SiteplaneApi } from './generated/api.js';
import { type OperationEvent, parseEventStream } from './operation-events.js';

export type { ApiCall, CallOptions, OperationId, Schemas } from './generated/api.js';
export { OPERATION_IDS, SiteplaneApi } from './generated/api.js';
export type { components, operations, paths } from './generated/schema.js';
export type { OperationEvent } from './operation-events.js';

/** A failed call: the service's problem+json, kept whole. */
export class SiteplaneError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem | null,
  ) {
    super(
      problem
        ? `${problem.status} ${problem.code}: ${problem.detail}${problem.errors?.length ? ` (${problem.errors.map((e) => `${e.field}: ${e.message}`).join('; ')})` : ''}`
        : `HTTP ${status}`,
    );
    this.name = 'SiteplaneError';
  }
}

export interface ListPage<T> {
  data: T[];
  meta: { next_cursor: string | null; limit: number };
}

type Body<K extends keyof SiteplaneApi> = SiteplaneApi[K] extends (...args: infer A) => unknown
  ? Exclude<A[number], string | CallOptions | undefined>
  : never;

/**
 * The Siteplane API for programs and the CLI. `api` holds one typed method per operation,
 * generated from openapi.json (`npm run sdk:generate`); the methods beside it are conveniences
 * over those (every page of a list, an operation's live events).
 */
export class SiteplaneClient {
  readonly api: SiteplaneApi;

  constructor(private readonly options: { baseUrl: string; token: string; fetch?: typeof fetch }) {
    this.api = new SiteplaneApi((call) => this.send(call));
  }

  private async send(call: ApiCall): Promise<unknown> {
    const url = new URL(call.path, this.options.baseUrl);
    for (const [name, value] of Object.entries(call.query ?? {}))
      if (value !== undefined) url.searchParams.set(name, String(value));
    const { idempotencyKey, headers = {}, signal } = call.options ?? {};
    const res = await (this.options.fetch ?? fetch)(url, {
      method: call.method,
      headers: {
        authorization: `Bearer ${this.options.token}`,
        ...(call.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(call.answer === 'stream' ? { accept: 'text/event-stream' } : {}),
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
        ...headers,
      },
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      signal,
    });
    if (!res.ok) throw await failure(res);
    if (call.answer === 'stream') return res;
    const text = await res.text();
    return text ? JSON.parse(text) : undefined;
  }

  /** Follows next_cursor until the list is whole. */
  async all<T>(page: (cursor: string | undefined) => Promise<ListPage<T>>): Promise<T[]> {
    const out: T[] = [];
    let cursor: string | undefined;
    do {
      const p = await page(cursor);
      out.push(...p.data);
      cursor = p.meta.next_cursor ?? undefined;
    } while (cursor);
    return out;
  }

  listSites = (server: string) => this.all((cursor) => this.api.listSites({ server, cursor }));
  getSite = (uuid: string) => this.api.getSite(uuid);
  createSite = (body: Body<'createSite'>, idempotencyKey?: string) => this.api.createSite(body, { idempotencyKey });
  deleteSite = (uuid: string, deleteDatabase = false) =>
    this.api.deleteSite(uuid, deleteDatabase ? { deleteDatabase: true } : undefined);
  /** Runs a `failed` site's create, or a `delete_failed` site's delete, again (202; the open retry while one runs). */
  retrySite = (uuid: string) => this.api.retrySite(uuid);
  retrySsl = (uuid: string) => this.api.retrySiteSsl(uuid);
  getOperation = (uuid: string, after = 0) => this.api.getOperation(uuid, { after });

  /**
   * Follows an operation live (server-sent events `step`, `log`, `status`, `end`); `after` is the
   * last event id seen (sent as Last-Event-ID), so a reconnect misses no line and repeats none.
   */
  async *operationEvents(uuid: string, after = 0, signal?: AbortSignal): AsyncGenerator<OperationEvent> {
    const res = await this.api.streamOperationEvents(uuid, undefined, { headers: { 'last-event-id': String(after) }, signal });
    if (!res.body) throw new SiteplaneError(res.status, null);
    yield* parseEventStream(res.body);
  }

  /**
   * Follows the team's change log (GET /api/v1/events): events such as `site.installed` with data
   * `{seq, type, subject, created_at, data}`. `after` is the last event id seen; `types` keeps only
   * those types (`site.*` for a family). When the connection drops it connects again with the last
   * id seen (Last-Event-ID), so no event is missed or repeated; a refusal (4xx) is thrown. Runs
   * until `signal` aborts or the caller stops iterating.
   */
  async *teamEvents(
    options: { after?: number; types?: string[]; signal?: AbortSignal; reconnectMs?: number } = {},
  ): AsyncGenerator<OperationEvent> {
    let last = options.after ?? 0;
    const url = new URL('/api/v1/events', this.options.baseUrl);
    if (options.types?.length) url.searchParams.set('types', options.types.join(','));
    while (!options.signal?.aborted) {
      let res: Response;
      try {
        res = await (this.options.fetch ?? fetch)(url, {
          headers: { authorization: `Bearer ${this.options.token}`, accept: 'text/event-stream', 'last-event-id': String(last) },
          signal: options.signal,
        });
      } catch {
        if (options.signal?.aborted) return;
        await pause(options.reconnectMs ?? 2_000);
        continue;
      }
      if (!res.ok || !res.body) {
        const error = await failure(res);
        // Refused for good (bad token, bad filter); a server restarting or overloaded is tried again.
        if (res.status < 500 && res.status !== 429) throw error;
        await pause(options.reconnectMs ?? 2_000);
        continue;
      }
      try {
        for await (const e of parseEventStream(res.body)) {
          if (e.id !== null) last = e.id;
          yield e;
        }
      } catch {
        if (options.signal?.aborted) return;
      }
      await pause(options.reconnectMs ?? 2_000);
    }
  }

  listServers = () => this.all((cursor) => this.api.listServers({ cursor }));
  createServer = (body: Body<'createServer'>) => this.api.createServer(body);
  verifyServer = (uuid: string) => this.api.verifyServer(uuid);
  deleteServer = (uuid: string) => this.api.deleteServer(uuid);
  listServerUsers = (server: string) => this.all((cursor) => this.api.listServerUsers(server, { cursor }));
  createServerUser = (server: string, username: string) => this.api.createServerUser(server, { username });

  listDnsProfiles = () => this.all((cursor) => this.api.listDnsProfiles({ cursor }));
  createDnsProfile = (body: Body<'createDnsProfile'>) => this.api.createDnsProfile(body);
  verifyDnsProfile = (uuid: string) => this.api.verifyDnsProfile(uuid);
  deleteDnsProfile = (uuid: string) => this.api.deleteDnsProfile(uuid);

  listVcProfiles = () => this.all((cursor) => this.api.listVcProfiles({ cursor }));
  getVcProfile = (uuid: string) => this.api.getVcProfile(uuid);
  createVcProfile = (body: Body<'createVcProfile'>) => this.api.createVcProfile(body);
  deleteVcProfile = (uuid: string) => this.api.deleteVcProfile(uuid);
  listRepositories = (profile: string) => this.all((cursor) => this.api.listRepositories(profile, { cursor }));
  getRepository = (profile: string, name: string) => this.api.getRepository(profile, name);

  // Deployments: a site's source, settings and environment; deployments and rollbacks.
  getSiteSource = (site: string) => this.api.getSiteSource(site);
  /** `{vcProfile, repository, branch, appFolder?}`; the answer's deploy_public_key, when set, goes to the repository. */
  setSiteSource = (site: string, body: Body<'setSiteSource'>) => this.api.setSiteSource(site, body);
  unbindSiteSource = (site: string) => this.api.unbindSiteSource(site);
  getDeploySettings = (site: string) => this.api.getDeploySettings(site);
  updateDeploySettings = (site: string, body: Body<'updateDeploySettings'>) => this.api.updateDeploySettings(site, body);
  getEnvironment = (site: string) => this.api.getEnvironment(site);
  /** Per key: `{set: {KEY: {value, scope}}, unset: [KEY]}`. */
  updateEnvironment = (site: string, body: Body<'updateEnvironment'>) => this.api.updateEnvironment(site, body);
  deploy = (site: string, body: Body<'createDeployment'> = {}, idempotencyKey?: string) =>
    this.api.createDeployment(site, body, { idempotencyKey });
  listDeployments = (site: string) => this.all((cursor) => this.api.listDeployments(site, { cursor }));
  getDeployment = (uuid: string) => this.api.getDeployment(uuid);
  cancelDeployment = (uuid: string) => this.api.cancelDeployment(uuid);
  rollback = (site: string, release?: string) => this.api.rollbackSite(site, release === undefined ? {} : { release });
  /** Deploys an archive CI built (`.tar.gz`; its root becomes the release), without building on the server. */
  async deployArtifact(site: string, archive: Blob | Uint8Array, idempotencyKey?: string): Promise<Schemas['Deployment']> {
    const res = await (this.options.fetch ?? fetch)(
      new URL(`/api/v1/sites/${encodeURIComponent(site)}/deployments`, this.options.baseUrl),
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.options.token}`,
          'content-type': 'application/gzip',
          ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
        },
        body: archive as BodyInit,
        // A Blob streams from the file; Node needs this to send a stream as a request body.
        ...({ duplex: 'half' } as object),
      },
    );
    if (!res.ok) throw await failure(res);
    return (await res.json()) as Schemas['Deployment'];
  }
  listDeployKeyRemovals = (site: string) => this.api.listDeployKeyRemovals(site).then((page) => page.data);

  // Push to deploy: the site's webhook (its secret and trigger URL are shown only in the answer that generated them).
  getSiteWebhook = (site: string) => this.api.getSiteWebhook(site);
  /** Creates it, or `{rotate: ['secret'|'trigger_url'], branches, register: {vcProfile, repository}}`. */
  configureSiteWebhook = (site: string, body: Body<'setSiteWebhook'> = {}) => this.api.setSiteWebhook(site, body);
  deleteSiteWebhook = (site: string) => this.api.deleteSiteWebhook(site);
  listWebhookDeliveries = (site: string) => this.all((cursor) => this.api.listSiteWebhookDeliveries(site, { cursor }));
  /** Deletions of the site's hook at its provider (webhook turned off, registered elsewhere), oldest first. */
  listWebhookRemovals = (site: string) => this.all((cursor) => this.api.listSiteWebhookRemovals(site, { cursor }));

  // Outgoing webhooks: the team's events POSTed to a URL (the `whsec_…` secret is only in the create's answer).
  /** `{url, events: ['site.*', …], team?}` → the endpoint with its signing secret, shown this once. */
  createOutgoingWebhook = (body: Body<'createOutgoingWebhook'>, idempotencyKey?: string) =>
    this.api.createOutgoingWebhook(body, { idempotencyKey });
  listOutgoingWebhooks = () => this.all((cursor) => this.api.listOutgoingWebhooks({ cursor }));
  getOutgoingWebhook = (uuid: string) => this.api.getOutgoingWebhook(uuid);
  deleteOutgoingWebhook = (uuid: string) => this.api.deleteOutgoingWebhook(uuid);
  /** Every delivery attempt of the endpoint, oldest first. */
  listOutgoingWebhookDeliveries = (uuid: string) =>
    this.all((cursor) => this.api.listOutgoingWebhookDeliveries(uuid, { cursor }));
  /** `{url?, events?, enabled?}`: `enabled: false` pauses (events wait, none skipped), `true` resumes. */
  updateOutgoingWebhook = (uuid: string, body: Body<'updateOutgoingWebhook'>) => this.api.updateOutgoingWebhook(uuid, body);
  /** A new secret, shown this once; the old one also signs for `graceSeconds` (default a day). */
  rotateOutgoingWebhookSecret = (uuid: string, graceSeconds?: number) =>
    this.api.rotateOutgoingWebhookSecret(uuid, graceSeconds === undefined ? undefined : { graceSeconds });
  /** Sends a delivery's event again now, once; answers the new attempt. */
  resendOutgoingWebhookDelivery = (uuid: string, delivery: string) => this.api.resendOutgoingWebhookDelivery(uuid, delivery);
}

/** A refused answer as the error the SDK throws, with the service's problem+json when it sent one. */
async function failure(res: Response): Promise<SiteplaneError> {
  let problem: Problem | null = null;
  try {
    problem = JSON.parse(await res.text()) as Problem;
  } catch {}
  return new SiteplaneError(res.status, problem);
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The Site record as the API answers it. */
export type Site = Schemas['Site'];

import type { Problem } from '@siteplane/contract';
import { type OperationEvent, parseEventStream } from './operation-events.js';

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

type Json = Record<string, unknown>;

/** Typed client of the Siteplane API; the CLI uses nothing else to talk to the service. */
export class SiteplaneClient {
  constructor(private readonly options: { baseUrl: string; token: string; fetch?: typeof fetch }) {}

  async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    return this.send<T>(method, path, body === undefined ? undefined : JSON.stringify(body), {
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    });
  }

  /** A request with a body as given (JSON text, or bytes such as a deploy artifact) and its own headers. */
  private async send<T>(
    method: string,
    path: string,
    body: string | Blob | Uint8Array | undefined,
    headers: Record<string, string>,
  ): Promise<T> {
    const res = await (this.options.fetch ?? fetch)(new URL(path, this.options.baseUrl), {
      method,
      headers: { authorization: `Bearer ${this.options.token}`, ...headers },
      body: body as BodyInit | undefined,
    });
    const text = await res.text();
    if (!res.ok) {
      let problem: Problem | null = null;
      try {
        problem = JSON.parse(text) as Problem;
      } catch {}
      throw new SiteplaneError(res.status, problem);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Follows next_cursor until the list is whole. */
  async all<T>(path: string): Promise<T[]> {
    const out: T[] = [];
    let cursor: string | null = null;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const page: ListPage<T> = await this.request('GET', cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path);
      out.push(...page.data);
      cursor = page.meta.next_cursor;
    } while (cursor);
    return out;
  }

  listSites = (server: string) => this.all<Json>(`/api/v1/sites?server=${encodeURIComponent(server)}`);
  getSite = (uuid: string) => this.request<Json>('GET', `/api/v1/sites/${encodeURIComponent(uuid)}`);
  createSite = (body: Json, idempotencyKey?: string) =>
    this.request<Json>('POST', '/api/v1/sites', body, idempotencyKey ? { 'idempotency-key': idempotencyKey } : {});
  deleteSite = (uuid: string, deleteDatabase = false) =>
    this.request<Json>(
      'DELETE',
      `/api/v1/sites/${encodeURIComponent(uuid)}`,
      deleteDatabase ? { deleteDatabase: true } : undefined,
    );
  /** Runs a `failed` site's create, or a `delete_failed` site's delete, again (202; the open retry while one runs). */
  retrySite = (uuid: string) => this.request<Json>('POST', `/api/v1/sites/${encodeURIComponent(uuid)}/retry`);
  retrySsl = (uuid: string) => this.request<Json>('POST', `/api/v1/sites/${encodeURIComponent(uuid)}/ssl`);
  getOperation = (uuid: string, after = 0) =>
    this.request<Json>('GET', `/api/v1/operations/${encodeURIComponent(uuid)}?after=${after}`);

  /**
   * Follows an operation live (server-sent events `step`, `log`, `status`, `end`); `after` is the
   * last event id seen (sent as Last-Event-ID), so a reconnect misses no line and repeats none.
   */
  async *operationEvents(uuid: string, after = 0, signal?: AbortSignal): AsyncGenerator<OperationEvent> {
    const res = await (this.options.fetch ?? fetch)(
      new URL(`/api/v1/operations/${encodeURIComponent(uuid)}/events`, this.options.baseUrl),
      {
        headers: { authorization: `Bearer ${this.options.token}`, accept: 'text/event-stream', 'last-event-id': String(after) },
        signal,
      },
    );
    if (!res.ok || !res.body) {
      let problem: Problem | null = null;
      try {
        problem = JSON.parse(await res.text()) as Problem;
      } catch {}
      throw new SiteplaneError(res.status, problem);
    }
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
        let problem: Problem | null = null;
        try {
          problem = JSON.parse(await res.text()) as Problem;
        } catch {}
        // Refused for good (bad token, bad filter); a server restarting or overloaded is tried again.
        if (res.status < 500 && res.status !== 429) throw new SiteplaneError(res.status, problem);
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

  listServers = () => this.all<Json>('/api/v1/servers');
  createServer = (body: Json) => this.request<Json>('POST', '/api/v1/servers', body);
  verifyServer = (uuid: string) => this.request<Json>('POST', `/api/v1/servers/${encodeURIComponent(uuid)}/verify`);
  deleteServer = (uuid: string) => this.request<void>('DELETE', `/api/v1/servers/${encodeURIComponent(uuid)}`);
  listServerUsers = (server: string) => this.all<Json>(`/api/v1/servers/${encodeURIComponent(server)}/users`);
  createServerUser = (server: string, username: string) =>
    this.request<Json>('POST', `/api/v1/servers/${encodeURIComponent(server)}/users`, { username });

  listDnsProfiles = () => this.all<Json>('/api/v1/dns-profiles');
  createDnsProfile = (body: Json) => this.request<Json>('POST', '/api/v1/dns-profiles', body);
  verifyDnsProfile = (uuid: string) => this.request<Json>('POST', `/api/v1/dns-profiles/${encodeURIComponent(uuid)}/verify`);
  deleteDnsProfile = (uuid: string) => this.request<void>('DELETE', `/api/v1/dns-profiles/${encodeURIComponent(uuid)}`);

  listVcProfiles = () => this.all<Json>('/api/v1/vc-profiles');
  getVcProfile = (uuid: string) => this.request<Json>('GET', `/api/v1/vc-profiles/${encodeURIComponent(uuid)}`);
  createVcProfile = (body: Json) => this.request<Json>('POST', '/api/v1/vc-profiles', body);
  deleteVcProfile = (uuid: string) => this.request<void>('DELETE', `/api/v1/vc-profiles/${encodeURIComponent(uuid)}`);
  listRepositories = (profile: string) => this.all<Json>(`/api/v1/vc-profiles/${encodeURIComponent(profile)}/repos`);
  getRepository = (profile: string, name: string) =>
    this.request<Json>('GET', `/api/v1/vc-profiles/${encodeURIComponent(profile)}/repos/${encodeURIComponent(name)}`);

  // Deployments: a site's source, settings and environment; deployments and rollbacks.
  private site = (uuid: string, tail: string) => `/api/v1/sites/${encodeURIComponent(uuid)}/${tail}`;
  getSiteSource = (site: string) => this.request<Json>('GET', this.site(site, 'source'));
  /**
   * `{vcProfile, repository, branch, appFolder?, access?}`; `access: "deploy_key"` registers a key at a
   * hosted provider. When the answer's deploy_key_registration is not `registered` (or null, for a
   * plain git ssh remote), deploy_public_key goes to the repository by hand.
   */
  setSiteSource = (site: string, body: Json) => this.request<Json>('PUT', this.site(site, 'source'), body);
  unbindSiteSource = (site: string) => this.request<void>('DELETE', this.site(site, 'source'));
  /** Every removal of a registered deploy key at its provider (unbind, re-bind), with its outcome. */
  listDeployKeyRemovals = (site: string) => this.all<Json>(this.site(site, 'source/deploy-key-removals'));
  getDeploySettings = (site: string) => this.request<Json>('GET', this.site(site, 'deploy-settings'));
  updateDeploySettings = (site: string, body: Json) => this.request<Json>('PATCH', this.site(site, 'deploy-settings'), body);
  getEnvironment = (site: string) => this.request<Json>('GET', this.site(site, 'environment'));
  /** Per key: `{set: {KEY: {value, scope}}, unset: [KEY]}`. */
  updateEnvironment = (site: string, body: Json) => this.request<Json>('PATCH', this.site(site, 'environment'), body);
  deploy = (site: string, body: Json = {}, idempotencyKey?: string) =>
    this.request<Json>('POST', this.site(site, 'deployments'), body, idempotencyKey ? { 'idempotency-key': idempotencyKey } : {});
  /**
   * Deploys a .tar.gz built elsewhere (CI) without building on the server: its root becomes the
   * release. A Blob (`fs.openAsBlob('dist.tar.gz')` in Node) is streamed, not read into memory.
   */
  deployArtifact = (site: string, archive: Blob | Uint8Array, idempotencyKey?: string) =>
    this.send<Json>('POST', this.site(site, 'deployments'), archive, {
      'content-type': 'application/gzip',
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    });
  listDeployments = (site: string) => this.all<Json>(this.site(site, 'deployments'));
  getDeployment = (uuid: string) => this.request<Json>('GET', `/api/v1/deployments/${encodeURIComponent(uuid)}`);
  cancelDeployment = (uuid: string) => this.request<Json>('POST', `/api/v1/deployments/${encodeURIComponent(uuid)}/cancel`);
  rollback = (site: string, release?: string) =>
    this.request<Json>('POST', this.site(site, 'rollback'), release === undefined ? {} : { release });

  // Push to deploy: the site's webhook (its secret and trigger URL are shown only when generated).
  getSiteWebhook = (site: string) => this.request<Json>('GET', this.site(site, 'webhook'));
  /** Creates it, or `{rotate: ['secret'|'trigger_url'], branches, register: {vcProfile, repository}}`. */
  configureSiteWebhook = (site: string, body: Json = {}) => this.request<Json>('POST', this.site(site, 'webhook'), body);
  deleteSiteWebhook = (site: string) => this.request<void>('DELETE', this.site(site, 'webhook'));
  listWebhookDeliveries = (site: string) => this.all<Json>(this.site(site, 'webhook/deliveries'));
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

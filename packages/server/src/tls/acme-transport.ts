/**
 * acme-client talks to the CA through one axios instance shared by the whole process
 * (`acme.axios`). This module scopes per-issuance settings to it with AsyncLocalStorage, so two
 * issuances against different CAs, or with different extra CA bundles, never see each other's:
 *
 * - an https agent that trusts the system roots plus ACME_CA_CERTS (Pebble's own HTTPS in tests);
 * - a record of the last network error and ACME problem document: acme-client reduces problems to
 *   their `detail` text and turns network errors into a bare TypeError, neither of which can be
 *   classified or shown to a user;
 * - bounded retries: acme-client retries network errors, 5xx and 429 five times with growing
 *   sleeps and honours Retry-After, which for a Let's Encrypt rate limit means hours inside one
 *   job. A 429 is reported at once instead, so the job queue can come back when the CA says.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import { rootCertificates } from 'node:tls';
import { type AcmeModule, loadAcme } from './acme-module.js';

export interface AcmeProblem {
  type: string;
  detail: string;
  status: number;
  retryAfterSeconds?: number;
}

export interface NetworkFailure {
  code: string;
  message: string;
}

/** What the CA (or the network) last said during one step; reset before each step. */
export interface AcmeCallRecord {
  problem?: AcmeProblem;
  network?: NetworkFailure;
}

export interface AcmeTransportOptions {
  /** PEM bundle trusted in addition to the system roots. */
  caCertsPem?: string;
  /** acme-client's own debug lines (URLs, statuses; no keys). */
  trace?: (line: string) => void;
  /**
   * Retries of a request after a network error or 5xx (acme-client's default is 5). acme-client
   * waits 5 s × its attempt number, and the cap works by starting that count higher, so each
   * allowed retry waits 20-25 s.
   */
  retries?: number;
  /** Time limit per request (connection, TLS, answer); default 30 s. */
  timeoutMs?: number;
}

interface Context {
  agent: https.Agent;
  record: AcmeCallRecord;
  retries: number;
  trace?: (line: string) => void;
}

const storage = new AsyncLocalStorage<Context>();
let installed = false;

const ACME_ERROR_PREFIX = 'urn:ietf:params:acme:error:';

/** The https agent of one issuance: remembers why its sockets failed, since axios won't tell. */
class RecordingAgent extends https.Agent {
  constructor(
    options: https.AgentOptions,
    private readonly record: AcmeCallRecord,
    private readonly timeoutMs: number,
  ) {
    super(options);
  }

  override createConnection(
    options: https.RequestOptions,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const socket = super.createConnection(options, callback);
    socket?.on('error', (error: NodeJS.ErrnoException) => {
      this.record.network = { code: error.code ?? 'ERR_NETWORK', message: error.message };
    });
    // A CA that accepts the connection and then says nothing would otherwise hang the job forever.
    // A plain timer, because axios resets socket timeouts (`req.setTimeout(0)`); the agent does not
    // keep connections alive, so one connection carries one request and this limits the request.
    if (socket) {
      const timer = setTimeout(() => {
        socket.destroy(Object.assign(new Error(`no answer within ${this.timeoutMs} ms`), { code: 'ETIMEDOUT' }));
      }, this.timeoutMs);
      socket.once('close', () => clearTimeout(timer));
    }
    return socket;
  }
}

function retryAfterSeconds(value: unknown): number | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.round((date - Date.now()) / 1000));
}

/** An ACME problem in a response body: an error document, or an object (challenge) carrying one. */
function problemIn(data: unknown, status: number, retryAfter: number | undefined): AcmeProblem | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const body = data as { type?: unknown; detail?: unknown; error?: { type?: unknown; detail?: unknown } };
  const doc = typeof body.type === 'string' && body.type.startsWith(ACME_ERROR_PREFIX) ? body : body.error;
  if (!doc || typeof doc.type !== 'string') return undefined;
  const problem: AcmeProblem = { type: doc.type, detail: typeof doc.detail === 'string' ? doc.detail : '', status };
  if (retryAfter !== undefined) problem.retryAfterSeconds = retryAfter;
  return problem;
}

function install(acme: AcmeModule): void {
  if (installed) return;
  installed = true;
  const settings = (acme.axios.defaults as unknown as { acmeSettings: { retryMaxAttempts: number } }).acmeSettings;

  acme.axios.interceptors.request.use((config) => {
    const context = storage.getStore();
    if (!context) return config;
    // An agent set on purpose (acme-client's own challenge self-checks) is left alone.
    config.httpsAgent ??= context.agent;
    // acme-client counts attempts in `retryAttempt`; starting the count higher caps the retries.
    if (!('retryAttempt' in config)) {
      Object.assign(config, { retryAttempt: Math.max(0, settings.retryMaxAttempts - context.retries) });
    }
    const existing = config.transformResponse ?? [];
    config.transformResponse = [
      ...(Array.isArray(existing) ? existing : [existing]),
      // Runs on every response (acme-client treats every status as an error first), with the
      // request's config as `this`.
      function record(this: object, data: unknown, headers: Record<string, unknown>, status?: number): unknown {
        const code = status ?? 0;
        const problem = problemIn(data, code, retryAfterSeconds(headers['retry-after']));
        // A later answer supersedes what earlier (retried) requests of the step saw.
        delete context.record.network;
        if (problem) context.record.problem = problem;
        else if (code < 400) delete context.record.problem;
        if (code === 429) Object.assign(this, { retryAttempt: Number.MAX_SAFE_INTEGER });
        return data;
      },
    ];
    return config;
  });

  // acme-client has one global logger; route its lines to whichever issuance is running.
  acme.setLogger((line) => storage.getStore()?.trace?.(line));
}

export interface AcmeTransport {
  readonly record: AcmeCallRecord;
  /** Forgets what the previous step saw, so a failure is classified by its own step only. */
  reset(): void;
}

/** Runs `fn` with every acme-client request in it going through this issuance's settings. */
export async function withAcmeTransport<T>(
  options: AcmeTransportOptions,
  fn: (transport: AcmeTransport) => Promise<T>,
): Promise<T> {
  install(await loadAcme());
  const record: AcmeCallRecord = {};
  const ca = options.caCertsPem ? [...rootCertificates, options.caCertsPem] : undefined;
  const agent = new RecordingAgent(ca ? { ca } : {}, record, options.timeoutMs ?? 30_000);
  const context: Context = { agent, record, retries: options.retries ?? 1 };
  if (options.trace) context.trace = options.trace;
  const transport: AcmeTransport = {
    record,
    reset() {
      delete record.problem;
      delete record.network;
    },
  };
  try {
    return await storage.run(context, () => fn(transport));
  } finally {
    agent.destroy();
  }
}

/** Helpers of the TLS operation tests: a server that runs nothing but is not dry-run, and waits. */
import { createServer } from 'node:net';
import type { Executor } from '../../src/provisioning/executor.js';
import type { TestService } from '../support/test-service.js';

/**
 * An executor of kind `local` that runs nothing and answers success: the certificate operation
 * goes past its dry-run shortcut and reaches the CA and DNS checks, which are what these tests
 * are about. Every command is recorded.
 */
export function recordingExecutor(commands: string[] = []): Executor {
  return {
    kind: 'local',
    run: async (argv) => {
      commands.push(argv.join(' '));
      return { code: 0, stdout: '', stderr: '' };
    },
    close: async () => {},
  };
}

/** What the helpers need of a running service: the test service, or a system suite's own. */
export type ApiHost = Pick<TestService, 'app' | 'token' | 'storage'>;

export const authOf = (s: ApiHost, token = s.token) => ({ authorization: `Bearer ${token}` });

export async function createSite(s: ApiHost, payload: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await s.app.inject({ method: 'POST', url: '/api/v1/sites', headers: authOf(s), payload });
  if (res.statusCode !== 202) throw new Error(`create: ${res.statusCode} ${res.body}`);
  return res.json() as Record<string, unknown>;
}

/** A site record as the tests read it (loosely: only the fields a test names are checked). */
// biome-ignore lint/suspicious/noExplicitAny: a JSON body, checked by the tests' expectations
export type Json = Record<string, any>;

export async function getSite(s: ApiHost, uuid: string): Promise<Json> {
  const res = await s.app.inject({ method: 'GET', url: `/api/v1/sites/${uuid}`, headers: authOf(s) });
  return res.json() as Json;
}

/** GET /api/v1/operations/<uuid>, as the tests read it. */
export interface OperationView {
  uuid: string;
  kind: string;
  status: string;
  params?: unknown;
  error: { step: string | null; message: string } | null;
  steps: { name: string; status: string }[];
  logs: { seq: number; line: string }[];
}

/** Polls an operation until it finished; returns it with its steps and logs. */
export async function waitForOperationUuid(s: ApiHost, uuid: string, timeoutMs = 15_000): Promise<OperationView> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await s.app.inject({ method: 'GET', url: `/api/v1/operations/${uuid}`, headers: authOf(s) });
    const op = res.json() as OperationView;
    if (op.status === 'succeeded' || op.status === 'failed') return op;
    if (Date.now() > until) throw new Error(`operation ${uuid} stayed ${String(op.status)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Polls until the site's latest operation is of `kind` and finished; returns the operation. */
export async function waitForOperation(s: ApiHost, siteUuid: string, kind: string, timeoutMs = 15_000): Promise<OperationView> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const site = await getSite(s, siteUuid);
    const op = site.operation as { uuid: string; kind: string; status: string } | null;
    if (op?.kind === kind && (op.status === 'succeeded' || op.status === 'failed')) {
      const res = await s.app.inject({ method: 'GET', url: `/api/v1/operations/${op.uuid}`, headers: authOf(s) });
      return res.json() as OperationView;
    }
    if (Date.now() > until) throw new Error(`no finished ${kind} operation for ${siteUuid}: ${JSON.stringify(site.operation)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const logText = (op: Pick<OperationView, 'logs'>): string => op.logs.map((l) => l.line).join('\n');

/** An https URL on 127.0.0.1 where nothing listens: an ACME directory the CA part can never reach. */
export async function closedDirectoryUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `https://127.0.0.1:${address.port}/dir`;
}

/**
 * Waits until no job is queued or running. Before the test moves its clock: a job still running
 * when time jumps would look like one whose lease ran out, and be claimed a second time.
 */
export async function settle(s: ApiHost, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const open = await s.storage.db.selectFrom('jobs').select('uuid').where('status', 'in', ['queued', 'running']).execute();
    if (open.length === 0) return;
    if (Date.now() > until) throw new Error(`${open.length} job(s) still open`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A controllable clock: real time plus an offset the test moves (after settle()). */
export function movableClock() {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    set: (at: Date) => {
      offset = at.getTime() - Date.now();
    },
  };
}

/**
 * The service as an operator runs it for these tests: real recipes on a `local` server (this
 * machine: nginx on 80/443), Pebble as both CAs (14000 as Let's Encrypt, 14001 with EAB as
 * ZeroSSL), the mock DNS as DNS_RESOLVERS, DNS provider stand-ins as the providers' APIs. It can
 * be restarted on the same data (an operator changing the configuration), and runs on a clock the
 * test may move.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { buildService, type Service } from '../../../../src/app/build-service.js';
import { loadConfig } from '../../../../src/app/config.js';
import { defaultRecipes } from '../../../../src/app/recipes.js';
import { createToken } from '../../../../src/storage/tokens.js';
import { LOOPBACK_TARGETS } from '../../../support/test-service.js';
import { type Json, movableClock } from '../../../tls/support.js';
import { DIRECTORY_URL, EAB_DIRECTORY_URL, eabCredentials, MOCK_DNS, PEBBLE_STATE_DIR } from '../../tls/pebble.js';

export function pebbleEnv(): Record<string, string> {
  const eab = eabCredentials();
  return {
    ACME_DIRECTORY_LETSENCRYPT: DIRECTORY_URL,
    ACME_DIRECTORY_ZEROSSL: EAB_DIRECTORY_URL,
    ZEROSSL_EAB_KID: eab.kid,
    ZEROSSL_EAB_HMAC_KEY: eab.hmacKey,
    ACME_CA_CERTS: join(PEBBLE_STATE_DIR, 'ca.pem'),
    DNS_RESOLVERS: MOCK_DNS,
  };
}

export interface TlsSuite {
  service: Service;
  /** ApiHost shape (test/tls/support.ts helpers). */
  app: Service['app'];
  storage: Service['storage'];
  token: string;
  clock: ReturnType<typeof movableClock>;
  api(method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown): Promise<{ status: number; body: Json }>;
  /** Stops the service and starts it again on the same data with `env` added. */
  restart(env: Record<string, string>): Promise<void>;
  dispose(): Promise<void>;
}

export async function startSuite(env: Record<string, string>): Promise<TlsSuite> {
  const dataDir = mkdtempSync(join(tmpdir(), 'siteplane-tls-sites-'));
  const secretKey = randomBytes(32).toString('base64');
  const clock = movableClock();
  const build = (extra: Record<string, string>) =>
    buildService(
      loadConfig({
        SITEPLANE_DATA_DIR: dataDir,
        SITEPLANE_SECRET_KEY: secretKey,
        LOG_LEVEL: 'silent',
        // Operations are polled far more often than a client would; no per-token limit here.
        SITEPLANE_RATE_LIMIT: '0',
        SITEPLANE_RATE_LIMIT_ADDRESS: '0',
        // This machine as the server, reached as 127.0.0.1 (its owned-zone A records point there):
        // a single-tenant test install, so the operator settings that allow it are on.
        SITEPLANE_LOCAL_SERVER: 'on',
        SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS,
        ...env,
        ...extra,
      }),
      {
        logger: pino({ level: 'silent' }),
        clock,
        recipes: defaultRecipes,
        pollMs: 50,
        // Pebble answers at once: poll it and the mock DNS more often than a real CA needs.
        tls: { pollIntervalMs: 250, txtIntervalMs: 200, txtVisibleWithinMs: 20_000 },
      },
    );
  const first = await build({});
  const token = (await createToken(first.storage.db, { name: 'tls-sites', scope: 'write' })).token;
  const suite: TlsSuite = {
    service: first,
    app: first.app,
    storage: first.storage,
    token,
    clock,
    async api(method, url, payload) {
      const res = await suite.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${token}` },
        ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
      });
      return { status: res.statusCode, body: (res.body ? res.json() : {}) as Json };
    },
    async restart(extra) {
      await suite.service.close();
      suite.service = await build(extra);
      suite.app = suite.service.app;
      suite.storage = suite.service.storage;
    },
    async dispose() {
      await suite.service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return suite;
}

/** A `local` server (this machine), verified, with the system user the sites belong to. */
export async function localServer(suite: TlsSuite, username: string): Promise<{ server: string; serverUser: string }> {
  const server = await suite.api('POST', '/api/v1/servers', { name: 'this machine', ip: '127.0.0.1', connection: 'local' });
  if (server.status !== 201) throw new Error(`server: ${JSON.stringify(server.body)}`);
  const verify = await suite.api('POST', `/api/v1/servers/${server.body.uuid}/verify`);
  if (verify.status !== 200) throw new Error(`verify: ${JSON.stringify(verify.body)}`);
  const user = await suite.api('POST', `/api/v1/servers/${server.body.uuid}/users`, { username });
  if (user.status !== 201) throw new Error(`user: ${JSON.stringify(user.body)}`);
  return { server: server.body.uuid, serverUser: user.body.uuid };
}

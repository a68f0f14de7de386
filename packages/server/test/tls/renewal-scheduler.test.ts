// Issue 4 item 4: renewals queued 30 days before expiry, by a scheduler whose clock the test moves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenewalScheduler } from '../../src/jobs/renewal-scheduler.js';
import { CertificateStore } from '../../src/use-cases/ssl/certificate-store.js';
import { seedServer, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';
import { authOf, createSite, movableClock, settle, waitForOperation, waitForOperationUuid } from './support.js';

const DAY = 86_400_000;

describe(`renewal scheduler (${TEST_DB})`, () => {
  const clock = movableClock();
  let s: TestService;
  let store: CertificateStore;
  let ids: { server: string; serverUser: string };
  const start = new Date();
  const expiresAt = new Date(start.getTime() + 90 * DAY);

  beforeAll(async () => {
    s = await startTestService({ clock, renewalIntervalMs: 3_600_000 });
    store = new CertificateStore(s.storage.db, s.useCases.secrets);
    ids = await seedServer(s);
  });
  afterAll(async () => s?.stop());

  /** A site whose server has a certificate expiring at `expires` (as a finished ssl operation leaves it). */
  async function siteWithCertificate(domain: string, ssl = true) {
    const site = await createSite(s, {
      ...ids,
      type: 'static-html',
      domain,
      ssl,
      ...(ssl ? { sslProvider: 'letsencrypt', sslEmail: 'ops@example.com' } : {}),
      options: {},
    });
    const uuid = site.uuid as string;
    await waitForStatus(s, uuid, ['installed']);
    if (ssl) await waitForOperation(s, uuid, 'ssl');
    const plan = { scope: `site:${uuid}`, owner: 'team', ca: 'letsencrypt' as const, names: [domain] };
    const row = await store.row(
      { ...plan, challenge: 'http-01', dnsProfile: null, email: null, freeZone: null },
      'https://ca/dir',
      start,
    );
    const saved = await store.saveIssued(
      row,
      { fullChainPem: 'chain', privateKeyPem: 'key', serial: '01', notBefore: start, expiresAt, names: [domain] },
      'https://ca/dir',
      start,
    );
    await store.recordDeployment(uuid, saved, start);
    return { uuid, row };
  }

  const renewalsOf = async (uuid: string) =>
    (
      await s.storage.db
        .selectFrom('operations')
        .select(['params'])
        .where('site_uuid', '=', uuid)
        .where('kind', '=', 'ssl')
        .execute()
    )
      .map((o) => JSON.parse(o.params).reason as string)
      .filter((reason) => reason === 'renewal').length;

  it('queues nothing before 30 days ahead of expiry, then one ssl operation marked renewal, once', async () => {
    const { uuid } = await siteWithCertificate('renew.example.com');
    await settle(s);
    clock.set(start);
    expect(await s.renewals?.tick()).toEqual([]);
    await settle(s);
    clock.set(new Date(expiresAt.getTime() - 30 * DAY - 1000));
    expect(await s.renewals?.tick()).toEqual([]);

    await settle(s);
    clock.set(new Date(expiresAt.getTime() - 30 * DAY + 1000));
    expect(await s.renewals?.tick()).toEqual([uuid]);
    // While that operation is open, another tick (here, or in another worker process) adds none.
    expect(await s.renewals?.tick()).toEqual([]);
    await waitForOperation(s, uuid, 'ssl');
    expect(await renewalsOf(uuid)).toBe(1);
  });

  it('after a failed order waits for the backoff, unless a newer certificate is stored', async () => {
    const { uuid, row } = await siteWithCertificate('backoff.example.com');
    const now = new Date(expiresAt.getTime() - 20 * DAY);
    await settle(s);
    clock.set(now);
    await store.recordFailure(row, 'CA down', new Date(now.getTime() + 6 * 3_600_000), now);
    expect(await s.renewals?.tick()).not.toContain(uuid);

    await settle(s);

    clock.set(new Date(now.getTime() + 6 * 3_600_000 + 1000));
    expect(await s.renewals?.tick()).toContain(uuid);
    await waitForOperation(s, uuid, 'ssl');

    // Another job renewed the certificate this site uses: deploy it now, backoff or not.
    await store.recordFailure(row, 'CA down again', new Date(clock.now().getTime() + 6 * 3_600_000), clock.now());
    await store.saveIssued(
      await store.reload(row),
      {
        fullChainPem: 'chain2',
        privateKeyPem: 'key2',
        serial: '02',
        notBefore: now,
        expiresAt: new Date(now.getTime() + 90 * DAY),
        names: ['backoff.example.com'],
      },
      'https://ca/dir',
      clock.now(),
    );
    await store.recordFailure(
      await store.reload(row),
      'still down',
      new Date(clock.now().getTime() + 6 * 3_600_000),
      clock.now(),
    );
    expect(await s.renewals?.tick()).toContain(uuid);
    await waitForOperation(s, uuid, 'ssl');
  });

  it('skips sites without TLS and forgets a deleted site’s certificate', async () => {
    const plain = await siteWithCertificate('plain-due.example.com', false);
    const gone = await siteWithCertificate('gone.example.com');
    await settle(s);
    clock.set(new Date(expiresAt.getTime() - DAY));
    const del = await s.app.inject({ method: 'DELETE', url: `/api/v1/sites/${gone.uuid}`, headers: authOf(s) });
    const op = await waitForOperationUuid(s, del.json().operation.uuid);
    expect(op.steps.map((x: { name: string }) => x.name)).toContain('forget certificate');
    const queued = await s.renewals?.tick();
    expect(queued).not.toContain(plain.uuid);
    expect(queued).not.toContain(gone.uuid);
    expect(await store.deployment(gone.uuid)).toBeUndefined();
    expect(await s.storage.db.selectFrom('certificates').where('scope', '=', `site:${gone.uuid}`).selectAll().execute()).toEqual(
      [],
    );
  });

  it('ticks at start and then every interval, until stopped', async () => {
    const { uuid } = await siteWithCertificate('interval.example.com');
    await settle(s);
    clock.set(new Date(expiresAt.getTime() + 365 * DAY));
    await waitForOperation(s, uuid, 'ssl');
    const seen: string[][] = [];
    const scheduler = new RenewalScheduler(
      { db: s.storage.db, clock, log: { info: () => {}, error: () => {} }, enqueued: (servers) => seen.push(servers) },
      50,
    );
    scheduler.start();
    const until = Date.now() + 5_000;
    while (seen.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    await scheduler.stop();
    expect(seen[0]).toEqual([ids.server]);
  });
});

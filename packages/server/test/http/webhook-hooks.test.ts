// Issue 11 item 6: push webhooks of GitHub, GitLab, Bitbucket Cloud and Gitea/Forgejo, each sent
// as its provider documents it and verified over the raw body; redeliveries, branch filter, ping,
// deleted branches; wrong signatures answered like unknown sites and recorded.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { WebhookDeliveries } from '../../src/storage/webhook-deliveries.js';
import { startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';
import { fixture, HOOK_CASES } from '../webhooks/hook-cases.js';
import { RecordingTrigger } from '../webhooks/recording-trigger.js';
import {
  configure,
  createSite,
  deliveries,
  type Json,
  lastDelivery,
  sendHook,
  withoutRequestId,
} from '../webhooks/webhook-api.js';

describe(`push webhooks (${TEST_DB}; issue 11 item 6)`, () => {
  let s: TestService;
  const trigger = new RecordingTrigger();
  let source: string | null = null;

  beforeAll(async () => {
    s = await startTestService({ deploymentTrigger: trigger, sourceBranchOf: async () => source });
  });
  afterAll(async () => s?.stop());
  beforeEach(() => {
    trigger.reset();
    source = null;
  });

  describe.each(HOOK_CASES)('$provider', (c) => {
    let site: string;
    let secret: string;
    let url: string;
    const body = JSON.stringify(c.payload, null, 2);

    beforeAll(async () => {
      site = await createSite(s, `${c.provider}.hooks.example.com`);
      const res = await configure(s, site, { branches: [] });
      expect(res.statusCode).toBe(201);
      secret = res.json().secret;
      url = res.json().urls[c.provider];
      expect(url).toBe(`http://localhost:80/api/v1/hooks/${c.provider}/${site}`);
    });
    const path = () => new URL(url).pathname;

    it('a push signed with the site’s secret starts one deployment with its branch, commit, message and author', async () => {
      const id = randomUUID();
      const res = await sendHook(s, path(), body, c.headers(body, secret, id));
      expect(res.statusCode).toBe(202);
      const answer = res.json();
      expect(answer).toMatchObject({ outcome: 'accepted', reason: null, duplicate: false, deployment: expect.any(String) });
      expect(trigger.pushes).toEqual([{ site, ...c.expected, provider: c.provider, deliveryId: id }]);
      expect(await lastDelivery(s, site)).toMatchObject({
        uuid: answer.delivery,
        provider: c.provider,
        delivery_id: id,
        outcome: 'accepted',
        reason: null,
        branch: c.expected.branch,
        commit: c.expected.commit,
        deployment: answer.deployment,
      });
    });

    it('a redelivery (same delivery id) answers 200 duplicate and does not deploy again', async () => {
      const id = randomUUID();
      expect((await sendHook(s, path(), body, c.headers(body, secret, id))).statusCode).toBe(202);
      const again = await sendHook(s, path(), body, c.headers(body, secret, id));
      expect(again.statusCode).toBe(200);
      expect(again.json()).toMatchObject({ duplicate: true, outcome: 'ignored', reason: 'duplicate', deployment: null });
      expect(trigger.pushes).toHaveLength(1);
      expect(await lastDelivery(s, site)).toMatchObject({ outcome: 'ignored', reason: 'duplicate', delivery_id: id });
    });

    it('a wrong secret, a missing header, a changed body: 404 like an unknown site, recorded, nothing deployed', async () => {
      const unknown = await sendHook(
        s,
        `/api/v1/hooks/${c.provider}/${randomUUID()}`,
        body,
        c.headers(body, secret, randomUUID()),
      );
      expect(unknown.statusCode).toBe(404);

      const wrong = await sendHook(s, path(), body, c.headers(body, 'f'.repeat(64), randomUUID()));
      expect(withoutRequestId(wrong)).toEqual(withoutRequestId(unknown));
      expect(await lastDelivery(s, site)).toMatchObject({ outcome: 'rejected', reason: 'bad_signature' });

      const { [c.signatureHeader]: _dropped, ...unsigned } = c.headers(body, secret, randomUUID());
      const missing = await sendHook(s, path(), body, unsigned);
      expect(withoutRequestId(missing)).toEqual(withoutRequestId(unknown));
      expect(await lastDelivery(s, site)).toMatchObject({ outcome: 'rejected', reason: 'missing_signature' });

      if (c.provider !== 'gitlab') {
        // Signed for the documented body, sent with another commit: the signature covers every byte.
        const tampered = body.replace(c.expected.commit, 'e'.repeat(40));
        const res = await sendHook(s, path(), tampered, c.headers(body, secret, randomUUID()));
        expect(withoutRequestId(res)).toEqual(withoutRequestId(unknown));
        expect(await lastDelivery(s, site)).toMatchObject({ outcome: 'rejected', reason: 'bad_signature' });
      }
      expect(trigger.pushes).toEqual([]);
    });

    it('a deleted branch and another event are answered 200 and recorded as ignored', async () => {
      const deleted = JSON.stringify(c.deleted());
      const res = await sendHook(s, path(), deleted, c.headers(deleted, secret, randomUUID()));
      expect({ status: res.statusCode, ...res.json() }).toMatchObject({
        status: 200,
        outcome: 'ignored',
        reason: 'branch_deleted',
      });
      const other = await sendHook(s, path(), body, c.headers(body, secret, randomUUID(), 'other'));
      expect({ status: other.statusCode, ...other.json() }).toMatchObject({
        status: 200,
        outcome: 'ignored',
        reason: 'not_push',
      });
      expect(trigger.pushes).toEqual([]);
    });

    it('the branch filter: listed branches and patterns deploy, others are ignored as branch_filtered', async () => {
      expect((await configure(s, site, { branches: ['production', 'release/*'], rotate: [] })).statusCode).toBe(200);
      try {
        const filtered = await sendHook(s, path(), body, c.headers(body, secret, randomUUID()));
        expect({ status: filtered.statusCode, ...filtered.json() }).toMatchObject({
          status: 200,
          outcome: 'ignored',
          reason: 'branch_filtered',
        });
        expect(await lastDelivery(s, site)).toMatchObject({ reason: 'branch_filtered', branch: c.expected.branch });
        const release = JSON.stringify(c.onBranch('release/2.0'));
        const passed = await sendHook(s, path(), release, c.headers(release, secret, randomUUID()));
        expect(passed.statusCode).toBe(202);
        expect(trigger.pushes.map((p) => p.branch)).toEqual(['release/2.0']);
      } finally {
        await configure(s, site, { branches: [], rotate: [] });
      }
    });
  });

  describe('one site', () => {
    const github = HOOK_CASES[0] as (typeof HOOK_CASES)[number];
    const body = JSON.stringify(github.payload);
    let site: string;
    let secret: string;
    const hook = () => `/api/v1/hooks/github/${site}`;

    beforeAll(async () => {
      site = await createSite(s, 'one.hooks.example.com');
      secret = (await configure(s, site)).json().secret;
    });

    it('GitHub’s ping answers 200 and deploys nothing', async () => {
      const ping = JSON.stringify(fixture('github-ping'));
      const headers = { ...github.headers(ping, secret, randomUUID()), 'x-github-event': 'ping' };
      const res = await sendHook(s, hook(), ping, headers);
      expect({ status: res.statusCode, ...res.json() }).toMatchObject({ status: 200, outcome: 'ignored', reason: 'ping' });
      expect(trigger.pushes).toEqual([]);
    });

    it('without branches the site’s source branch is the filter; no source, no deployment', async () => {
      const push = (branch: string) => {
        const payload = JSON.stringify(github.onBranch(branch));
        return sendHook(s, hook(), payload, github.headers(payload, secret, randomUUID()));
      };
      expect((await push('main')).json()).toMatchObject({ outcome: 'ignored', reason: 'branch_filtered' });
      expect((await lastDelivery(s, site)).detail).toContain('no source branch');
      source = 'main';
      expect((await push('feature')).json()).toMatchObject({ outcome: 'ignored', reason: 'branch_filtered' });
      expect((await push('main')).statusCode).toBe(202);
      expect(trigger.pushes.map((p) => p.branch)).toEqual(['main']);
    });

    it('the form-encoded payload GitHub and Gitea can be set to send is read too, signed over the form', async () => {
      source = 'main';
      const form = new URLSearchParams({ payload: body }).toString();
      const headers = { ...github.headers(form, secret, randomUUID()), 'content-type': 'application/x-www-form-urlencoded' };
      expect((await sendHook(s, hook(), form, headers)).statusCode).toBe(202);
      expect(trigger.pushes).toHaveLength(1);
    });

    it('an authentic body that is not JSON is a 400, recorded as malformed_payload', async () => {
      const res = await sendHook(s, hook(), '{"ref":', github.headers('{"ref":', secret, randomUUID()));
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('malformed_json');
      expect(await lastDelivery(s, site)).toMatchObject({ outcome: 'rejected', reason: 'malformed_payload' });
    });

    it('a deployment that cannot start: its error, recorded as deploy_failed, and the redelivery may deploy', async () => {
      source = 'main';
      const id = randomUUID();
      trigger.failWith = new DomainError('conflict', 'The site is being deleted.');
      const refused = await sendHook(s, hook(), body, github.headers(body, secret, id));
      expect({ status: refused.statusCode, code: refused.json().code }).toEqual({ status: 409, code: 'conflict' });
      expect(await lastDelivery(s, site)).toMatchObject({
        outcome: 'rejected',
        reason: 'deploy_failed',
        detail: 'The site is being deleted.',
      });
      trigger.failWith = null;
      expect((await sendHook(s, hook(), body, github.headers(body, secret, id))).statusCode).toBe(202);
      expect(trigger.pushes).toHaveLength(2);
    });

    it('rotating the secret: the old one is refused at once, the new one deploys', async () => {
      source = 'main';
      const rotated = await configure(s, site, { rotate: ['secret'] });
      expect(rotated.statusCode).toBe(200);
      const fresh = rotated.json().secret as string;
      expect(fresh).not.toBe(secret);
      expect(rotated.json().trigger_url).toBeNull();
      const old = await sendHook(s, hook(), body, github.headers(body, secret, randomUUID()));
      expect(old.statusCode).toBe(404);
      expect(await lastDelivery(s, site)).toMatchObject({ reason: 'bad_signature' });
      expect((await sendHook(s, hook(), body, github.headers(body, fresh, randomUUID()))).statusCode).toBe(202);
      secret = fresh;
    });

    it('a body over 5 MiB is a 413 before anything is checked', async () => {
      const big = `{"ref":"refs/heads/main","padding":"${'x'.repeat(5 * 1024 * 1024)}"}`;
      const before = (await deliveries(s, site)).length;
      const res = await sendHook(s, hook(), big, github.headers(big, secret, randomUUID()));
      expect({ status: res.statusCode, code: res.json().code }).toEqual({ status: 413, code: 'body_too_large' });
      expect((await deliveries(s, site)).length).toBe(before);
      expect(trigger.pushes).toEqual([]);
    });

    it('an unknown provider name and a malformed site id answer like an unknown site', async () => {
      const unknown = await sendHook(s, `/api/v1/hooks/github/${randomUUID()}`, body, github.headers(body, secret, randomUUID()));
      for (const path of [`/api/v1/hooks/gogs/${site}`, '/api/v1/hooks/github/not-a-uuid']) {
        const res = await sendHook(s, path, body, github.headers(body, secret, randomUUID()));
        expect(withoutRequestId(res)).toEqual(withoutRequestId(unknown));
      }
    });

    it('keeps the last 100 deliveries of the site', async () => {
      const ping = JSON.stringify(fixture('github-ping'));
      for (let i = 0; i < 105; i++) {
        await sendHook(s, hook(), ping, { ...github.headers(ping, secret, `ping-${i}`), 'x-github-event': 'ping' });
      }
      const list = await deliveries(s, site);
      expect(list).toHaveLength(100);
      expect(list.at(-1)).toMatchObject({ delivery_id: 'ping-104', reason: 'ping' });
      expect(list.map((d) => d.delivery_id)).not.toContain('ping-4');
    });

    it('after DELETE the hook answers like an unknown site and nothing is recorded', async () => {
      const other = await createSite(s, 'gone.hooks.example.com');
      const otherSecret = (await configure(s, other, { branches: [] })).json().secret;
      const del = await s.app.inject({
        method: 'DELETE',
        url: `/api/v1/sites/${other}/webhook`,
        headers: { authorization: `Bearer ${s.token}` },
      });
      expect(del.statusCode).toBe(204);
      const res = await sendHook(s, `/api/v1/hooks/github/${other}`, body, github.headers(body, otherSecret, randomUUID()));
      expect(res.statusCode).toBe(404);
      expect(await deliveries(s, other)).toEqual([]);
      expect(trigger.pushes).toEqual([]);
    });
  });

  it('two copies of one delivery arriving together deploy once', async () => {
    const site = await createSite(s, 'race.hooks.example.com');
    const secret = (await configure(s, site, { branches: [] })).json().secret as string;
    const c = HOOK_CASES[1] as (typeof HOOK_CASES)[number];
    const body = JSON.stringify(c.payload);
    const id = randomUUID();
    const answers = await Promise.all(
      [1, 2, 3].map(() => sendHook(s, `/api/v1/hooks/gitlab/${site}`, body, c.headers(body, secret, id))),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 200, 202]);
    expect(trigger.pushes).toHaveLength(1);
    const list: Json[] = await deliveries(s, site);
    expect(list.filter((d) => d.reason === 'duplicate')).toHaveLength(2);
  });
});

describe(`delivery ids are remembered for a day (${TEST_DB})`, () => {
  let s: TestService;
  beforeAll(async () => {
    s = await startTestService();
  });
  afterAll(async () => s?.stop());

  it('a claim holds for 24 h, then the same id may deploy again; released claims are free at once', async () => {
    const deliveries = new WebhookDeliveries(s.storage.db);
    const site = randomUUID();
    const t0 = new Date('2026-11-26T10:00:00.000Z');
    const at = (hours: number) => new Date(t0.getTime() + hours * 3_600_000);
    expect(await deliveries.claim(site, 'github', 'd-1', t0)).toBe(true);
    expect(await deliveries.claim(site, 'github', 'd-1', at(23.9))).toBe(false);
    // Another provider's or site's id of the same text is another delivery.
    expect(await deliveries.claim(site, 'gitea', 'd-1', at(1))).toBe(true);
    expect(await deliveries.claim(randomUUID(), 'github', 'd-1', at(1))).toBe(true);
    expect(await deliveries.claim(site, 'github', 'd-1', at(24.1))).toBe(true);
    await deliveries.release(site, 'github', 'd-1');
    expect(await deliveries.claim(site, 'github', 'd-1', at(24.2))).toBe(true);
  });

  it('an authentic push that cannot start a deployment (the site has no source) answers why, and its redelivery is not refused as a duplicate', async () => {
    const site = await createSite(s, 'unbound.hooks.example.com');
    await waitForStatus(s, site, ['installed']);
    const secret = (await configure(s, site, { branches: [] })).json().secret as string;
    const github = HOOK_CASES[0] as (typeof HOOK_CASES)[number];
    const body = JSON.stringify(github.payload);
    const id = randomUUID();
    for (let i = 0; i < 2; i++) {
      const res = await sendHook(s, `/api/v1/hooks/github/${site}`, body, github.headers(body, secret, id));
      expect({ status: res.statusCode, code: res.json().code }).toEqual({ status: 422, code: 'source_missing' });
    }
    expect((await deliveries(s, site)).map((d) => d.reason)).toEqual(['deploy_failed', 'deploy_failed']);
  });
});

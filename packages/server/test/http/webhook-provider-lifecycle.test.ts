// Issue 11 item 6, the hook registered at the provider kept in step with the site's webhook: a
// rotated secret is given to the existing hook there (never a second hook, never a provider left
// signing with the old secret); turning the webhook off, registering it elsewhere and deleting the
// site delete it there, best effort and recorded. The real VC code against each provider's
// stand-in (its edit and delete endpoints as documented).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullName, makeFixture } from '../standins/vcs/fixture.js';
import type { EditableHookFixture } from '../standins/vcs/hook-edit-endpoints.js';
import { LOOPBACK_TARGETS, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';
import { HOOK_CASES } from '../webhooks/hook-cases.js';
import { RecordingTrigger } from '../webhooks/recording-trigger.js';
import { auth, configure, createSite, type Json, sendHook } from '../webhooks/webhook-api.js';
import { createProfile, HOSTED_CASES, type HostedStandin } from './vc-api.js';

describe.each(HOSTED_CASES)(`the hook at $provider kept in step (${TEST_DB})`, (c) => {
  let fixture: EditableHookFixture;
  let standin: HostedStandin;
  let s: TestService;
  let profile: string;
  let n = 0;
  const trigger = new RecordingTrigger();
  const hookCase = HOOK_CASES.find((h) => h.provider === c.provider);

  const repo = (i: number) => fullName(fixture.repos[i] ?? fixture.big);
  const hooksAt = (i: number) => (fixture.hooks ?? []).filter((h) => h.repository === repo(i));
  const get = (url: string) => s.app.inject({ method: 'GET', url, headers: auth(s.token) });
  const removals = async (site: string) => (await get(`/api/v1/sites/${site}/webhook/removals`)).json().data as Json[];
  /** A new site with its webhook registered at the provider for repository `i`. */
  const registered = async (i: number) => {
    const site = await createSite(s, `${c.provider}-${++n}.lifecycle.example.com`);
    const res = await configure(s, site, { branches: [], register: { vcProfile: profile, repository: repo(i) } });
    expect(res.statusCode).toBe(201);
    return { site, record: res.json() as Json };
  };
  /** A push as the provider signs it with `secret`: its status. */
  const push = async (record: Json, secret: string) => {
    if (!hookCase) throw new Error('no hook case');
    const body = JSON.stringify(hookCase.payload);
    const path = new URL(record.urls[c.provider]).pathname;
    return (await sendHook(s, path, body, hookCase.headers(body, secret, randomUUID()))).statusCode;
  };

  beforeAll(async () => {
    fixture = makeFixture({ nested: c.nested });
    standin = await c.start(fixture);
    s = await startTestService({ env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS }, deploymentTrigger: trigger });
    profile = (await createProfile(s, { provider: c.provider, name: 'main', token: fixture.token, baseUrl: standin.baseUrl }))
      .uuid;
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await standin?.server.close();
  });

  it('rotating with register updates the one hook there: exactly one, with the new secret; new pushes deploy, old are rejected', async () => {
    const { site, record } = await registered(1);
    const rotated = await configure(s, site, { rotate: ['secret'], register: { vcProfile: profile, repository: repo(1) } });
    expect(rotated.statusCode).toBe(200);
    const fresh = rotated.json().secret as string;
    expect(fresh).not.toBe(record.secret);
    expect(rotated.json().registered).toEqual(record.registered);
    expect(hooksAt(1)).toEqual([
      expect.objectContaining({ id: record.registered.hook_id, secret: fresh, url: record.urls[c.provider] }),
    ]);
    const before = trigger.pushes.length;
    expect(await push(record, record.secret)).toBe(404);
    expect(await push(record, fresh)).toBe(202);
    expect(trigger.pushes).toHaveLength(before + 1);
  });

  it('rotating without register gives the provider the new secret too', async () => {
    const { site, record } = await registered(2);
    const rotated = await configure(s, site, { rotate: ['secret'] });
    expect(rotated.statusCode).toBe(200);
    const fresh = rotated.json().secret as string;
    expect(hooksAt(2)).toEqual([expect.objectContaining({ id: record.registered.hook_id, secret: fresh })]);
    const edit = fixture.hookEdits?.at(-1);
    expect(edit).toMatchObject({ method: c.provider === 'github' || c.provider === 'gitea' ? 'PATCH' : 'PUT' });
    expect(JSON.stringify(edit?.body)).not.toContain(fixture.token);
    expect(await push(record, fresh)).toBe(202);
    expect(await push(record, record.secret)).toBe(404);
    // Rotating only the trigger URL leaves the provider alone.
    const edits = fixture.hookEdits?.length;
    expect((await configure(s, site, { rotate: ['trigger_url'] })).statusCode).toBe(200);
    expect(fixture.hookEdits?.length).toBe(edits);
  });

  it('a rotation the provider refuses (no right to manage hooks): 424, nothing changed, the old secret still deploys', async () => {
    const { site, record } = await registered(3);
    fixture.hookAdmin = false;
    try {
      const res = await configure(s, site, { rotate: ['secret'] });
      expect({ status: res.statusCode, code: res.json().code }).toEqual({ status: 424, code: 'provider_auth_failed' });
      expect(res.body).not.toContain(fixture.token);
    } finally {
      fixture.hookAdmin = true;
    }
    expect(hooksAt(3)).toEqual([expect.objectContaining({ secret: record.secret })]);
    expect(await push(record, record.secret)).toBe(202);
  });

  it('a hook deleted by hand at the provider: rotating clears `registered`; with register a new one is created', async () => {
    const { site, record } = await registered(4);
    fixture.hooks = (fixture.hooks ?? []).filter((h) => h.id !== record.registered.hook_id);
    const rotated = await configure(s, site, { rotate: ['secret'] });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().registered).toBeNull();
    const again = await configure(s, site, { rotate: ['secret'], register: { vcProfile: profile, repository: repo(4) } });
    expect(again.statusCode).toBe(200);
    expect(hooksAt(4)).toEqual([expect.objectContaining({ id: again.json().registered.hook_id, secret: again.json().secret })]);
  });

  it('registering for another repository deletes the earlier hook there (recorded as replaced)', async () => {
    const { site, record } = await registered(5);
    const moved = await configure(s, site, { rotate: [], register: { vcProfile: profile, repository: repo(6) } });
    expect(moved.statusCode).toBe(200);
    expect(hooksAt(5)).toEqual([]);
    expect(hooksAt(6)).toEqual([expect.objectContaining({ id: moved.json().registered.hook_id, secret: record.secret })]);
    expect((await removals(site)).map((r) => `${r.cause}:${r.outcome}:${r.provider_hook_id}`)).toEqual([
      `replaced:removed:${record.registered.hook_id}`,
    ]);
  });

  it('turning the webhook off deletes the hook at the provider, recorded and listed', async () => {
    const { site, record } = await registered(7);
    const del = await s.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site}/webhook`, headers: auth(s.token) });
    expect(del.statusCode).toBe(204);
    expect(hooksAt(7)).toEqual([]);
    expect(await removals(site)).toEqual([
      {
        uuid: expect.any(String),
        provider: c.provider,
        repository: repo(7),
        provider_hook_id: record.registered.hook_id,
        cause: 'disabled',
        outcome: 'removed',
        detail: null,
        created_at: expect.any(String),
      },
    ]);
    // Another tenant sees neither the site nor its removals.
    const theirs = await s.app.inject({
      method: 'GET',
      url: `/api/v1/sites/${site}/webhook/removals`,
      headers: auth(s.otherTenantToken),
    });
    expect(theirs.statusCode).toBe(404);
  });

  it('a hook already deleted by hand counts as removed (already_gone)', async () => {
    const { site, record } = await registered(8);
    fixture.hooks = (fixture.hooks ?? []).filter((h) => h.id !== record.registered.hook_id);
    const del = await s.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site}/webhook`, headers: auth(s.token) });
    expect(del.statusCode).toBe(204);
    expect((await removals(site)).map((r) => `${r.cause}:${r.outcome}`)).toEqual(['disabled:already_gone']);
  });

  it('a provider refusing the deletion: the webhook is still turned off, the failure recorded naming the hook to delete', async () => {
    const { site, record } = await registered(9);
    fixture.hookAdmin = false;
    try {
      const del = await s.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site}/webhook`, headers: auth(s.token) });
      expect(del.statusCode).toBe(204);
    } finally {
      fixture.hookAdmin = true;
    }
    expect((await get(`/api/v1/sites/${site}/webhook`)).json().enabled).toBe(false);
    expect(hooksAt(9)).toHaveLength(1);
    const [removal] = await removals(site);
    expect(removal).toMatchObject({ cause: 'disabled', outcome: 'failed' });
    expect(removal?.detail).toContain(`delete hook ${record.registered.hook_id} from ${repo(9)}`);
    expect(removal?.detail).not.toContain(fixture.token);
  });

  it('deleting the site deletes its hook at the provider, in the deletion’s steps', async () => {
    const { site } = await registered(10);
    expect(hooksAt(10)).toHaveLength(1);
    const deleting = await s.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site}`, headers: auth(s.token) });
    expect(deleting.statusCode).toBe(202);
    await waitForStatus(s, site, ['gone', 'deleted'], 30_000);
    expect(hooksAt(10)).toEqual([]);
    const rows = await s.storage.db.selectFrom('webhook_removals').selectAll().where('site_uuid', '=', site).execute();
    expect(rows.map((r) => `${r.cause}:${r.outcome}`)).toEqual(['site_deleted:removed']);
    const op = (await get(`/api/v1/operations/${deleting.json().operation.uuid}`)).json();
    const step = op.steps.find((x: Json) => x.name === 'remove push webhook at provider');
    expect(step?.status).toBe('succeeded');
    expect(op.logs.map((l: Json) => l.line).join('\n')).toContain(`push webhook removed at ${c.provider} ${repo(10)}`);
  });

  it('deleting the site when the provider refuses: the site is still deleted, the failure recorded', async () => {
    const { site } = await registered(11);
    fixture.hookAdmin = false;
    try {
      const deleting = await s.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site}`, headers: auth(s.token) });
      expect(deleting.statusCode).toBe(202);
      await waitForStatus(s, site, ['gone', 'deleted'], 30_000);
    } finally {
      fixture.hookAdmin = true;
    }
    expect(hooksAt(11)).toHaveLength(1);
    const rows = await s.storage.db.selectFrom('webhook_removals').selectAll().where('site_uuid', '=', site).execute();
    expect(rows.map((r) => `${r.cause}:${r.outcome}`)).toEqual(['site_deleted:failed']);
  });
});

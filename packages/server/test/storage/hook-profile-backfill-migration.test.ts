import { randomUUID } from 'node:crypto';
import type { Kysely, Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/storage/schema.js';
import { enqueueTeamJobs, type SeededTeam, seedTeam } from '../jobs/support/team-jobs.js';
import { type MigrationDatabase, migrationDatabase } from '../support/migration-database.js';
import { TEST_DB } from '../support/test-service.js';

const AT = '2026-03-01T00:00:00.000Z';

/**
 * Migration 017 on a database whose push hooks were registered at providers before 016 kept their
 * profile: a hook on the site's own source repository takes the source's profile (so rotating its
 * secret, turning the webhook off and deleting the site reach the provider again); any other keeps
 * none, and a hook that has one keeps it.
 */
describe(`migration 017 (profiles of hooks registered before 016) on ${TEST_DB}`, () => {
  let db: Kysely<Database>;
  let migrator: Migrator;
  let database: MigrationDatabase;
  beforeAll(async () => {
    database = await migrationDatabase('m017');
    ({ db, migrator } = database);
  });
  afterAll(() => database?.drop());

  const profile = async (t: SeededTeam, provider: string) => {
    const uuid = randomUUID();
    await db
      .insertInto('vc_profiles')
      .values({
        uuid,
        team_uuid: t.team,
        provider,
        name: `${provider}-${uuid}`,
        base_url: null,
        token_enc: 'sealed',
        repositories_enc: null,
        account_login: null,
        created_at: AT,
      })
      .execute();
    return uuid;
  };
  const source = (site: string, vcProfile: string, provider: string, repository: string) =>
    db
      .insertInto('site_sources')
      .values({
        site_uuid: site,
        vc_profile_uuid: vcProfile,
        provider,
        repository,
        branch: 'main',
        app_folder: null,
        clone_url_enc: 'sealed',
        auth: 'token',
        deploy_public_key: null,
        deploy_private_key_enc: null,
        deploy_key_provider_id: null,
        deploy_key_status: null,
        deploy_key_reason: null,
        created_at: AT,
        updated_at: AT,
      })
      .execute();
  const hook = (t: SeededTeam, site: string, registered: object | string | null, vcProfile: string | null = null) =>
    db
      .insertInto('site_webhooks')
      .values({
        site_uuid: site,
        team_uuid: t.team,
        secret_enc: 'sealed',
        trigger_hash: randomUUID(),
        branches: null,
        registered: typeof registered === 'string' || registered === null ? registered : JSON.stringify(registered),
        vc_profile_uuid: vcProfile,
        secret_rotated_at: AT,
        trigger_rotated_at: AT,
        created_at: AT,
        updated_at: AT,
      })
      .execute();
  const profileOf = async (site: string) =>
    (await db.selectFrom('site_webhooks').select('vc_profile_uuid').where('site_uuid', '=', site).executeTakeFirstOrThrow())
      .vc_profile_uuid;

  it("gives a hook on the site's source repository the source's profile, and no other hook any", async () => {
    expect((await migrator.migrateTo('016_webhook_provider_hooks')).error).toBeUndefined();
    const a = await seedTeam(db, 'team-a');
    const b = await seedTeam(db, 'team-b');
    const [onSource, otherRepository, noSource, kept, unregistered, broken, otherTeam] = await enqueueTeamJobs(db, a, {
      sites: 7,
      jobsPerSite: 0,
      at: () => AT,
    });
    const github = await profile(a, 'github');
    const gitlab = await profile(a, 'gitlab');
    const later = await profile(a, 'github');
    const theirs = await profile(b, 'github');

    await source(onSource!, github, 'github', 'acme/app');
    await hook(a, onSource!, { provider: 'github', repository: 'acme/app', hook_id: '11' });
    // Registered for another repository than the source's: which profile made it is unknown.
    await source(otherRepository!, gitlab, 'gitlab', 'acme/app');
    await hook(a, otherRepository!, { provider: 'github', repository: 'acme/app', hook_id: '12' });
    await hook(a, noSource!, { provider: 'github', repository: 'acme/app', hook_id: '13' });
    // Registered after 016: its profile is left as it is.
    await source(kept!, github, 'github', 'acme/kept');
    await hook(a, kept!, { provider: 'github', repository: 'acme/kept', hook_id: '14' }, later);
    await source(unregistered!, github, 'github', 'acme/none');
    await hook(a, unregistered!, null);
    await source(broken!, github, 'github', 'acme/broken');
    await hook(a, broken!, '{not json');
    // A source profile of another team (not something Siteplane writes) is never taken.
    await source(otherTeam!, theirs, 'github', 'acme/theirs');
    await hook(a, otherTeam!, { provider: 'github', repository: 'acme/theirs', hook_id: '15' });

    const after = await migrator.migrateToLatest();
    expect(after.error).toBeUndefined();
    expect(after.results?.map((r) => [r.migrationName, r.status])).toContainEqual(['017_backfill_hook_profiles', 'Success']);

    expect(await profileOf(onSource!)).toBe(github);
    expect(await profileOf(otherRepository!)).toBeNull();
    expect(await profileOf(noSource!)).toBeNull();
    expect(await profileOf(kept!)).toBe(later);
    expect(await profileOf(unregistered!)).toBeNull();
    expect(await profileOf(broken!)).toBeNull();
    expect(await profileOf(otherTeam!)).toBeNull();
    // The hooks themselves are unchanged.
    const registered = await db
      .selectFrom('site_webhooks')
      .select('registered')
      .where('site_uuid', '=', onSource!)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(registered.registered!)).toEqual({ provider: 'github', repository: 'acme/app', hook_id: '11' });
  });
});

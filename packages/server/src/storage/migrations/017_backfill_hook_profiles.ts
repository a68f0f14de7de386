import { type Kysely, sql } from 'kysely';

/**
 * Hooks registered at a provider before migration 016 did not keep the profile they were created
 * through, so rotating their secret asked the user to register again, and turning the webhook off
 * or deleting the site could not remove them there (webhook_removals said why). Each such hook is
 * given its site's source profile when that source names the same provider and repository as the
 * hook, in the same team: registering a hook took a profile the actor could use for that
 * repository, and the source's profile is the one that reads it. A hook whose repository is not the
 * site's source (or a site without a source) keeps no profile, as before: the user removes it by hand.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const rows = await sql<{
    site_uuid: string;
    registered: string;
    source_profile: string;
    provider: string;
    repository: string;
  }>`SELECT w.site_uuid, w.registered, s.vc_profile_uuid AS source_profile, s.provider, s.repository
     FROM site_webhooks w
     JOIN site_sources s ON s.site_uuid = w.site_uuid
     JOIN vc_profiles p ON p.uuid = s.vc_profile_uuid AND p.team_uuid = w.team_uuid
     WHERE w.vc_profile_uuid IS NULL AND w.registered IS NOT NULL`.execute(db);
  for (const row of rows.rows) {
    const hook = parse(row.registered);
    if (hook?.provider !== row.provider || hook.repository !== row.repository || !hook.hook_id) continue;
    await sql`UPDATE site_webhooks SET vc_profile_uuid = ${row.source_profile}
              WHERE site_uuid = ${row.site_uuid} AND vc_profile_uuid IS NULL`.execute(db);
  }
}

function parse(text: string): { provider?: unknown; repository?: unknown; hook_id?: unknown } | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : null;
  } catch {
    return null;
  }
}

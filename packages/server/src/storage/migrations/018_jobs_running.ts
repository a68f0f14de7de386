import { type Kysely, sql } from 'kysely';

/**
 * A team's running jobs, by lease (jobs/queue.ts: the claim's offer of a job whose lease ran out).
 * Without it, that read went through jobs_waiting and so read every unfinished job of the team, the
 * queued ones too, on each claim: PostgreSQL chose that plan while the table had no statistics yet
 * (2,000+ queued jobs of one team, 10 ms a claim), SQLite always. Partial: only running jobs, as
 * many as workers run.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX jobs_running ON jobs (team_uuid, lease_until) WHERE status = 'running'`.execute(db);
}

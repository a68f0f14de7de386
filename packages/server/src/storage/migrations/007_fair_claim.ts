import { type Kysely, sql } from 'kysely';

/**
 * Fair claiming between teams (jobs/queue.ts): each job carries its team, and `team_claims` holds,
 * per team, the number of the claim that last served it (a counter, not a time: several claims fall
 * in one millisecond). The claim serves the team with work that was served longest ago, so a team
 * that enqueued thousands of jobs takes turns with the others instead of going first by age.
 *
 * Jobs enqueued before this migration take their team from their operation (set from the site's
 * team at enqueue). The column is nullable only because SQLite cannot add a NOT NULL column without
 * a default; every row is filled here and every insert sets it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('team_uuid', 'text').execute();
  await sql`UPDATE jobs SET team_uuid = (SELECT o.team_uuid FROM operations o WHERE o.uuid = jobs.operation_uuid)`.execute(db);
  await db.schema
    .createTable('team_claims')
    .addColumn('team_uuid', 'text', (c) => c.primaryKey())
    .addColumn('last_served', 'integer', (c) => c.notNull())
    .execute();
  // The fair claim's reads (jobs/queue.ts nextJob): teams with unfinished jobs, and each team's
  // jobs in claim order. Partial, so finished jobs (most of the table, over time) are not in it.
  await sql`CREATE INDEX jobs_waiting ON jobs (team_uuid, run_at, created_at) WHERE status IN ('queued', 'running')`.execute(db);
  // The newest turn handed out (MAX(last_served)), read by every claim.
  await db.schema.createIndex('team_claims_served').on('team_claims').column('last_served').execute();
}

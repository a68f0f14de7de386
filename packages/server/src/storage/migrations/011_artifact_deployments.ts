import type { Kysely } from 'kysely';

/**
 * Artifact deployments (issue 11 item 6): a deployment's source kind (`git` or `artifact`) and, for
 * an uploaded .tar.gz, its SHA-256 and size. The archive itself is a file of the data directory
 * named by the deployment (storage/artifact-store.ts), removed once the deployment ends.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('deployments')
    .addColumn('source_kind', 'text', (c) => c.notNull().defaultTo('git'))
    .execute();
  await db.schema.alterTable('deployments').addColumn('artifact_sha256', 'text').execute();
  await db.schema.alterTable('deployments').addColumn('artifact_bytes', 'integer').execute();
}

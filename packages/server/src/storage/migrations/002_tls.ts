import type { Kysely } from 'kysely';

/**
 * TLS (issue 4): ACME accounts, issued certificates, and which certificate each site has deployed.
 * Keys and certificates are stored sealed by the SecretBox (`*_enc`), never in clear.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const text = 'text' as const;
  // One account per CA directory and owner (a team, or `siteplane` for the operator's own
  // temporary-domain zone). The account is found again at the CA by its key.
  await db.schema
    .createTable('acme_accounts')
    .addColumn('uuid', text, (c) => c.primaryKey())
    .addColumn('owner', text, (c) => c.notNull())
    .addColumn('directory_url', text, (c) => c.notNull())
    .addColumn('account_url', text)
    .addColumn('email', text)
    .addColumn('key_enc', text, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .addUniqueConstraint('acme_accounts_owner_directory', ['owner', 'directory_url'])
    .execute();
  // One row per certificate subject: `site:<uuid>` (a site's own) or `zone:<zone>` (the wildcard
  // shared by temporary domains). The row exists before the first issuance so the lock can be
  // taken on it; the material columns stay null until a certificate is issued.
  await db.schema
    .createTable('certificates')
    .addColumn('uuid', text, (c) => c.primaryKey())
    .addColumn('scope', text, (c) => c.notNull().unique())
    .addColumn('owner', text, (c) => c.notNull())
    .addColumn('directory_url', text, (c) => c.notNull())
    .addColumn('domains', text, (c) => c.notNull())
    .addColumn('material_enc', text)
    .addColumn('serial', text)
    .addColumn('not_before', text)
    .addColumn('expires_at', text)
    .addColumn('lock_until', text)
    .addColumn('locked_by', text)
    .addColumn('next_attempt_at', text)
    .addColumn('last_error', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  // What is on each site's server: the renewal scheduler reads renew_after from here.
  await db.schema
    .createTable('site_certificates')
    .addColumn('site_uuid', text, (c) => c.primaryKey().references('sites.uuid'))
    .addColumn('certificate_uuid', text, (c) => c.notNull().references('certificates.uuid'))
    .addColumn('serial', text, (c) => c.notNull())
    .addColumn('expires_at', text, (c) => c.notNull())
    .addColumn('renew_after', text, (c) => c.notNull())
    .addColumn('deployed_at', text, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('site_certificates_renew').on('site_certificates').column('renew_after').execute();
}

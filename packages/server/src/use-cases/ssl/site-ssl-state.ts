/**
 * The `ssl` object of a site record (sites.ssl, JSON): `status` pending → issuing → active |
 * failed, `expires_at` of the deployed certificate, and `error` with the reason of the last failure.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../storage/schema.js';

export type SslStatus = 'none' | 'pending' | 'issuing' | 'active' | 'failed';

export interface SslError {
  /** A TlsError kind (dns_not_pointing, rate_limited, zone_certificates_exhausted, …) or deploy_failed. */
  code: string;
  message: string;
  /** The operation whose log has the details. */
  operation: string;
  at: string;
  retry_after_seconds?: number;
  /** When Siteplane tries again by itself (an order held back by a limit, or rate-limited by the CA). */
  retry_at?: string;
}

export interface StoredSsl {
  enabled: boolean;
  provider: 'letsencrypt' | 'zerossl' | null;
  email: string | null;
  wildcard: boolean;
  include_www: boolean;
  dns_profile: { uuid: string; provider: string } | null;
  status: SslStatus;
  expires_at: string | null;
  error: SslError | null;
}

export function parseSsl(json: string): StoredSsl {
  return JSON.parse(json) as StoredSsl;
}

/** Read, change, write: only the site's own (one-at-a-time) jobs and the retry endpoint write it. */
export async function updateSiteSsl(
  db: Kysely<Database>,
  siteUuid: string,
  patch: Partial<Pick<StoredSsl, 'status' | 'expires_at' | 'error'>>,
  now: Date,
): Promise<StoredSsl> {
  const row = await db.selectFrom('sites').select('ssl').where('uuid', '=', siteUuid).executeTakeFirstOrThrow();
  const ssl = { ...parseSsl(row.ssl), ...patch };
  await db
    .updateTable('sites')
    .set({ ssl: JSON.stringify(ssl), updated_at: now.toISOString() })
    .where('uuid', '=', siteUuid)
    .execute();
  return ssl;
}

/**
 * Certificates at rest: the material (full chain and private key) sealed by the SecretBox, the
 * facts the scheduler and the site record need in clear (serial, expiry), a lease-style lock so
 * only one job orders a given certificate at a time, the backoff after a failed order, and the
 * moment an order held back by a limit is tried again (`deferred_until`).
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { SecretBox } from '../../crypto/secret-box.js';
import type { Database } from '../../storage/schema.js';
import type { CertificatePlan } from '../../tls/certificate-plan.js';
import { renewalDueAt } from '../../tls/renewal.js';

export type CertificateRow = Database['certificates'];

export interface CertificateMaterial {
  fullChainPem: string;
  privateKeyPem: string;
}

/** A certificate as issued and stored: what deployment and the site record need. */
export interface StoredCertificate extends CertificateMaterial {
  uuid: string;
  serial: string;
  notBefore: Date;
  expiresAt: Date;
  names: string[];
}

export class CertificateStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly secrets: SecretBox,
  ) {}

  /** The row of a plan's subject, created (without material) when it does not exist yet. */
  async row(plan: CertificatePlan, directoryUrl: string, now: Date): Promise<CertificateRow> {
    await this.db
      .insertInto('certificates')
      .values({
        uuid: randomUUID(),
        scope: plan.scope,
        owner: plan.owner,
        directory_url: directoryUrl,
        domains: JSON.stringify(plan.names),
        material_enc: null,
        serial: null,
        not_before: null,
        expires_at: null,
        lock_until: null,
        locked_by: null,
        next_attempt_at: null,
        last_error: null,
        deferred_until: null,
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
      })
      .onConflict((oc) => oc.column('scope').doNothing())
      .execute();
    return this.db.selectFrom('certificates').selectAll().where('scope', '=', plan.scope).executeTakeFirstOrThrow();
  }

  async reload(row: CertificateRow): Promise<CertificateRow> {
    return this.db.selectFrom('certificates').selectAll().where('uuid', '=', row.uuid).executeTakeFirstOrThrow();
  }

  /** The stored certificate of a row, or null before the first issuance. */
  stored(row: CertificateRow): StoredCertificate | null {
    if (!row.material_enc || !row.serial || !row.expires_at || !row.not_before) return null;
    const material = this.secrets.openJson<CertificateMaterial>(row.material_enc);
    return {
      ...material,
      uuid: row.uuid,
      serial: row.serial,
      notBefore: new Date(row.not_before),
      expiresAt: new Date(row.expires_at),
      names: JSON.parse(row.domains) as string[],
    };
  }

  /** Takes the lock when it is free or its holder's time ran out; false when another holds it. */
  async lock(row: CertificateRow, holder: string, now: Date, ttlMs: number): Promise<boolean> {
    const result = await this.db
      .updateTable('certificates')
      .set({ lock_until: new Date(now.getTime() + ttlMs).toISOString(), locked_by: holder })
      .where('uuid', '=', row.uuid)
      .where((eb) =>
        eb.or([eb('lock_until', 'is', null), eb('lock_until', '<', now.toISOString()), eb('locked_by', '=', holder)]),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async unlock(row: CertificateRow, holder: string): Promise<void> {
    await this.db
      .updateTable('certificates')
      .set({ lock_until: null, locked_by: null })
      .where('uuid', '=', row.uuid)
      .where('locked_by', '=', holder)
      .execute();
  }

  async saveIssued(
    row: CertificateRow,
    issued: CertificateMaterial & { serial: string; notBefore: Date; expiresAt: Date; names: string[] },
    directoryUrl: string,
    now: Date,
  ): Promise<StoredCertificate> {
    await this.db
      .updateTable('certificates')
      .set({
        directory_url: directoryUrl,
        domains: JSON.stringify(issued.names),
        material_enc: this.secrets.sealJson({ fullChainPem: issued.fullChainPem, privateKeyPem: issued.privateKeyPem }),
        serial: issued.serial,
        not_before: issued.notBefore.toISOString(),
        expires_at: issued.expiresAt.toISOString(),
        next_attempt_at: null,
        last_error: null,
        deferred_until: null,
        updated_at: now.toISOString(),
      })
      .where('uuid', '=', row.uuid)
      .execute();
    return { ...issued, uuid: row.uuid };
  }

  /** After a failed order: no automatic renewal attempt before `nextAttemptAt`. */
  async recordFailure(row: CertificateRow, message: string, nextAttemptAt: Date, now: Date): Promise<void> {
    await this.db
      .updateTable('certificates')
      .set({
        last_error: message,
        next_attempt_at: nextAttemptAt.toISOString(),
        deferred_until: null,
        updated_at: now.toISOString(),
      })
      .where('uuid', '=', row.uuid)
      .execute();
  }

  /**
   * An order held back by a limit (the zone's budget, the name's failures, the CA's rate limit):
   * the renewal scheduler queues the site's ssl operation again at `retryAt`, and not before.
   */
  async defer(row: CertificateRow, message: string, retryAt: Date, now: Date): Promise<void> {
    const at = retryAt.toISOString();
    await this.db
      .updateTable('certificates')
      .set({ last_error: message, next_attempt_at: at, deferred_until: at, updated_at: now.toISOString() })
      .where('uuid', '=', row.uuid)
      .execute();
  }

  /** What the site's server now has, and from when the scheduler renews it. */
  async recordDeployment(siteUuid: string, certificate: StoredCertificate, now: Date): Promise<void> {
    const values = {
      certificate_uuid: certificate.uuid,
      serial: certificate.serial,
      expires_at: certificate.expiresAt.toISOString(),
      renew_after: renewalDueAt(certificate.expiresAt).toISOString(),
      deployed_at: now.toISOString(),
    };
    await this.db
      .insertInto('site_certificates')
      .values({ site_uuid: siteUuid, ...values })
      .onConflict((oc) => oc.column('site_uuid').doUpdateSet(values))
      .execute();
  }

  async deployment(siteUuid: string): Promise<Database['site_certificates'] | undefined> {
    return this.db.selectFrom('site_certificates').selectAll().where('site_uuid', '=', siteUuid).executeTakeFirst();
  }

  /** A deleted site's rows: its deployment and its own certificate. */
  async forgetSite(siteUuid: string): Promise<void> {
    await this.db.deleteFrom('site_certificates').where('site_uuid', '=', siteUuid).execute();
    await this.db.deleteFrom('certificates').where('scope', '=', `site:${siteUuid}`).execute();
    await this.dropUnusedZoneCertificates();
  }

  /**
   * The zone wildcard temporary sites shared before they got certificates of their own: nothing
   * orders it any more, and its key goes once no site has it deployed (each site's next ssl run
   * replaces it on the server with the site's own certificate).
   */
  async dropUnusedZoneCertificates(): Promise<number> {
    const result = await this.db
      .deleteFrom('certificates')
      .where('scope', 'like', 'zone:%')
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('site_certificates as d')
              .select('d.site_uuid')
              .whereRef('d.certificate_uuid', '=', 'certificates.uuid'),
          ),
        ),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

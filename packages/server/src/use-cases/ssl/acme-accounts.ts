/**
 * ACME accounts, one per owner (team, or the operator for the temporary-domain zone) and CA
 * directory. Only the key is needed to use an account: the issuer finds the account by its key or
 * registers it (with EAB for ZeroSSL), so the key is stored first and the account URL recorded
 * once the CA has answered. Two jobs racing for a new team account end up with the same key.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { SecretBox } from '../../crypto/secret-box.js';
import type { Database } from '../../storage/schema.js';
import { generateAccountKey } from '../../tls/account.js';

export interface AccountKey {
  uuid: string;
  accountKeyPem: string;
  accountUrl: string | null;
}

export async function accountKey(
  db: Kysely<Database>,
  secrets: SecretBox,
  owner: string,
  directoryUrl: string,
  email: string | null,
  now: Date,
): Promise<AccountKey> {
  const find = () =>
    db
      .selectFrom('acme_accounts')
      .selectAll()
      .where('owner', '=', owner)
      .where('directory_url', '=', directoryUrl)
      .executeTakeFirst();
  let row = await find();
  if (!row) {
    await db
      .insertInto('acme_accounts')
      .values({
        uuid: randomUUID(),
        owner,
        directory_url: directoryUrl,
        account_url: null,
        email,
        key_enc: secrets.seal(await generateAccountKey()),
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
      })
      .onConflict((oc) => oc.columns(['owner', 'directory_url']).doNothing())
      .execute();
    row = await find();
  }
  if (!row) throw new Error(`ACME account of ${owner} at ${directoryUrl} could not be stored`);
  return { uuid: row.uuid, accountKeyPem: secrets.open(row.key_enc), accountUrl: row.account_url };
}

export async function recordAccountUrl(db: Kysely<Database>, account: AccountKey, accountUrl: string, now: Date): Promise<void> {
  if (account.accountUrl === accountUrl) return;
  await db
    .updateTable('acme_accounts')
    .set({ account_url: accountUrl, updated_at: now.toISOString() })
    .where('uuid', '=', account.uuid)
    .execute();
}

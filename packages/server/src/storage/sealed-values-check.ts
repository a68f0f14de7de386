import SQLite from 'better-sqlite3';
import { SecretBox } from '../crypto/secret-box.js';

/** Columns that hold values sealed with the secret key (schema.ts, every `*_enc`). */
const SEALED_COLUMNS: readonly (readonly [table: string, column: string])[] = [
  ['servers', 'private_key_enc'],
  ['dns_profiles', 'credentials_enc'],
  ['vc_profiles', 'token_enc'],
  ['vc_profiles', 'repositories_enc'],
  ['sites', 'secrets_enc'],
  ['acme_accounts', 'key_enc'],
  ['certificates', 'material_enc'],
  ['site_webhooks', 'secret_enc'],
  ['site_sources', 'clone_url_enc'],
  ['site_sources', 'deploy_private_key_enc'],
  ['site_environment', 'value_enc'],
  ['outgoing_webhooks', 'secret_enc'],
  ['outgoing_webhooks', 'previous_secret_enc'],
];

export interface SealedValuesCheck {
  /** `table.column` of each value tried, one per column that holds any. */
  checked: string[];
  /** Those the key did not open. */
  failed: string[];
  /** Set when the key itself is unusable (not 32 bytes). */
  problem?: string;
}

/**
 * Tries `key` on one sealed value of each kind in the SQLite database `file`: whether this key is
 * the one the database's secrets were sealed with. Nothing opened is kept or shown.
 */
export function checkSealedValues(file: string, key: Buffer): SealedValuesCheck {
  if (key.length !== 32) return { checked: [], failed: [], problem: 'the key is not 32 bytes, base64-encoded' };
  const box = new SecretBox(key);
  const db = new SQLite(file, { fileMustExist: true, readonly: true });
  const result: SealedValuesCheck = { checked: [], failed: [] };
  try {
    for (const [table, column] of SEALED_COLUMNS) {
      const columns = db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[];
      if (!columns.some((c) => c.name === column)) continue;
      const row = db.prepare(`SELECT "${column}" AS v FROM "${table}" WHERE "${column}" IS NOT NULL LIMIT 1`).get() as
        | { v: string }
        | undefined;
      if (!row) continue;
      result.checked.push(`${table}.${column}`);
      try {
        box.open(row.v);
      } catch {
        result.failed.push(`${table}.${column}`);
      }
    }
  } finally {
    db.close();
  }
  return result;
}

import { randomBytes, randomInt } from 'node:crypto';

const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';

function random(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** Generated database name, as the peers do: `<type>_db_<random>` (letters, digits and _ only). */
export const generatedDatabaseName = (type: string): string => `${type.replace(/-/g, '_')}_db_${random(ALNUM, 8)}`;
export const generatedDatabaseUser = (type: string): string => `${type.replace(/-/g, '_').slice(0, 12)}_u_${random(ALNUM, 8)}`;
/** 32 characters from 192 random bits; letters and digits only so no client quoting can trip on it. */
export const generatedPassword = (): string => randomBytes(24).toString('base64url').replace(/[-_]/g, 'x');

import { randomInt } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A random secret of letters and digits (≈5.95 bits each): safe in every file format and shell
 * without quoting, for WordPress salts, phpMyAdmin's blowfish secret, Directus keys.
 */
export function randomSecret(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

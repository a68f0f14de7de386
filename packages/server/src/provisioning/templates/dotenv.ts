/**
 * `.env` files as dotenv (used by Strapi) reads them. dotenv has no escape for a quote inside a
 * quoted value, so a value is wrapped in the first quote character it does not contain: single
 * quotes (literal), then backticks (literal), then double quotes (dotenv turns \n into newlines,
 * so a value with a backslash-n cannot use them). A value that fits none cannot be written.
 */
export function dotenvValue(value: string): string {
  if (/[\r\n\0]/.test(value)) throw new Error('a .env value cannot contain line breaks or NUL');
  if (!value.includes("'")) return `'${value}'`;
  if (!value.includes('`')) return `\`${value}\``;
  if (!value.includes('"') && !/\\[nr]/.test(value)) return `"${value}"`;
  throw new Error('the value contains every quote character dotenv knows and cannot be written to a .env file');
}

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Replaces or appends the given keys in an existing .env text, leaving other lines as they are. */
export function mergeDotenv(existing: string, values: Record<string, string>): string {
  for (const key of Object.keys(values)) if (!KEY.test(key)) throw new Error(`invalid .env key ${key}`);
  const pending = new Map(Object.entries(values));
  const lines = existing === '' ? [] : existing.replace(/\n$/, '').split('\n');
  const out = lines.map((line) => {
    const key = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line)?.[1];
    if (key === undefined || !pending.has(key)) return line;
    const value = pending.get(key) as string;
    pending.delete(key);
    return `${key}=${dotenvValue(value)}`;
  });
  for (const [key, value] of pending) out.push(`${key}=${dotenvValue(value)}`);
  return `${out.join('\n')}\n`;
}

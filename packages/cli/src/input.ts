import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { UsageError } from './errors.js';

/** All of standard input, without the trailing newline `echo` or a file adds. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/**
 * A secret: asked for without echo when standard input is a terminal (readline echoes into a
 * stream that drops it), otherwise read whole from the pipe or file.
 */
export async function readSecret(prompt: string): Promise<string> {
  if (!process.stdin.isTTY) return readStdin();
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  const rl = createInterface({ input: process.stdin, output: silent, terminal: true });
  process.stderr.write(prompt);
  try {
    return await new Promise<string>((resolve, reject) => {
      rl.once('line', resolve);
      rl.once('close', () => reject(new Error('No token given')));
    });
  } finally {
    rl.close();
    process.stderr.write('\n');
  }
}

/** A JSON object typed on the command line, or read from a file (`-`: standard input). */
export async function jsonObject(text: string | undefined, file?: string): Promise<Record<string, unknown>> {
  const source = file === undefined ? text : file === '-' ? await readStdin() : readFileSync(file, 'utf8');
  const where = file === undefined ? 'the argument' : file === '-' ? 'standard input' : file;
  let value: unknown;
  try {
    value = JSON.parse(source ?? '');
  } catch (error) {
    throw new UsageError(`${where} is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`${where} is not a JSON object`);
  return value as Record<string, unknown>;
}

/** `key=value` pairs of --option; a value that reads as JSON (8.2 stays a string) is taken as such. */
export function keyValues(pairs: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--option ${pair}: expected key=value`);
    const raw = pair.slice(at + 1);
    let value: unknown = raw;
    if (/^(true|false|null|-?\d+|\{.*\}|\[.*\])$/s.test(raw)) value = JSON.parse(raw);
    out[pair.slice(0, at)] = value;
  }
  return out;
}

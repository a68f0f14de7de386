import { SiteplaneError } from '@siteplane/sdk';
import { paint } from './output.js';

/** A mistake in what was typed (an unknown or ambiguous name, a missing flag): exit code 2. */
export class UsageError extends Error {
  readonly exitCode = 2;
}

/**
 * What went wrong, on standard error: for a refusal from the service its title, status and code,
 * detail, and every field error on its own line (`options.phpVersion: …`). Returns the exit code.
 */
export function reportError(error: unknown): number {
  const err = (text: string) => paint('red', text, process.stderr);
  if (error instanceof SiteplaneError && error.problem) {
    const p = error.problem;
    const lines = [`${err('Error:')} ${p.title ?? 'Request failed'} (${p.status} ${p.code}): ${p.detail}`];
    for (const e of p.errors ?? [])
      lines.push(e.field ? `  ${paint('bold', e.field, process.stderr)}: ${e.message}` : `  ${e.message}`);
    process.stderr.write(`${lines.join('\n')}\n`);
    return 1;
  }
  process.stderr.write(`${err('Error:')} ${describe(error)}\n`);
  return error instanceof UsageError ? 2 : 1;
}

/**
 * fetch() says only "fetch failed" when the service cannot be reached; its cause (ECONNREFUSED,
 * ENOTFOUND, a TLS error…) is what the person at the terminal needs, with the URL it tried.
 */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message !== 'fetch failed' || !(error.cause instanceof Error)) return error.message;
  const cause = error.cause as Error & { code?: string; address?: string; port?: number };
  const where = cause.address ? ` (${cause.address}${cause.port ? `:${cause.port}` : ''})` : '';
  const url = process.env.SITEPLANE_URL ? ` at ${process.env.SITEPLANE_URL}` : '';
  return `cannot reach the Siteplane service${url}${where}: ${cause.code ?? cause.message}. Is it running? (siteplane serve; siteplane login --url …)`;
}

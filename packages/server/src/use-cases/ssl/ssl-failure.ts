/** A failed certificate operation, as the site record shows it (`ssl.error`). */
import { TlsError } from '../../tls/errors.js';
import type { SslError } from './site-ssl-state.js';

export function sslError(error: unknown, operation: string, at: Date): SslError {
  const base = { operation, at: at.toISOString() };
  if (error instanceof TlsError) {
    const retry = error.details.retryAfterSeconds;
    const retryAt = error.details.retryAt;
    return {
      code: error.kind,
      message: error.message,
      ...base,
      ...(retry !== undefined ? { retry_after_seconds: retry } : {}),
      ...(retryAt !== undefined ? { retry_at: retryAt } : {}),
    };
  }
  // Anything else went wrong on the server: writing the files, testing or reloading nginx.
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'deploy_failed', message: `Installing the certificate on the server failed: ${message}`, ...base };
}

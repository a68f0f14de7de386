/**
 * Checks a site the way its visitors' clients would: curl against nginx on 127.0.0.1 with the name
 * resolved by `--resolve` and Pebble's root as the only trusted CA, so a 200 means a valid chain
 * for that name; and the certificate nginx presents, read with a TLS handshake.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface CurlAnswer {
  /** 0 when curl succeeded; else curl's exit code (60: certificate problem). */
  exit: number;
  status: number;
  location: string;
  body: string;
  stderr: string;
}

export async function curl(url: string, options: { rootPem?: string; resolve: string }): Promise<CurlAnswer> {
  const dir = mkdtempSync(join(tmpdir(), 'siteplane-curl-'));
  try {
    const args = [
      '-sS',
      '--max-time',
      '10',
      '--resolve',
      options.resolve,
      '-o',
      join(dir, 'body'),
      '-w',
      '%{http_code} %{redirect_url}',
    ];
    if (options.rootPem) {
      writeFileSync(join(dir, 'root.pem'), options.rootPem);
      args.push('--cacert', join(dir, 'root.pem'));
    }
    const result = await run('curl', [...args, url]).then(
      ({ stdout, stderr }) => ({ exit: 0, stdout, stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({
        exit: typeof error.code === 'number' ? error.code : -1,
        stdout: error.stdout ?? '',
        stderr: error.stderr ?? '',
      }),
    );
    const [status = '0', location = ''] = result.stdout.trim().split(' ');
    const body = existsSync(join(dir, 'body')) ? readFileSync(join(dir, 'body'), 'utf8') : '';
    return { exit: result.exit, status: Number(status), location, body, stderr: result.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** GET https://<name>/ through nginx on 127.0.0.1:443, trusting only `rootPem`. */
export const httpsGet = (name: string, rootPem: string, path = '/') =>
  curl(`https://${name}${path}`, { rootPem, resolve: `${name}:443:127.0.0.1` });

/** GET http://<name>/ through nginx on 127.0.0.1:80. */
export const httpGet = (name: string, path = '/') => curl(`http://${name}${path}`, { resolve: `${name}:80:127.0.0.1` });

/** Serial (upper-case hex) and names of the certificate nginx presents for `servername`. */
export function servedCertificate(servername: string): Promise<{ serial: string; names: string[]; validTo: Date }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: 443, servername, rejectUnauthorized: false }, () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      resolve({
        serial: cert.serialNumber.toUpperCase(),
        names: (cert.subjectaltname ?? '').split(', ').map((n) => n.replace(/^DNS:/, '')),
        validTo: new Date(cert.valid_to),
      });
    });
    socket.once('error', reject);
  });
}

import { StepError } from '../commands.js';
import { CERTIFICATE_ROOT } from '../remove/remove-paths.js';
import { checkDomain } from '../site-layout.js';

/**
 * Where a site's certificate lives on its server, under CERTIFICATE_ROOT (which removal accepts):
 *
 *   /etc/siteplane/certificates/<domain>/            0700 root
 *     <serial>/fullchain.pem, <serial>/privkey.pem   one directory per certificate (key 0600)
 *     current -> <serial>                            what the vhost names
 *
 * Certificate and key must change together: nginx reloaded or started by another site's job
 * between two renames would read a new key with an old chain and refuse to start. Switching the
 * `current` link is one rename, so nginx sees the old pair or the new pair, never a mix.
 */
export interface CertificateFiles {
  dir: string;
  /** The link to the live version. */
  current: string;
  /** Leaf then intermediates (nginx `ssl_certificate`), through `current`. */
  certificate: string;
  /** The private key (nginx `ssl_certificate_key`), through `current`. */
  key: string;
}

export function certificateFiles(domain: string): CertificateFiles {
  const dir = `${CERTIFICATE_ROOT}/${checkDomain(domain)}`;
  const current = `${dir}/current`;
  return { dir, current, certificate: `${current}/fullchain.pem`, key: `${current}/privkey.pem` };
}

/** The version directory's name: the certificate's serial, hex as OpenSSL prints it. */
export function versionName(serial: string): string {
  if (!/^[0-9A-Fa-f]{1,64}$/.test(serial)) throw new StepError(`certificate serial ${JSON.stringify(serial)} is not hex`);
  return serial.toUpperCase();
}

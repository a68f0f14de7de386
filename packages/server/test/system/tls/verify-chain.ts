/** Checks an issued certificate the way a TLS client would, with node:crypto and with OpenSSL. */
import { execFileSync } from 'node:child_process';
import { createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { IssuedCertificate } from '../../../src/tls/acme-issuer.js';
import { splitCertificates } from '../../../src/tls/pem.js';

export function expectValidChain(issued: IssuedCertificate, rootPem: string): void {
  const chain = splitCertificates(issued.fullChainPem).map((pem) => new X509Certificate(pem));
  const root = new X509Certificate(rootPem);
  expect(chain.length).toBeGreaterThanOrEqual(2);
  expect(splitCertificates(issued.certificatePem)).toHaveLength(1);
  expect(`${issued.certificatePem}${issued.chainPem}`).toBe(issued.fullChainPem);
  // Each certificate is signed by the next, the last by Pebble's root.
  for (const [i, cert] of chain.entries()) {
    const issuer = chain[i + 1] ?? root;
    expect(cert.checkIssued(issuer)).toBe(true);
    expect(cert.verify(issuer.publicKey)).toBe(true);
  }
  // The private key handed back is the certificate's.
  const spki = (key: ReturnType<typeof createPublicKey>) => key.export({ type: 'spki', format: 'der' }).toString('base64');
  expect(spki(createPublicKey(issued.privateKeyPem))).toBe(spki(chain[0]!.publicKey));

  const dir = mkdtempSync(join(tmpdir(), 'siteplane-chain-'));
  try {
    writeFileSync(join(dir, 'root.pem'), rootPem);
    writeFileSync(join(dir, 'chain.pem'), issued.chainPem);
    writeFileSync(join(dir, 'leaf.pem'), issued.certificatePem);
    const out = execFileSync('openssl', ['verify', '-CAfile', 'root.pem', '-untrusted', 'chain.pem', 'leaf.pem'], { cwd: dir });
    expect(out.toString()).toBe('leaf.pem: OK\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Servers' and deploy keys: ed25519 pairs made with Node's crypto and written in OpenSSH's formats
// (ssh2's own generator made about one malformed pair in 256: it strips the public key's leading
// zero bytes, and such a server could never be reached).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { describe, expect, it } from 'vitest';
import { generateSshKeyPair } from '../../src/crypto/ssh-key-pair.js';

const parsed = (key: string) => {
  const result = ssh2.utils.parseKey(key);
  if (result instanceof Error) throw result;
  return Array.isArray(result) ? result[0] : result;
};
const hasSshKeygen = spawnSync('ssh-keygen', ['-?']).error === undefined;

describe('generateSshKeyPair', () => {
  it('every pair of 3,000 parses back, public and private, one key and its own public half', () => {
    let leadingZero = 0;
    for (let i = 0; i < 3_000; i++) {
      const keys = generateSshKeyPair(`test-${i}`);
      expect(keys.public).toMatch(/^ssh-ed25519 [A-Za-z0-9+/]+=* test-\d+$/);
      const priv = parsed(keys.private);
      const pub = parsed(keys.public);
      expect(priv.type).toBe('ssh-ed25519');
      expect(priv.isPrivateKey()).toBe(true);
      expect(priv.comment).toBe(`test-${i}`);
      expect(priv.getPublicSSH().equals(pub.getPublicSSH()), `pair ${i}`).toBe(true);
      // The wire public key: string "ssh-ed25519", string of 32 bytes; ssh2's generator lost zeros here.
      const blob = Buffer.from(keys.public.split(' ')[1] as string, 'base64');
      expect(blob.readUInt32BE(15)).toBe(32);
      if (blob[19] === 0) leadingZero++;
    }
    // About 3,000 / 256 public keys start with a zero byte: the case that failed before.
    expect(leadingZero).toBeGreaterThan(0);
  });

  it('signs with the private key what the public key verifies, and nothing else', () => {
    const keys = generateSshKeyPair('signer');
    const other = generateSshKeyPair('other');
    const data = Buffer.from('siteplane');
    const signature = parsed(keys.private).sign(data);
    expect(parsed(keys.public).verify(data, signature)).toBe(true);
    expect(parsed(other.public).verify(data, signature)).toBe(false);
    expect(parsed(keys.public).verify(Buffer.from('siteplanE'), signature)).toBe(false);
  });

  it('pairs are new each time', () => {
    const a = generateSshKeyPair('c');
    const b = generateSshKeyPair('c');
    expect(a.public).not.toBe(b.public);
    expect(a.private).not.toBe(b.private);
  });

  it.skipIf(!hasSshKeygen)("OpenSSH's ssh-keygen reads the private key and derives the same public key", () => {
    const dir = mkdtempSync(join(tmpdir(), 'siteplane-keys-'));
    try {
      for (let i = 0; i < 20; i++) {
        const keys = generateSshKeyPair(`siteplane@web-${i}`);
        const file = join(dir, `id_${i}`);
        writeFileSync(file, keys.private, { mode: 0o600 });
        const derived = spawnSync('ssh-keygen', ['-y', '-f', file], { encoding: 'utf8' });
        expect(derived.status, derived.stderr).toBe(0);
        // -y prints the key and, from OpenSSH 7.9 on, the comment kept in the private key.
        expect(derived.stdout.trim()).toBe(keys.public);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

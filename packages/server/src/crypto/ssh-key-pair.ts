import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';

/** PKCS #8's DER for an ed25519 private key up to its 32-byte seed (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * An ed25519 key pair in OpenSSH's formats, for a server's or a deploy key: the public key as an
 * authorized_keys line, the private key as `ssh-keygen` writes it (PROTOCOL.key: "openssh-key-v1",
 * unencrypted, one key). Made with Node's own crypto and written here, not by ssh2's generator:
 * that one drops every leading zero byte of the public key, so about one pair in 256 came out
 * malformed and its server could never be reached (mscdex/ssh2 #1390, #1513), and creating a server
 * or binding a deploy key no longer loads ssh2 into a process that never opens a connection
 * (resident memory, issue 13).
 */
export function generateSshKeyPair(comment: string): { public: string; private: string } {
  // The seed is 32 random bytes (an ed25519 private key is nothing more); Node derives the public
  // half. Not generateKeyPairSync + export as JWK: Node 20 deadlocked in that export when a
  // garbage collection inside it destroyed the finished key generation job, which takes the same
  // key's mutex (a CI run hung in ssh-key-pair.test.ts's 3,000 pairs, 2026-11-27; a service
  // process would hang the same way while binding a deploy key).
  const seed = randomBytes(32);
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  const publicKey = spki.subarray(spki.length - 32);
  if (publicKey.length !== 32) throw new Error('Node gave an ed25519 public key of an unexpected size');
  const type = Buffer.from('ssh-ed25519');
  const publicBlob = Buffer.concat([sshString(type), sshString(publicKey)]);
  const check = randomBytes(4);
  const keys = Buffer.concat([
    check,
    check,
    sshString(type),
    sshString(publicKey),
    // OpenSSH keeps the 32-byte seed followed by the public key.
    sshString(Buffer.concat([seed, publicKey])),
    sshString(Buffer.from(comment, 'utf8')),
  ]);
  // Padded to the (absent) cipher's block size, 8, with the bytes 1, 2, 3…
  const padding = Buffer.from(Array.from({ length: (8 - (keys.length % 8)) % 8 }, (_, i) => i + 1));
  const file = Buffer.concat([
    Buffer.from('openssh-key-v1\0'),
    sshString(Buffer.from('none')),
    sshString(Buffer.from('none')),
    sshString(Buffer.alloc(0)),
    uint32(1),
    sshString(publicBlob),
    sshString(Buffer.concat([keys, padding])),
  ]);
  const lines = file.toString('base64').match(/.{1,70}/g) ?? [];
  return {
    public: `ssh-ed25519 ${publicBlob.toString('base64')}${comment ? ` ${comment}` : ''}`,
    private: `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`,
  };
}

function uint32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value);
  return out;
}

/** SSH's `string`: a 32-bit big-endian length, then the bytes. */
function sshString(bytes: Buffer): Buffer {
  return Buffer.concat([uint32(bytes.length), bytes]);
}

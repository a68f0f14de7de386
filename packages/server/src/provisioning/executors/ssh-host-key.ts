import { createHash } from 'node:crypto';

// Host key pinning (ARCHITECTURE §3): verify pins the fingerprint, every later connect checks it.

/** The server presented a key other than the pinned one: possibly a man in the middle. Never retried. */
export class HostKeyMismatch extends Error {
  constructor(
    readonly host: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`host key of ${host} is ${actual}, expected ${expected}`);
    this.name = 'HostKeyMismatch';
  }
}

/** OpenSSH's fingerprint format: `SHA256:` + unpadded base64 of the SHA-256 of the key blob. */
export function sshFingerprint(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

export function normalizeFingerprint(fingerprint: string): string {
  const body = fingerprint
    .trim()
    .replace(/^SHA256:/, '')
    .replace(/=+$/, '');
  if (!/^[A-Za-z0-9+/]{43}$/.test(body)) throw new Error(`not a SHA-256 host key fingerprint: ${fingerprint}`);
  return `SHA256:${body}`;
}

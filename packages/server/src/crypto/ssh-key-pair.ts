import ssh2 from 'ssh2';

/**
 * An ed25519 key pair in OpenSSH format, for a server's or a deploy key. ssh2's generator drops
 * every leading zero byte of the public key, so about one pair in 256 is malformed: ssh2 itself
 * then refuses the private key ("Malformed OpenSSH private key") and the server can never be
 * reached (mscdex/ssh2 #1390, #1513; seen in a CI run of the retry system test). Each pair is
 * parsed back and a malformed one is generated again.
 */
export function generateSshKeyPair(
  comment: string,
  generate = ssh2.utils.generateKeyPairSync,
): { public: string; private: string } {
  for (let attempt = 1; attempt <= 16; attempt++) {
    const keys = generate('ed25519', { comment });
    if (!(ssh2.utils.parseKey(keys.private) instanceof Error) && !(ssh2.utils.parseKey(keys.public) instanceof Error))
      return { public: keys.public, private: keys.private };
  }
  // 16 malformed pairs in a row: (1/256)^16, i.e. a broken generator, not bad luck.
  throw new Error('could not generate a well-formed ed25519 key pair');
}

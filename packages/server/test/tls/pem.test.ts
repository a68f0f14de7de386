import { describe, expect, it } from 'vitest';
import { splitCertificates } from '../../src/tls/pem.js';

const block = (body: string) => `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----`;

describe('splitCertificates', () => {
  it('returns each certificate in order, each ending with one newline', () => {
    const bundle = `${block('QUFB')}\n\n${block('QkJC')}`;
    expect(splitCertificates(bundle)).toEqual([`${block('QUFB')}\n`, `${block('QkJC')}\n`]);
  });

  it('normalises CRLF and ignores what is not a certificate', () => {
    const bundle = `junk\r\n${block('QUFB').replace(/\n/g, '\r\n')}\r\n-----BEGIN PRIVATE KEY-----\nX\n-----END PRIVATE KEY-----\n`;
    expect(splitCertificates(bundle)).toEqual([`${block('QUFB')}\n`]);
  });
});

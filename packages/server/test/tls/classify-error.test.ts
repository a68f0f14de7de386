import { describe, expect, it } from 'vitest';
import { classifyAcmeFailure, type FailedStep } from '../../src/tls/classify-error.js';

const DIR = 'https://acme.example/dir';
const P = 'urn:ietf:params:acme:error:';

function classify(partial: Partial<FailedStep>) {
  return classifyAcmeFailure({ step: 'order', directoryUrl: DIR, error: new Error('acme-client text'), record: {}, ...partial });
}

describe('classifyAcmeFailure', () => {
  it('reports a rate limit with when to come back, whatever the step', () => {
    const error = classify({
      step: 'order',
      domain: 'example.com',
      record: {
        problem: {
          type: `${P}rateLimited`,
          detail: 'too many certificates already issued.',
          status: 429,
          retryAfterSeconds: 3600,
        },
      },
    });
    expect(error.kind).toBe('rate_limited');
    expect(error.details).toEqual({ domain: 'example.com', acmeProblem: `${P}rateLimited`, retryAfterSeconds: 3600 });
    expect(error.message).toBe(
      'The CA refused the request for example.com: rate limit reached (too many certificates already issued). Try again in 3600 s.',
    );
  });

  it('treats a bare 429 as a rate limit too', () => {
    expect(
      classify({ step: 'account', record: { problem: { type: `${P}malformed`, detail: 'slow down', status: 429 } } }).kind,
    ).toBe('rate_limited');
  });

  it('points at ACME_CA_CERTS when the CA certificate is not trusted', () => {
    const error = classify({ record: { network: { code: 'SELF_SIGNED_CERT_IN_CHAIN', message: 'self-signed certificate' } } });
    expect(error.kind).toBe('ca_unreachable');
    expect(error.message).toContain(DIR);
    expect(error.message).toContain('ACME_CA_CERTS');
  });

  it.each([
    ['ECONNREFUSED', 'refused'],
    ['ENOTFOUND', 'does not resolve'],
    ['ETIMEDOUT', 'did not answer in time'],
    ['EPIPE', 'broken (EPIPE)'],
  ])('reports network failure %s as ca_unreachable', (code, text) => {
    const error = classify({ domain: 'example.com', record: { network: { code, message: 'broken' } } });
    expect(error.kind).toBe('ca_unreachable');
    expect(error.message).toContain(text);
    expect(error.message).toContain('example.com');
  });

  it('reports 5xx as ca_unreachable and an unexplained TypeError (acme-client lost the network error) too', () => {
    expect(classify({ record: { problem: { type: `${P}serverInternal`, detail: 'oops', status: 503 } } }).kind).toBe(
      'ca_unreachable',
    );
    expect(classify({ error: new TypeError("Cannot read properties of undefined (reading 'config')") }).kind).toBe(
      'ca_unreachable',
    );
  });

  it('reports an account refused by the CA, with the EAB hint when the CA wants one', () => {
    const error = classify({
      step: 'account',
      record: { problem: { type: `${P}externalAccountRequired`, detail: 'EAB required', status: 400 } },
    });
    expect(error.kind).toBe('account_failed');
    expect(error.message).toContain('external account binding');
    expect(
      classify({ step: 'account', record: { problem: { type: `${P}unauthorized`, detail: 'bad MAC', status: 403 } } }).kind,
    ).toBe('account_failed');
  });

  it('names the domain and the likely cause when validation fails', () => {
    const dns = classify({
      step: 'challenge',
      domain: '*.wild.test',
      challengeType: 'dns-01',
      record: { problem: { type: `${P}unauthorized`, detail: 'Incorrect TXT record "x" found', status: 200 } },
    });
    expect(dns.kind).toBe('challenge_failed');
    expect(dns.details.domain).toBe('*.wild.test');
    expect(dns.message).toMatch(
      /^Validation for \*\.wild\.test failed \(dns-01\): Incorrect TXT record "x" found\. The CA did not see the expected _acme-challenge TXT record/,
    );

    const http = classify({
      step: 'challenge',
      domain: 'site.test',
      challengeType: 'http-01',
      record: { problem: { type: `${P}connection`, detail: 'Connection refused', status: 200 } },
    });
    expect(http.message).toContain('port 80');
  });

  it('falls back to the text acme-client gave when the CA sent no problem document', () => {
    const error = classify({ step: 'finalize', domain: 'site.test', error: new Error('Unexpected item status: invalid') });
    expect(error.kind).toBe('challenge_failed');
    expect(error.message).toBe('The CA did not issue the certificate for site.test: Unexpected item status: invalid.');
  });

  it('prefers the problem document over a network error seen earlier in the step', () => {
    const error = classify({
      step: 'order',
      domain: 'site.test',
      record: {
        network: { code: 'ECONNRESET', message: 'reset' },
        problem: { type: `${P}rejectedIdentifier`, detail: 'Invalid identifier', status: 400 },
      },
    });
    expect(error.kind).toBe('challenge_failed');
    expect(error.message).toBe('The CA refused to order a certificate for site.test: Invalid identifier.');
  });
});

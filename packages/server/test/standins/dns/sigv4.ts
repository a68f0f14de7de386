/**
 * Checks AWS Signature Version 4 the way AWS does (docs.aws.amazon.com/IAM/latest/UserGuide/
 * reference_sigv-create-signed-request.html), so a wrong secret fails in the stand-in as it fails
 * at Route 53, and a signing mistake in our use of the SDK would show.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Incoming } from './standin-server.js';

export type SignatureCheck = { ok: true } | { ok: false; code: string; message: string };

const AUTH =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request,\s*SignedHeaders=([^,]+),\s*Signature=([0-9a-f]{64})$/;

export function checkSignature(req: Incoming, secrets: ReadonlyMap<string, string>): SignatureCheck {
  const header = req.headers.authorization;
  if (!header) return { ok: false, code: 'MissingAuthenticationToken', message: 'Missing Authentication Token' };
  const match = AUTH.exec(header);
  if (!match)
    return {
      ok: false,
      code: 'IncompleteSignature',
      message: 'Authorization header requires Credential, SignedHeaders and Signature.',
    };
  const [, accessKeyId = '', date = '', region = '', service = '', signedHeaders = '', signature = ''] = match;
  const secret = secrets.get(accessKeyId);
  if (secret === undefined) {
    return { ok: false, code: 'InvalidClientTokenId', message: 'The security token included in the request is invalid.' };
  }
  const amzDate = headerValue(req, 'x-amz-date');
  if (!amzDate.startsWith(date))
    return { ok: false, code: 'IncompleteSignature', message: 'Date in Credential scope does not match x-amz-date.' };

  const names = signedHeaders.split(';');
  if (!names.includes('host')) return { ok: false, code: 'IncompleteSignature', message: "'Host' must be a signed header." };
  const [rawPath = '/', rawQuery = ''] = req.rawUrl.split('?', 2);
  const canonicalRequest = [
    req.method,
    rawPath
      .split('/')
      .map((segment) => rfc3986(segment))
      .join('/'),
    canonicalQuery(rawQuery),
    names.map((name) => `${name}:${headerValue(req, name)}\n`).join(''),
    signedHeaders,
    headerValue(req, 'x-amz-content-sha256') || sha256(req.body),
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${secret}`, date);
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part);
  const expected = createHmac('sha256', key).update(stringToSign).digest();
  const given = Buffer.from(signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return {
      ok: false,
      code: 'SignatureDoesNotMatch',
      message:
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    };
  }
  return { ok: true };
}

function headerValue(req: Incoming, name: string): string {
  const value = req.headers[name];
  const joined = Array.isArray(value) ? value.join(',') : (value ?? '');
  return joined.trim().replace(/\s+/g, ' ');
}

function canonicalQuery(raw: string): string {
  if (!raw) return '';
  return raw
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const [key = '', value = ''] = pair.split('=', 2);
      return [rfc3986(decodeURIComponent(key)), rfc3986(decodeURIComponent(value.replace(/\+/g, '%20')))] as const;
    })
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
}

function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

function hmac(key: string | Buffer, value: string): Buffer {
  return createHmac('sha256', key).update(value).digest();
}

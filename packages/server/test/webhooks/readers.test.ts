// Issue 11 item 6: each provider's push hook read from its documented payload and headers, and
// its signature or token checked over the raw body.
import { describe, expect, it } from 'vitest';
import { branchPasses } from '../../src/domain/webhooks/branch-filter.js';
import { giteaReader } from '../../src/domain/webhooks/gitea.js';
import { githubReader } from '../../src/domain/webhooks/github.js';
import { HOOK_READERS } from '../../src/domain/webhooks/readers.js';
import { hmacSha256Matches, sharedTokenMatches } from '../../src/domain/webhooks/signatures.js';
import { fixture, HOOK_CASES } from './hook-cases.js';

const SECRET = 'a'.repeat(64);

describe('signatures', () => {
  it('GitHub\'s documented example: secret "It\'s a Secret to Everybody", body "Hello, World!"', () => {
    const hex = '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
    const headers = { 'x-hub-signature-256': `sha256=${hex}` };
    expect(githubReader.verify(headers, Buffer.from('Hello, World!'), "It's a Secret to Everybody")).toBe('ok');
    expect(githubReader.verify(headers, Buffer.from('Hello, World?'), "It's a Secret to Everybody")).toBe('bad');
    expect(githubReader.verify(headers, Buffer.from('Hello, World!'), 'another secret')).toBe('bad');
    // The prefix is part of the format; the bare hex (Gitea's form) is not GitHub's.
    expect(githubReader.verify({ 'x-hub-signature-256': hex }, Buffer.from('Hello, World!'), "It's a Secret to Everybody")).toBe(
      'bad',
    );
    expect(githubReader.verify({}, Buffer.from('Hello, World!'), "It's a Secret to Everybody")).toBe('missing');
  });

  it('malformed hex, a short or long signature, uppercase hex', () => {
    const body = Buffer.from('{}');
    const good = 'b51b6e0d3aa5d3eb7d3d7c8a2b6d7f2c9b0b1c2d3e4f5061728394a5b6c7d8e9';
    expect(hmacSha256Matches(body, SECRET, 'zz')).toBe(false);
    expect(hmacSha256Matches(body, SECRET, good.slice(2))).toBe(false);
    expect(hmacSha256Matches(body, SECRET, `${good}00`)).toBe(false);
    const real = (HOOK_CASES[0]?.headers('{}', SECRET, 'x')['x-hub-signature-256'] ?? '').slice(7);
    expect(hmacSha256Matches(body, SECRET, real)).toBe(true);
    expect(hmacSha256Matches(body, SECRET, real.toUpperCase())).toBe(true);
  });

  it('a shared token matches only itself, whatever its length', () => {
    expect(sharedTokenMatches(SECRET, SECRET)).toBe(true);
    expect(sharedTokenMatches(`${SECRET}x`, SECRET)).toBe(false);
    expect(sharedTokenMatches(SECRET.slice(1), SECRET)).toBe(false);
    expect(sharedTokenMatches('', SECRET)).toBe(false);
  });
});

describe.each(HOOK_CASES)('$provider reader', (c) => {
  const reader = HOOK_READERS[c.provider];
  const body = JSON.stringify(c.payload);

  it('verifies the documented headers over the raw body, refuses a changed body or secret', () => {
    const headers = c.headers(body, SECRET, 'id-1');
    expect(reader.verify(headers, Buffer.from(body), SECRET)).toBe('ok');
    expect(reader.verify(headers, Buffer.from(`${body} `), SECRET)).toBe(c.provider === 'gitlab' ? 'ok' : 'bad');
    expect(reader.verify(headers, Buffer.from(body), 'b'.repeat(64))).toBe('bad');
    const { [c.signatureHeader]: _dropped, ...unsigned } = headers;
    expect(reader.verify(unsigned, Buffer.from(body), SECRET)).toBe('missing');
  });

  it('reads branch, commit, message and author from the documented payload', () => {
    const headers = c.headers(body, SECRET, 'id-1');
    expect(reader.read(headers, c.payload)).toEqual({ kind: 'push', event: expect.any(String), branches: [c.expected] });
    expect(reader.deliveryId(headers)).toBe('id-1');
  });

  it('a deleted branch, another event, a tag', () => {
    const headers = c.headers(body, SECRET, 'id-1');
    expect(reader.read(headers, c.deleted())).toMatchObject({ kind: 'skip', reason: 'branch_deleted' });
    expect(reader.read(c.headers(body, SECRET, 'id-1', 'other'), c.payload)).toMatchObject({ kind: 'skip', reason: 'not_push' });
    if (c.provider !== 'bitbucket') {
      const tag = { ...c.payload, ref: 'refs/tags/v1.0.0' };
      expect(reader.read(headers, tag)).toMatchObject({ kind: 'skip', reason: 'not_branch' });
    }
  });

  it('a payload that is not a push of this provider is malformed, never a crash', () => {
    const headers = c.headers(body, SECRET, 'id-1');
    for (const payload of [null, [], 'x', 1, {}, { ref: 5 }, { push: { changes: 'no' } }]) {
      expect(['malformed', 'skip']).toContain(reader.read(headers, payload).kind);
    }
  });
});

describe('provider details', () => {
  it('GitHub ping', () => {
    expect(githubReader.read({ 'x-github-event': 'ping' }, fixture('github-ping'))).toEqual({ kind: 'ping', event: 'ping' });
  });

  it('Forgejo sends X-Forgejo-Signature / -Event / -Delivery', () => {
    const gitea = HOOK_CASES.find((c) => c.provider === 'gitea');
    const body = JSON.stringify(gitea?.payload);
    const signature = gitea?.headers(body, SECRET, 'x')['x-gitea-signature'] ?? '';
    const headers = { 'x-forgejo-signature': signature, 'x-forgejo-event': 'push', 'x-forgejo-delivery': 'f-1' };
    expect(giteaReader.verify(headers, Buffer.from(body), SECRET)).toBe('ok');
    expect(giteaReader.deliveryId(headers)).toBe('f-1');
    expect(giteaReader.read(headers, gitea?.payload)).toMatchObject({ kind: 'push', branches: [{ branch: 'develop' }] });
    expect(giteaReader.read({ 'x-gitea-event': 'delete' }, {})).toMatchObject({ kind: 'skip', reason: 'branch_deleted' });
  });

  it('GitLab: Idempotency-Key first, X-Gitlab-Event-UUID on older versions', () => {
    const reader = HOOK_READERS.gitlab;
    expect(reader.deliveryId({ 'idempotency-key': 'k-1', 'x-gitlab-event-uuid': 'u-1' })).toBe('k-1');
    expect(reader.deliveryId({ 'x-gitlab-event-uuid': 'u-1' })).toBe('u-1');
    expect(reader.deliveryId({ 'x-gitlab-webhook-uuid': 'hook' })).toBeNull();
  });

  it('Bitbucket: X-Hook-UUID names the webhook, not the delivery', () => {
    expect(HOOK_READERS.bitbucket.deliveryId({ 'x-hook-uuid': '{abc}' })).toBeNull();
  });

  it('a delivery id that is not a plain token is not kept', () => {
    expect(githubReader.deliveryId({ 'x-github-delivery': 'a b' })).toBeNull();
    expect(githubReader.deliveryId({ 'x-github-delivery': 'x'.repeat(200) })).toBeNull();
  });
});

describe('branch filter', () => {
  it('null: the source branch, nothing without one; []: any; patterns with *', () => {
    expect(branchPasses('main', null, 'main')).toBe(true);
    expect(branchPasses('dev', null, 'main')).toBe(false);
    expect(branchPasses('main', null, null)).toBe(false);
    expect(branchPasses('anything', [], null)).toBe(true);
    expect(branchPasses('release/1.2', ['main', 'release/*'], null)).toBe(true);
    expect(branchPasses('release', ['release/*'], null)).toBe(false);
    expect(branchPasses('mainline', ['main'], null)).toBe(false);
    expect(branchPasses('a.b', ['a?b', 'a*b'], null)).toBe(true);
    expect(branchPasses('axb', ['a.b'], null)).toBe(false);
  });
});

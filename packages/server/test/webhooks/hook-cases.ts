/**
 * Each provider's push hook as the provider sends it: the payload from its documentation (in
 * fixtures/), the headers it documents, signed with the site's secret the provider's way, and
 * what the push should deploy. Shared by the reader unit tests and the HTTP tests.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { signHmacSha256 } from '../../src/domain/webhooks/signatures.js';

export type Json = Record<string, unknown>;

export interface HookCase {
  provider: 'github' | 'gitlab' | 'bitbucket' | 'gitea';
  payload: Json;
  /** What the documented payload deploys. */
  expected: { branch: string; commit: string; message: string | null; author: string | null };
  /** The provider's headers for a delivery of `body` (a push unless `event` says otherwise). */
  headers(body: string, secret: string, deliveryId: string, event?: 'push' | 'other'): Record<string, string>;
  /** The signature or token header, to drop or damage. */
  signatureHeader: string;
  /** The same push moved to another branch. */
  onBranch(branch: string): Json;
  /** The push that deletes the branch. */
  deleted(): Json;
}

export const fixture = (name: string): Json =>
  JSON.parse(readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')) as Json;

const clone = (value: Json): Json => structuredClone(value);
const ZERO = '0000000000000000000000000000000000000000';

export const HOOK_CASES: HookCase[] = [
  {
    provider: 'github',
    payload: fixture('github-push'),
    expected: {
      branch: 'main',
      commit: '0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c',
      message: 'Update README.md',
      author: 'Codertocat',
    },
    signatureHeader: 'x-hub-signature-256',
    headers: (body, secret, id, event = 'push') => ({
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/044aadd',
      'x-github-event': event === 'push' ? 'push' : 'issues',
      'x-github-delivery': id,
      'x-github-hook-id': '292430182',
      'x-hub-signature-256': `sha256=${signHmacSha256(body, secret)}`,
    }),
    onBranch: (branch) => ({ ...clone(fixture('github-push')), ref: `refs/heads/${branch}` }),
    deleted: () => ({ ...clone(fixture('github-push')), after: ZERO, deleted: true, head_commit: null, commits: [] }),
  },
  {
    provider: 'gitlab',
    payload: fixture('gitlab-push'),
    expected: {
      branch: 'master',
      commit: 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7',
      message: 'fixed readme',
      author: 'GitLab dev user',
    },
    signatureHeader: 'x-gitlab-token',
    headers: (_body, secret, id, event = 'push') => ({
      'content-type': 'application/json',
      'user-agent': 'GitLab/17.6.0',
      'x-gitlab-event': event === 'push' ? 'Push Hook' : 'Issue Hook',
      'x-gitlab-event-uuid': randomUUID(),
      'idempotency-key': id,
      'x-gitlab-webhook-uuid': '2e5a5c47-1b3b-4bd9-a87c-7ec0c1c0c4c1',
      'x-gitlab-instance': 'https://gitlab.example.com',
      'x-gitlab-token': secret,
    }),
    onBranch: (branch) => ({ ...clone(fixture('gitlab-push')), ref: `refs/heads/${branch}` }),
    deleted: () => ({ ...clone(fixture('gitlab-push')), after: ZERO, checkout_sha: null, commits: [], total_commits_count: 0 }),
  },
  {
    provider: 'bitbucket',
    payload: fixture('bitbucket-push'),
    expected: {
      branch: 'main',
      commit: '709d658dc5b6d6afcd46049c2f332ee3f515a67d',
      message: 'new commit message\n',
      author: 'Emma Smith',
    },
    signatureHeader: 'x-hub-signature',
    headers: (body, secret, id, event = 'push') => ({
      'content-type': 'application/json',
      'user-agent': 'Bitbucket-Webhooks/2.0',
      'x-event-key': event === 'push' ? 'repo:push' : 'repo:fork',
      'x-request-uuid': id,
      'x-hook-uuid': '{cb4b3b0e-6b0a-4e7e-9a7c-1b1a3b5a9e0f}',
      'x-attempt-number': '1',
      'x-hub-signature': `sha256=${signHmacSha256(body, secret)}`,
    }),
    onBranch: (branch) => {
      const payload = clone(fixture('bitbucket-push'));
      const change = (payload.push as { changes: { new: { name: string } }[] }).changes[0];
      if (change) change.new.name = branch;
      return payload;
    },
    deleted: () => {
      const payload = clone(fixture('bitbucket-push'));
      const change = (payload.push as { changes: Json[] }).changes[0] as Json;
      change.new = null;
      change.closed = true;
      return payload;
    },
  },
  {
    provider: 'gitea',
    payload: fixture('gitea-push'),
    expected: {
      branch: 'develop',
      commit: 'bffeb74224043ba2feb48d137756c8a9331c449a',
      message: 'Webhooks Yay!',
      author: 'Gitea',
    },
    signatureHeader: 'x-gitea-signature',
    headers: (body, secret, id, event = 'push') => ({
      'content-type': 'application/json',
      'x-github-delivery': id,
      'x-github-event': event === 'push' ? 'push' : 'issues',
      'x-gogs-delivery': id,
      'x-gogs-event': event === 'push' ? 'push' : 'issues',
      'x-gitea-delivery': id,
      'x-gitea-event': event === 'push' ? 'push' : 'issues',
      'x-gitea-signature': signHmacSha256(body, secret),
    }),
    onBranch: (branch) => ({ ...clone(fixture('gitea-push')), ref: `refs/heads/${branch}` }),
    deleted: () => ({ ...clone(fixture('gitea-push')), after: ZERO, commits: [] }),
  },
];

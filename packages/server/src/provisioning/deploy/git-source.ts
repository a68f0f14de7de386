import { StepError } from '../steps/commands.js';
import { checkRelativePath } from '../steps/site-layout.js';
import type { DeploySource } from './plan.js';

type GitSource = Extract<DeploySource, { kind: 'git' }>;

/**
 * The values of a git source that reach git's argv, checked again here: a URL that git would take
 * for an option or a local path (file://, ext::), a branch or commit that is not one.
 */
const URL = /^(?:(?:https?|ssh|git):\/\/[^\s'"\\]+|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\s'"\\]+)$/;
const BRANCH = /^[A-Za-z0-9._/-]{1,200}$/;
const COMMIT = /^[0-9a-f]{7,64}$/;

/** Protocols git may use for the fetch (GIT_ALLOW_PROTOCOL): never file or ext. */
export const ALLOWED_PROTOCOLS = 'https:http:ssh:git';

export function checkGitUrl(url: string): string {
  if (!URL.test(url))
    throw new StepError(`repository URL ${JSON.stringify(url)} must be https://, ssh://, git:// or user@host:path`);
  return url;
}

export function checkBranch(branch: string): string {
  if (!BRANCH.test(branch) || branch.startsWith('-') || branch.includes('..') || branch.endsWith('/'))
    throw new StepError(`branch ${JSON.stringify(branch)} is not a branch name`);
  return branch;
}

/** What git resolves: the commit asked for, else the branch's head in the mirror. */
export function revisionOf(source: GitSource): string {
  if (source.commit !== null) {
    if (!COMMIT.test(source.commit)) throw new StepError(`commit ${JSON.stringify(source.commit)} is not a commit id`);
    return `${source.commit}^{commit}`;
  }
  return `refs/heads/${checkBranch(source.branch)}^{commit}`;
}

/** `<sha>` or `<sha>:<appFolder>`: the tree `git archive` exports. */
export function treeOf(sha: string, appFolder: string | null): string {
  if (!/^[0-9a-f]{40,64}$/.test(sha)) throw new StepError(`git resolved ${JSON.stringify(sha)}, not a commit id`);
  if (appFolder === null || appFolder === '') return sha;
  const folder = checkRelativePath(appFolder, 'appFolder');
  return folder === '' ? sha : `${sha}:${folder}`;
}

/** How the fetch authenticates: the script's mode and what goes on its stdin (never argv). */
export function credentialInput(source: GitSource): { mode: 'none' | 'ssh' | 'https'; stdin: string } {
  const credentials = source.credentials;
  if (credentials === null) return { mode: 'none', stdin: '' };
  if ('sshPrivateKey' in credentials) {
    const key = credentials.sshPrivateKey.endsWith('\n') ? credentials.sshPrivateKey : `${credentials.sshPrivateKey}\n`;
    return { mode: 'ssh', stdin: key };
  }
  const basic = Buffer.from(`${credentials.httpsUser}:${credentials.httpsToken}`, 'utf8').toString('base64');
  return { mode: 'https', stdin: `Authorization: Basic ${basic}\n` };
}

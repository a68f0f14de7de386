/**
 * The rules of a version-control profile body beyond its JSON schema (ARCHITECTURE §2 admin
 * surface), checked before anything is sent to a provider, every violation reported at once with
 * its field's path:
 * - hosted providers (github, gitlab, bitbucket, gitea) need a `token` and take no `repositories`;
 *   `baseUrl` points them at a self-hosted instance (GitHub Enterprise, GitLab, Gitea/Forgejo) or,
 *   for Bitbucket, at another root of the Cloud API 2.0 (a proxy).
 * - `git` profiles list remote URLs in `repositories` and take neither `token` (credentials belong
 *   in the URLs) nor `baseUrl`; each entry must be a remote parseGitRemote accepts, and two entries
 *   may not share a `<owner>/<repo>` name, since the name is how a repository is addressed.
 * - `baseUrl` is https. Plain http is accepted only on loopback (a provider on the same machine),
 *   because the token travels in every request's headers. Remotes likewise: https, ssh or git;
 *   http only on loopback; never file:// (this machine's disk).
 * Where the addresses are (SITEPLANE_ALLOWED_TARGETS) is the egress policy's to say, when the
 * provider is first asked: a name can resolve elsewhere by then.
 */
import type { Static } from '@sinclair/typebox';
import type { CreateVcProfileBody, FieldError } from '@siteplane/contract';
import { parseGitRemote } from '../../vcs/git-remote.js';
import type { VcsProfileConfig, VcsProviderName } from '../../vcs/provider.js';

/** Each remote is one `git ls-remote` at creation and on every listing; beyond this use a hosted provider. */
export const MAX_GIT_REMOTES = 100;
const MAX_TOKEN_LENGTH = 4096;
/** Printable ASCII without spaces: what every provider issues, and all a header may carry safely. */
const TOKEN_CHARS = /^[\x21-\x7e]+$/;

type Body = Static<typeof CreateVcProfileBody>;

export function checkVcProfileBody(body: Body): { config: VcsProfileConfig; errors: FieldError[] } {
  const provider = body.provider as VcsProviderName;
  const errors: FieldError[] = [];
  const add = (field: string, code: FieldError['code'], message: string) => errors.push({ field, code, message });

  if (provider === 'git') {
    if (body.token !== undefined) add('token', 'not_allowed', 'Put credentials in the remote URLs of a git profile.');
    if (body.baseUrl !== undefined) add('baseUrl', 'not_allowed', 'A git profile lists full remote URLs instead.');
    checkRemotes(body.repositories, add);
  } else {
    if (body.repositories !== undefined) add('repositories', 'not_allowed', 'Only git profiles list remotes.');
    if (body.token === undefined || body.token === '') add('token', 'required', `A ${provider} profile needs a token.`);
    else if (body.token.length > MAX_TOKEN_LENGTH) add('token', 'too_long', `At most ${MAX_TOKEN_LENGTH} characters.`);
    else if (!TOKEN_CHARS.test(body.token)) add('token', 'invalid_format', 'A token has no spaces or control characters.');
  }
  const baseUrl = body.baseUrl === undefined || provider === 'git' ? null : checkBaseUrl(body.baseUrl, add);
  return {
    config: { provider, baseUrl, token: provider === 'git' ? null : (body.token ?? null), repositories: body.repositories ?? [] },
    errors,
  };
}

type Add = (field: string, code: FieldError['code'], message: string) => void;

function checkRemotes(repositories: string[] | undefined, add: Add): void {
  if (repositories === undefined || repositories.length === 0) {
    add('repositories', 'required', 'A git profile lists its remote URLs.');
    return;
  }
  if (repositories.length > MAX_GIT_REMOTES) {
    add('repositories', 'too_long', `At most ${MAX_GIT_REMOTES} remotes; use a hosted provider's profile for more.`);
    return;
  }
  const firstIndexOf = new Map<string, number>();
  repositories.forEach((raw, index) => {
    const field = `repositories.${index}`;
    const remote = parseGitRemote(raw);
    if (!remote) {
      add(field, 'invalid_format', 'Not a git remote: use https://, ssh://, user@host:path or git:// ending in <owner>/<repo>.');
      return;
    }
    if (remote.transport === 'http' && !isLoopback(remote.host)) {
      add(field, 'insecure_url', 'Use https://; plain http:// is accepted only for a remote on this machine (loopback).');
    }
    const seen = firstIndexOf.get(remote.name);
    if (seen !== undefined) {
      add(field, 'duplicate', `Also named ${remote.name}, like repositories.${seen}; a repository is addressed by that name.`);
    } else firstIndexOf.set(remote.name, index);
  });
}

/** The API root as given, without a trailing slash; null when invalid (the error is added). */
function checkBaseUrl(raw: string, add: Add): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    add('baseUrl', 'invalid_format', 'Not a URL.');
    return null;
  }
  const problems: string[] = [];
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname))) {
    add('baseUrl', 'insecure_url', 'Use https://; plain http:// is accepted only for a provider on this machine (loopback).');
    return null;
  }
  if (url.username !== '' || url.password !== '') problems.push('no credentials (the token goes in `token`)');
  if (url.search !== '' || url.hash !== '') problems.push('no query or fragment');
  if (problems.length > 0) {
    add('baseUrl', 'invalid_format', `The provider's address takes ${problems.join(' and ')}.`);
    return null;
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** 127.0.0.0/8, ::1 and localhost: traffic that never leaves the machine. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

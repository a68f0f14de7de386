/**
 * Plain git remotes as a `git` profile lists them: `https://` (or `http://`), `ssh://`, scp-like
 * `user@host:path` and `git://`, optionally with credentials in the URL. Anything else is refused:
 * `file://` (the control plane's own disk), git's `ext::` transport, which runs a command, and
 * strings starting with `-`, which git would read as an option.
 */

export interface GitRemote {
  /** The URL exactly as configured, credentials included; handed to git only. */
  url: string;
  /** `<owner>/<repo>`: the last two segments of the path, `.git` dropped. */
  name: string;
  /** The URL without credentials, for messages. */
  display: string;
  /** Credential values found in the URL, to redact from git's output. */
  secrets: string[];
  transport: GitTransport;
  /** The host git connects to, without brackets; the egress policy checks it. */
  host: string;
  port: number;
}

export type GitTransport = 'https' | 'http' | 'ssh' | 'git';
const DEFAULT_PORT: Record<GitTransport, number> = { https: 443, http: 80, ssh: 22, git: 9418 };

const URL_SCHEMES = new Set(['https:', 'http:', 'ssh:', 'git:']);
/** `[user@]host:path`, which git reads as ssh when no `://` comes first and no `/` precedes the colon. */
const SCP_LIKE = /^(?:([^@/\s]+)@)?([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):(?!\/\/)([^\s]+)$/;

/** The remote, or null when the string is not a supported git remote URL. */
export function parseGitRemote(raw: string): GitRemote | null {
  if (raw.length === 0 || raw.length > 2048 || raw.startsWith('-') || /[\s\u0000-\u001f\u007f]/.test(raw)) return null;
  // `<transport>::<address>` runs git's remote helper of that name (ext, fd, …), whatever follows.
  if (/^[A-Za-z0-9+.-]*::/.test(raw)) return null;
  if (raw.includes('://')) return parseUrlForm(raw);
  const scp = SCP_LIKE.exec(raw);
  if (!scp) return null;
  const [, user, host, path] = scp;
  const name = nameFromPath(path ?? '');
  if (!name || !host) return null;
  return {
    url: raw,
    name,
    display: `${host}:${path}`,
    secrets: user?.includes(':') ? [user.slice(user.indexOf(':') + 1)] : [],
    transport: 'ssh',
    host: host.replace(/^\[(.*)\]$/, '$1'),
    port: DEFAULT_PORT.ssh,
  };
}

function parseUrlForm(raw: string): GitRemote | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (!URL_SCHEMES.has(url.protocol)) return null;
  if (url.hostname === '') return null;
  const name = nameFromPath(url.pathname.split('/').map(safeDecode).join('/'));
  if (!name) return null;
  const secrets = [url.password, safeDecode(url.password)].filter((s) => s.length > 0);
  const display = new URL(url.href);
  display.username = '';
  display.password = '';
  const transport = url.protocol.slice(0, -1) as GitTransport;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return { url: raw, name, display: display.href, secrets, transport, host, port: Number(url.port || DEFAULT_PORT[transport]) };
}

function nameFromPath(path: string): string | null {
  const segments = path.split('/').filter((segment) => segment.length > 0);
  if (segments.length < 2) return null;
  const owner = segments[segments.length - 2] ?? '';
  const repo = (segments[segments.length - 1] ?? '').replace(/\.git$/, '');
  if (repo === '' || owner === '.' || owner === '..' || repo === '.' || repo === '..') return null;
  return `${owner}/${repo}`;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The file system of the fake server: files, directories and symlinks by absolute path.
 * Just enough POSIX for the steps: parents must exist, rename replaces, rm -rf takes subtrees.
 */
export type FsNode =
  | { type: 'file'; content: string; mode: string; owner: string; group: string }
  | { type: 'dir'; mode: string; owner: string; group: string }
  | { type: 'link'; target: string; owner: string };

export class FakeFs {
  readonly nodes = new Map<string, FsNode>();

  constructor() {
    for (const dir of [
      '/',
      '/home',
      '/etc',
      '/etc/apt',
      '/etc/apt/sources.list.d',
      '/etc/init.d',
      '/run',
      '/tmp',
      '/var',
      '/var/lib',
      '/var/log',
      '/usr',
      '/usr/share',
      '/usr/local',
      '/usr/local/bin',
      '/usr/local/lib',
    ]) {
      this.nodes.set(dir, { type: 'dir', mode: '755', owner: 'root', group: 'root' });
    }
    this.write(
      '/etc/os-release',
      'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\nVERSION_CODENAME=bookworm\n',
    );
  }

  get(path: string): FsNode | undefined {
    return this.nodes.get(path);
  }

  /** Follows symlinks in every component (relative targets against the link's directory). */
  resolve(path: string, depth = 0): string {
    if (depth > 16) return path;
    let current = '';
    const parts = path.split('/').filter(Boolean);
    for (let i = 0; i < parts.length; i++) {
      current = `${current}/${parts[i]}`;
      const node = this.nodes.get(current);
      if (node?.type === 'link') {
        const target = node.target.startsWith('/') ? node.target : `${parent(current)}/${node.target}`;
        const rest = parts.slice(i + 1).join('/');
        return this.resolve(normalise(rest ? `${target}/${rest}` : target), depth + 1);
      }
    }
    return path === '' ? '/' : path;
  }

  read(path: string): string | undefined {
    const node = this.nodes.get(this.resolve(path));
    return node?.type === 'file' ? node.content : undefined;
  }

  hasParent(path: string): boolean {
    return this.nodes.get(this.resolve(parent(path)))?.type === 'dir';
  }

  write(path: string, content: string, own: { mode?: string; owner?: string; group?: string } = {}): void {
    this.nodes.set(path, {
      type: 'file',
      content,
      mode: own.mode ?? '644',
      owner: own.owner ?? 'root',
      group: own.group ?? 'root',
    });
  }

  mkdirp(path: string, own: { mode?: string; owner?: string; group?: string } = {}): void {
    const parts = path.split('/').filter(Boolean);
    let current = '';
    for (const part of parts) {
      current += `/${part}`;
      if (!this.nodes.has(current)) {
        const last = current === path;
        this.nodes.set(current, {
          type: 'dir',
          mode: last ? (own.mode ?? '755') : '755',
          owner: last ? (own.owner ?? 'root') : 'root',
          group: last ? (own.group ?? 'root') : 'root',
        });
      }
    }
  }

  /** Paths at or below path. */
  subtree(path: string): string[] {
    return [...this.nodes.keys()].filter((p) => p === path || p.startsWith(`${path}/`));
  }

  remove(path: string, recursive: boolean): void {
    for (const p of recursive ? this.subtree(path) : [path]) this.nodes.delete(p);
  }

  rename(from: string, to: string): boolean {
    if (!this.nodes.has(from)) return false;
    const moved = this.subtree(from);
    this.remove(to, true);
    for (const p of moved) {
      this.nodes.set(to + p.slice(from.length), this.nodes.get(p)!);
      this.nodes.delete(p);
    }
    return true;
  }

  copyTree(from: string, to: string): void {
    for (const p of this.subtree(from)) {
      if (p === from) continue;
      this.nodes.set(to + p.slice(from.length), structuredClone(this.nodes.get(p)!));
    }
  }

  snapshot(filter: (path: string) => boolean = () => true): Record<string, FsNode> {
    return Object.fromEntries(
      [...this.nodes.entries()]
        .filter(([p]) => filter(p))
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([p, n]) => [p, structuredClone(n)]),
    );
  }
}

export function parent(path: string): string {
  const index = path.lastIndexOf('/');
  return index <= 0 ? '/' : path.slice(0, index);
}

function normalise(path: string): string {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}

/**
 * Real git repositories for the `git` provider's tests, made in a temporary directory with one
 * `git fast-import` run each (250 branches in one process), HEAD pointed at a branch that is not
 * `main` with `git symbolic-ref`. Laid out `<root>/<owner>/<repo>.git` so `git daemon` and
 * `git http-backend` can serve the same root.
 */
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface GitFixtureRepo {
  /** `<owner>/<repo>` as the provider names it. */
  name: string;
  /** Path below the root: `acme/monorepo.git`. */
  relativePath: string;
  head: string;
  branches: { name: string; commit: string }[];
}

export const GIT_BIG_BRANCHES = 250;

export async function createGitRepos(root: string): Promise<GitFixtureRepo[]> {
  const specs = [
    {
      relativePath: 'acme/monorepo.git',
      head: 'trunk',
      extra: Array.from({ length: GIT_BIG_BRANCHES - 1 }, (_, i) => `feature/f-${String(i).padStart(3, '0')}`),
    },
    { relativePath: 'acme/api.git', head: 'main', extra: ['develop'] },
    { relativePath: 'octo-org/site.git', head: 'develop', extra: ['main'] },
  ];
  const repos: GitFixtureRepo[] = [];
  for (const spec of specs) {
    const dir = join(root, spec.relativePath);
    await mkdir(dir, { recursive: true });
    await git(['init', '--quiet', '--bare', dir]);
    await git(['--git-dir', dir, 'fast-import', '--quiet'], fastImportStream(spec.head, spec.extra));
    await git(['--git-dir', dir, 'symbolic-ref', 'HEAD', `refs/heads/${spec.head}`]);
    const { stdout } = await run('git', [
      '--git-dir',
      dir,
      'for-each-ref',
      '--format=%(objectname) %(refname:lstrip=2)',
      'refs/heads',
    ]);
    const branches = stdout
      .trim()
      .split('\n')
      .map((line) => {
        const [commit = '', name = ''] = line.split(' ');
        return { name, commit };
      });
    repos.push({ name: spec.relativePath.replace(/\.git$/, ''), relativePath: spec.relativePath, head: spec.head, branches });
  }
  return repos;
}

/** A root commit on `head`, then one commit per extra branch on top of it, each distinct. */
function fastImportStream(head: string, extra: string[]): string {
  const commit = (ref: string, mark: number, message: string, from?: number) =>
    [
      `commit refs/heads/${ref}`,
      `mark :${mark}`,
      `committer Siteplane Test <test@siteplane.invalid> ${1_700_000_000 + mark} +0000`,
      `data ${Buffer.byteLength(message)}`,
      message,
      ...(from ? [`from :${from}`] : []),
      `M 644 inline README`,
      `data ${Buffer.byteLength(`${ref}\n`)}`,
      `${ref}`,
      '',
    ].join('\n');
  return [commit(head, 1, `start ${head}`), ...extra.map((ref, i) => commit(ref, i + 2, `work on ${ref}`, 1))].join('\n');
}

function git(args: string[], input?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile('git', args, (error) => (error ? reject(error) : resolve()));
    if (input !== undefined) child.stdin?.end(input);
  });
}

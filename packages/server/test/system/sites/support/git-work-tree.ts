import { mustRun } from './host.js';

/**
 * Writes files into a git work tree on this machine (the deploy suites' "developer"), commits them
 * and pushes `branch` (main) to the bare repository `remote`; returns the new commit's sha.
 */
export async function commitAndPush(
  dir: string,
  remote: string,
  files: Record<string, string>,
  message: string,
  branch = 'main',
): Promise<string> {
  for (const [path, content] of Object.entries(files)) {
    await mustRun('sh', ['-c', 'mkdir -p "$(dirname "$1")" && cat > "$1"', 'sh', `${dir}/${path}`], { input: content });
  }
  const git = (...args: string[]) =>
    mustRun('git', ['-C', dir, '-c', 'user.name=Ada Tester', '-c', 'user.email=ada@example.test', ...args]);
  await git('add', '-A');
  await git('commit', '-q', '-m', message);
  await git('push', '-q', remote, `HEAD:${branch}`);
  return (await git('rev-parse', 'HEAD')).stdout.trim();
}

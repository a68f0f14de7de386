import { createHash } from 'node:crypto';
import type { RunOptions } from '../executor.js';
import type { StepContext } from '../step.js';
import { AS_ROOT, mustRun, run } from './commands.js';

/**
 * File operations on the server, all argv (no shell). Contents travel on stdin to `install`, never
 * through echo or an argument. Probes answer "absent" on empty output, so a dry-run executor shows
 * the commands a bare server would get. The writers here run as root and are for root's own trees
 * (/etc, /usr/local, /var/lib/siteplane); a site user's tree is written through user-files.ts, and
 * the probes take `{ asUser }` there.
 */
export type PathKind = 'file' | 'directory' | 'symlink' | 'other';

export interface Ownership {
  owner: string;
  group: string;
  mode: string;
}

export const ROOT_FILE: Ownership = { owner: 'root', group: 'root', mode: '0644' };

export function sha256(content: string): string {
  return createHash('sha256').update(content, 'utf8').digest('hex');
}

/** What is at path (symlinks not followed), or null when nothing is. */
export async function pathKind(ctx: StepContext, path: string, options: RunOptions = AS_ROOT): Promise<PathKind | null> {
  const result = await run(ctx, ['stat', '-c', '%F', '--', path], options);
  const kind = result.code === 0 ? result.stdout.trim() : '';
  if (kind === '') return null;
  if (kind === 'directory') return 'directory';
  if (kind === 'symbolic link') return 'symlink';
  if (kind.startsWith('regular')) return 'file';
  return 'other';
}

/** sha256 of the file's content, or null when it does not exist. */
export async function fileHash(ctx: StepContext, path: string, options: RunOptions = AS_ROOT): Promise<string | null> {
  const result = await run(ctx, ['sha256sum', '--', path], options);
  const hash = /^([0-9a-f]{64})\s/.exec(result.stdout)?.[1];
  return result.code === 0 && hash ? hash : null;
}

export async function readFile(ctx: StepContext, path: string, options: RunOptions = AS_ROOT): Promise<string | null> {
  const result = await run(ctx, ['cat', '--', path], options);
  return result.code === 0 ? result.stdout : null;
}

/** Where a symlink points, or null when path is not a symlink. */
export async function linkTarget(ctx: StepContext, path: string, options: RunOptions = AS_ROOT): Promise<string | null> {
  const result = await run(ctx, ['readlink', '--', path], options);
  const target = result.stdout.replace(/\n$/, '');
  return result.code === 0 && target !== '' ? target : null;
}

/**
 * Writes content to path with the given owner and mode: `install` creates the file empty with
 * them, then `dd` copies stdin into it (keeping owner and mode). Not `install /dev/stdin`: when
 * the executor's stdin is a socket (Node's child processes), /dev/stdin cannot be opened.
 */
export async function writeFile(ctx: StepContext, path: string, content: string, own: Ownership): Promise<void> {
  await mustRun(ctx, ['install', '-m', own.mode, '-o', own.owner, '-g', own.group, '/dev/null', path], AS_ROOT, `create ${path}`);
  await mustRun(ctx, ['dd', `of=${path}`, 'status=none'], { ...AS_ROOT, stdin: content }, `write ${path}`);
}

export function makeDirectory(ctx: StepContext, path: string, own: Ownership): Promise<void> {
  return makeDirectories(ctx, [path], own);
}

/** Several directories (parents before children) with the same owner and mode, in one command. */
export async function makeDirectories(ctx: StepContext, paths: readonly string[], own: Ownership): Promise<void> {
  await mustRun(
    ctx,
    ['install', '-d', '-m', own.mode, '-o', own.owner, '-g', own.group, ...paths],
    AS_ROOT,
    `create ${paths.join(' ')}`,
  );
}

/** rename(2): atomic on one file system; -T so an existing directory at `to` is never entered. */
export async function moveInto(ctx: StepContext, from: string, to: string): Promise<void> {
  await mustRun(ctx, ['mv', '-f', '-T', '--', from, to], AS_ROOT, `move ${from} to ${to}`);
}

export async function removeFile(ctx: StepContext, path: string): Promise<void> {
  await mustRun(ctx, ['rm', '-f', '--', path], AS_ROOT, `remove ${path}`);
}

/** Creates a symlink where nothing is yet (a fresh directory), owned by owner. */
export async function newLink(ctx: StepContext, link: string, target: string, owner: string): Promise<void> {
  await mustRun(ctx, ['ln', '-s', '-f', '-n', '--', target, link], AS_ROOT, `link ${link}`);
  await mustRun(ctx, ['chown', '-h', `${owner}:${owner}`, '--', link], AS_ROOT, `own ${link}`);
}

/** Points link at target, replacing an existing link atomically (a temporary link renamed over it). */
export async function pointLink(ctx: StepContext, link: string, target: string, owner?: string): Promise<void> {
  const temporary = `${link}.siteplane-new`;
  await mustRun(ctx, ['ln', '-s', '-f', '-n', '--', target, temporary], AS_ROOT, `link ${link}`);
  if (owner) await mustRun(ctx, ['chown', '-h', `${owner}:${owner}`, '--', temporary], AS_ROOT, `own ${link}`);
  await moveInto(ctx, temporary, link);
}

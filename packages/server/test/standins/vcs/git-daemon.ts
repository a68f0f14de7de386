/**
 * `git daemon` serving a directory on 127.0.0.1 at a free port (git://), started as a child of the
 * test and stopped by its PID. `--informative-errors` makes it say "no such repository" the way a
 * hosting daemon would, instead of just hanging up.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { closedPort } from './standin-server.js';

export interface GitDaemon {
  /** `git://127.0.0.1:<port>` */
  origin: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startGitDaemon(root: string): Promise<GitDaemon> {
  const port = await closedPort();
  const child = spawn(
    'git',
    [
      'daemon',
      '--reuseaddr',
      '--export-all',
      '--informative-errors',
      `--base-path=${root}`,
      '--listen=127.0.0.1',
      `--port=${port}`,
      root,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  if (child.pid === undefined) throw new Error('git daemon did not start');
  await waitForPort(port, child, () => stderr);
  return { origin: `git://127.0.0.1:${port}`, pid: child.pid, stop: () => stopChild(child) };
}

async function waitForPort(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`git daemon exited: ${stderr()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`git daemon did not listen on ${port}: ${stderr()}`);
}

/** SIGTERM to this child's PID (never by name), waiting for it to exit. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid, 'SIGTERM');
  await exited;
}

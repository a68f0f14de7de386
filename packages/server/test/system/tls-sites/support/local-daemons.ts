import { readFile } from 'node:fs/promises';

/**
 * The TLS site suites manage this machine itself (`connection: "local"`, with Pebble and the DNS
 * stand-ins beside it): nginx is started by the sites' own steps (no systemd here). The suite notes
 * whether nginx and php-fpm ran before it and stops, by the pid in their pid files, those it caused
 * to start.
 */
const NGINX_PID_FILE = '/run/nginx.pid';
const FPM_PID_FILE = '/run/php/php8.2-fpm.pid';

async function livePid(pidFile: string): Promise<number | null> {
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
  if (!(pid > 1)) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

export async function daemonsBefore(): Promise<{ nginx: number | null; fpm: number | null }> {
  return { nginx: await livePid(NGINX_PID_FILE), fpm: await livePid(FPM_PID_FILE) };
}

export async function stopDaemonsStartedSince(before: { nginx: number | null; fpm: number | null }): Promise<void> {
  for (const [file, was] of [
    [NGINX_PID_FILE, before.nginx],
    [FPM_PID_FILE, before.fpm],
  ] as const) {
    const pid = await livePid(file);
    if (pid === null || pid === was) continue;
    process.kill(pid, 'SIGQUIT');
    for (let i = 0; i < 50 && (await livePid(file)) === pid; i++) await new Promise((r) => setTimeout(r, 100));
  }
}

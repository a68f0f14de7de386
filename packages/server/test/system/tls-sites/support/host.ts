/**
 * This machine as the sites' server: nginx is started by the sites' own steps (no systemd here),
 * so the suite notes whether it ran before and stops it only if the suite caused it to start.
 */
import { existsSync, readFileSync } from 'node:fs';

export const NGINX_PID_FILE = '/run/nginx.pid';

export function nginxPid(): number | null {
  if (!existsSync(NGINX_PID_FILE)) return null;
  const pid = Number(readFileSync(NGINX_PID_FILE, 'utf8').trim());
  if (!(pid > 1)) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

export async function stopNginxIfStartedSince(before: number | null): Promise<void> {
  const pid = nginxPid();
  if (pid === null || pid === before) return;
  process.kill(pid, 'SIGQUIT');
  for (let i = 0; i < 50 && nginxPid() === pid; i++) await new Promise((r) => setTimeout(r, 100));
}

/** Root is needed: nginx on 80/443, system users, /etc. */
export function requireRoot(): void {
  if (process.getuid?.() !== 0) throw new Error('the TLS site tests run as root (nginx on 80/443, system users)');
}

import type { ProvisionedSite } from '../../../src/provisioning/step.js';
import type { Call, FakeServer } from './fake-server.js';

/**
 * Everything on the fake server that belongs to one site: its files, vhost, pool, ACME directory,
 * logs, PM2 process, database and database user. Deletion must bring this back to empty.
 */
export function siteFootprint(server: FakeServer, site: ProvisionedSite) {
  const root = `/home/${site.user}/${site.domain}`;
  const paths = [...server.fs.nodes.keys()].filter(
    (p) =>
      p === root ||
      p.startsWith(`${root}/`) ||
      p.startsWith(`/etc/nginx/sites-available/${site.domain}.conf`) ||
      p.startsWith(`/etc/nginx/sites-enabled/${site.domain}.conf`) ||
      p.startsWith(`/var/log/nginx/${site.domain}.`) ||
      p.startsWith(`/var/lib/siteplane/acme/${site.domain}`) ||
      /^\/etc\/php\/[\d.]+\/fpm\/pool\.d\/alice\.conf/.test(p),
  );
  const db = site.database;
  return {
    paths: paths.sort(),
    pm2: [...(server.pm2.get(site.user)?.keys() ?? [])].filter((name) => name === site.domain),
    /** The user's PM2 daemon: shared by their Node sites, so with one site it is that site's. */
    pm2Daemon: server.running.has(`pm2:${site.user}`),
    databases: db?.name
      ? [...server.mysql.databases, ...server.postgres.databases.keys()].filter((name) => name === db.name)
      : [],
    // One entry per user, however many hosts (localhost, 127.0.0.1) it has accounts for.
    databaseUsers: db
      ? [...new Set([...[...server.mysql.accounts.keys()].map((k) => k.split('@')[0]), ...server.postgres.roles.keys()])].filter(
          (u) => u === db.user,
        )
      : [],
  };
}

/** Commands that change the server (as opposed to probes that only read it). */
export function isChange(call: Call): boolean {
  const [cmd = '', ...args] = call.argv;
  if (
    [
      'install',
      'mkdir',
      'dd',
      'mv',
      'cp',
      'rm',
      'ln',
      'chown',
      'chmod',
      'chgrp',
      'useradd',
      'apt-get',
      'curl',
      'tar',
      'systemctl',
      'npm',
      'node',
    ].includes(cmd)
  )
    return true;
  if (cmd.startsWith('/etc/init.d/')) return true;
  if (cmd === 'kill') return args[0] !== '-0';
  if (cmd === 'nginx' || cmd.startsWith('php-fpm')) return args[0] !== '-t';
  if (cmd === 'pm2') return args[0] !== 'jlist';
  if (cmd === 'mysql' || cmd === 'psql') return /\b(CREATE|GRANT|DROP|REVOKE|ALTER)\b/.test(call.options.stdin ?? '');
  return false;
}

export function describeCall(call: Call): string {
  return call.argv.join(' ');
}

import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SITE_TYPE_IDS } from '@siteplane/contract';
import { describe, expect, it } from 'vitest';
import { serverNames, vhostBackend } from '../../src/provisioning/steps/vhost-backend.js';
import { renderNginxVhost } from '../../src/provisioning/templates/nginx-vhost.js';
import { renderFpmPool } from '../../src/provisioning/templates/php-fpm-pool.js';
import { renderPhpMyAdminConfig } from '../../src/provisioning/templates/phpmyadmin-config.js';
import { renderWpConfig } from '../../src/provisioning/templates/wp-config.js';
import { renderWpInstallScript } from '../../src/provisioning/templates/wp-install-script.js';
import { HOSTILE_VALUES } from './support/hostile.js';
import { siteOf } from './support/sites.js';

/**
 * The rendered files checked by the real programs, where this machine has them (Debian's nginx,
 * php8.2-fpm and php8.2-cli): `nginx -t`, `php-fpm8.2 -t`, `php -l`, and PHP reading back the
 * escaped passwords. The system tests run the whole recipes on a real server later.
 */
const has = (path: string) => existsSync(path);
const work = mkdtempSync(join(tmpdir(), 'siteplane-config-'));

describe.skipIf(!has('/usr/sbin/nginx'))('rendered vhosts under the real nginx -t', () => {
  it('accepts the vhost of every site type, with and without TLS', () => {
    const sites = join(work, 'sites');
    mkdirSync(sites, { recursive: true });
    copyFileSync('/etc/nginx/fastcgi_params', join(work, 'fastcgi_params'));
    const cert = spawnSync('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=test',
      '-days',
      '1',
      '-keyout',
      join(work, 'key.pem'),
      '-out',
      join(work, 'cert.pem'),
    ]);
    expect(cert.status).toBe(0);
    for (const type of SITE_TYPE_IDS) {
      const site = siteOf(type, {
        domain: `${type}.an-unusually-long-subdomain-name-for-the-hash-bucket.example.com`,
        ssl: { enabled: true, provider: null, wildcard: true, includeWww: true },
      });
      for (const tls of [false, true]) {
        const text = renderNginxVhost({
          serverNames: serverNames(site),
          acmeRoot: `/var/lib/siteplane/acme/${site.domain}`,
          accessLog: join(work, `${type}.access.log`),
          errorLog: join(work, `${type}.error.log`),
          backend: vhostBackend(site),
          ...(tls ? { tls: { certificate: join(work, 'cert.pem'), key: join(work, 'key.pem') } } : {}),
        });
        writeFileSync(join(sites, `${type}${tls ? '-tls' : ''}.conf`), text);
      }
    }
    writeFileSync(
      join(work, 'nginx.conf'),
      `pid ${work}/nginx.pid;\nerror_log ${work}/error.log;\nevents {}\nhttp {\n  include /etc/nginx/mime.types;\n  server_names_hash_bucket_size 256;\n  include ${sites}/*.conf;\n}\n`,
    );
    const result = spawnSync('/usr/sbin/nginx', ['-t', '-p', work, '-c', join(work, 'nginx.conf')], { encoding: 'utf8' });
    expect(result.stderr).toContain('test is successful');
  });
});

describe.skipIf(!has('/usr/sbin/php-fpm8.2'))('the rendered pool under the real php-fpm -t', () => {
  it('is a valid pool', () => {
    const pools = join(work, 'pool.d');
    mkdirSync(pools, { recursive: true });
    writeFileSync(
      join(pools, 'www-data.conf'),
      renderFpmPool({
        user: 'www-data',
        phpVersion: '8.2',
        socket: join(work, 'fpm.sock'),
        home: work,
        tmpDir: join(work, 'tmp'),
        sessionDir: join(work, 'sessions'),
      }),
    );
    writeFileSync(
      join(work, 'php-fpm.conf'),
      `[global]\npid = ${work}/fpm.pid\nerror_log = ${work}/fpm.log\ninclude = ${pools}/*.conf\n`,
    );
    const result = spawnSync('/usr/sbin/php-fpm8.2', ['-t', '--fpm-config', join(work, 'php-fpm.conf')], { encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`).toContain('test is successful');
  });
});

describe.skipIf(!has('/usr/bin/php8.2'))('rendered PHP files under the real php', () => {
  const php = (code: string) => spawnSync('/usr/bin/php8.2', ['-d', 'display_errors=stderr'], { input: code, encoding: 'utf8' });

  it.each(HOSTILE_VALUES)('wp-config.php gives WordPress the password %j unchanged', (password) => {
    const file = join(work, 'wp-config.php');
    // Without wp-settings.php the config stops at its require; read the constants before that.
    writeFileSync(
      file,
      renderWpConfig({ database: 'db', user: 'u', password, host: 'localhost' }).replace(
        "require_once ABSPATH . 'wp-settings.php';",
        '',
      ),
    );
    const result = php(`<?php require ${JSON.stringify(file)}; echo bin2hex(DB_PASSWORD);`);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(Buffer.from(password, 'utf8').toString('hex'));
  });

  it.each(HOSTILE_VALUES)('config.inc.php gives phpMyAdmin the control password %j unchanged', (password) => {
    const file = join(work, 'config.inc.php');
    writeFileSync(file, renderPhpMyAdminConfig({ controlUser: 'phpmyadmin', controlPassword: password, tempDir: '/tmp' }));
    const result = php(
      `<?php require ${JSON.stringify(file)}; echo bin2hex($cfg['Servers'][1]['controlpass']), ' ', strlen($cfg['blowfish_secret']);`,
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`${Buffer.from(password, 'utf8').toString('hex')} 32`);
  });

  it('the WordPress installer script is valid PHP and carries its data intact', () => {
    const script = renderWpInstallScript({
      root: '/nonexistent',
      siteUrl: 'https://blog.example.com',
      host: 'blog.example.com',
      title: HOSTILE_VALUES.join(' '),
      adminUser: 'admin',
      adminEmail: 'a@example.com',
      adminPassword: HOSTILE_VALUES.join(''),
    });
    const lint = spawnSync('/usr/bin/php8.2', ['-l'], { input: script, encoding: 'utf8' });
    expect(lint.stdout).toContain('No syntax errors');
    const data = php(script.replace(/\$_SERVER\['HTTP_HOST'\][\s\S]*/, "echo bin2hex($data['adminPassword']);"));
    expect(data.stdout).toBe(Buffer.from(HOSTILE_VALUES.join(''), 'utf8').toString('hex'));
  });
});

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SITE_TYPE_IDS } from '@siteplane/contract';
import { expect } from 'vitest';
import { serverNames, vhostBackend } from '../../../src/provisioning/steps/vhost-backend.js';
import { renderNginxVhost } from '../../../src/provisioning/templates/nginx-vhost.js';
import { renderFpmPool } from '../../../src/provisioning/templates/php-fpm-pool.js';
import { renderPhpMyAdminConfig } from '../../../src/provisioning/templates/phpmyadmin-config.js';
import { renderWpConfig } from '../../../src/provisioning/templates/wp-config.js';
import { renderWpInstallScript } from '../../../src/provisioning/templates/wp-install-script.js';
import { makeTestCa } from '../../tls/fake-ca.js';
import { HOSTILE_VALUES } from './hostile.js';
import { siteOf } from './sites.js';

/**
 * The files Siteplane renders, checked by the real programs: `nginx -t` on every type's vhost,
 * `php-fpm -t` on a pool, `php -l` and PHP reading back hostile passwords. The same checks run on
 * this machine where it has the programs (real-config.test.ts) and on the pristine test host once
 * Siteplane has installed them there (fresh/site-types.test.ts): CI's machine has neither nginx
 * nor PHP, on purpose (only the test hosts get what a site needs, and only from Siteplane).
 */
export interface ConfigMachine {
  /** A fresh directory: its path for the programs (`there`) and for this process to write (`here`). */
  workDir(): { there: string; here: string };
  /** Runs a program there, argv only, with `input` on its standard input. */
  run(command: string, args: readonly string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }>;
}

/** This machine. */
export const thisMachine: ConfigMachine = {
  workDir() {
    const dir = mkdtempSync(join(tmpdir(), 'siteplane-config-'));
    return { there: dir, here: dir };
  },
  async run(command, args, input) {
    const result = spawnSync(command, [...args], { input: input ?? '', encoding: 'utf8' });
    return { code: result.status ?? 1, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
  },
};

/** Runs `check` in a fresh work directory of `machine`, removed afterwards. */
async function inWorkDir(machine: ConfigMachine, check: (work: { there: string; here: string }) => Promise<void>) {
  const work = machine.workDir();
  try {
    await check(work);
  } finally {
    rmSync(work.here, { recursive: true, force: true });
  }
}

/** Every type's vhost, with and without TLS, under `nginx -t` with Debian's fastcgi_params and mime.types. */
export function checkVhostsUnderNginx(machine: ConfigMachine, nginx = '/usr/sbin/nginx'): Promise<void> {
  return inWorkDir(machine, async (work) => {
    mkdirSync(join(work.here, 'sites'));
    // Any certificate with its key will do for `nginx -t`: the transport tests' throw-away one, made here.
    const pair = makeTestCa();
    writeFileSync(join(work.here, 'cert.pem'), pair.certPem);
    writeFileSync(join(work.here, 'key.pem'), pair.keyPem);
    // The vhosts include `fastcgi_params` relative to nginx's configuration directory (-c's).
    const copied = await machine.run('cp', ['--', '/etc/nginx/fastcgi_params', join(work.there, 'fastcgi_params')]);
    expect(copied.code, copied.stderr).toBe(0);
    for (const type of SITE_TYPE_IDS) {
      const site = siteOf(type, {
        domain: `${type}.an-unusually-long-subdomain-name-for-the-hash-bucket.example.com`,
        ssl: { enabled: true, provider: null, wildcard: true, includeWww: true },
      });
      for (const tls of [false, true]) {
        const text = renderNginxVhost({
          serverNames: serverNames(site),
          acmeRoot: `/var/lib/siteplane/acme/${site.domain}`,
          accessLog: join(work.there, `${type}.access.log`),
          errorLog: join(work.there, `${type}.error.log`),
          backend: vhostBackend(site),
          ...(tls ? { tls: { certificate: join(work.there, 'cert.pem'), key: join(work.there, 'key.pem') } } : {}),
        });
        writeFileSync(join(work.here, 'sites', `${type}${tls ? '-tls' : ''}.conf`), text);
      }
    }
    writeFileSync(
      join(work.here, 'nginx.conf'),
      `pid ${work.there}/nginx.pid;\nerror_log ${work.there}/error.log;\nevents {}\nhttp {\n  include /etc/nginx/mime.types;\n  server_names_hash_bucket_size 256;\n  include ${work.there}/sites/*.conf;\n}\n`,
    );
    const result = await machine.run(nginx, ['-t', '-p', work.there, '-c', join(work.there, 'nginx.conf')]);
    expect(result.stderr).toContain('test is successful');
  });
}

/** The site user's pool under `php-fpm -t`. */
export function checkPoolUnderFpm(machine: ConfigMachine, phpVersion = '8.2'): Promise<void> {
  return inWorkDir(machine, async (work) => {
    mkdirSync(join(work.here, 'pool.d'));
    writeFileSync(
      join(work.here, 'pool.d', 'www-data.conf'),
      renderFpmPool({
        user: 'www-data',
        phpVersion,
        socket: join(work.there, 'fpm.sock'),
        home: work.there,
        tmpDir: join(work.there, 'tmp'),
        sessionDir: join(work.there, 'sessions'),
      }),
    );
    writeFileSync(
      join(work.here, 'php-fpm.conf'),
      `[global]\npid = ${work.there}/fpm.pid\nerror_log = ${work.there}/fpm.log\ninclude = ${work.there}/pool.d/*.conf\n`,
    );
    const result = await machine.run(`/usr/sbin/php-fpm${phpVersion}`, ['-t', '--fpm-config', join(work.there, 'php-fpm.conf')]);
    expect(`${result.stdout}${result.stderr}`).toContain('test is successful');
  });
}

const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');

/** PHP run with `code` on its standard input, errors on stderr. */
function php(machine: ConfigMachine, phpVersion: string, code: string) {
  return machine.run(`/usr/bin/php${phpVersion}`, ['-d', 'display_errors=stderr'], code);
}

/** wp-config.php gives WordPress `password` unchanged. */
export function checkWpConfigPassword(machine: ConfigMachine, password: string, phpVersion = '8.2'): Promise<void> {
  return inWorkDir(machine, async (work) => {
    // Without wp-settings.php the config stops at its require; read the constants before that.
    const config = renderWpConfig({ database: 'db', user: 'u', password, host: 'localhost' });
    writeFileSync(join(work.here, 'wp-config.php'), config.replace("require_once ABSPATH . 'wp-settings.php';", ''));
    const result = await php(
      machine,
      phpVersion,
      `<?php require ${JSON.stringify(join(work.there, 'wp-config.php'))}; echo bin2hex(DB_PASSWORD);`,
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(hex(password));
  });
}

/** config.inc.php gives phpMyAdmin the control password unchanged, and a 32-byte blowfish secret. */
export function checkPhpMyAdminPassword(machine: ConfigMachine, password: string, phpVersion = '8.2'): Promise<void> {
  return inWorkDir(machine, async (work) => {
    writeFileSync(
      join(work.here, 'config.inc.php'),
      renderPhpMyAdminConfig({ controlUser: 'phpmyadmin', controlPassword: password, tempDir: '/tmp' }),
    );
    const result = await php(
      machine,
      phpVersion,
      `<?php require ${JSON.stringify(join(work.there, 'config.inc.php'))}; echo bin2hex($cfg['Servers'][1]['controlpass']), ' ', strlen($cfg['blowfish_secret']);`,
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`${hex(password)} 32`);
  });
}

/** The WordPress installer script is valid PHP and carries hostile data intact. */
export async function checkWpInstallScript(machine: ConfigMachine, phpVersion = '8.2'): Promise<void> {
  const script = renderWpInstallScript({
    root: '/nonexistent',
    siteUrl: 'https://blog.example.com',
    host: 'blog.example.com',
    title: HOSTILE_VALUES.join(' '),
    adminUser: 'admin',
    adminEmail: 'a@example.com',
    adminPassword: HOSTILE_VALUES.join(''),
  });
  const lint = await machine.run(`/usr/bin/php${phpVersion}`, ['-l'], script);
  expect(lint.stdout).toContain('No syntax errors');
  const data = await php(
    machine,
    phpVersion,
    script.replace(/\$_SERVER\['HTTP_HOST'\][\s\S]*/, "echo bin2hex($data['adminPassword']);"),
  );
  expect(data.stdout).toBe(hex(HOSTILE_VALUES.join('')));
}

/** Every check above, for every hostile value, in one call (the test host runs them as one test). */
export async function checkEveryRenderedConfig(machine: ConfigMachine, phpVersion: string): Promise<void> {
  await checkVhostsUnderNginx(machine);
  await checkPoolUnderFpm(machine, phpVersion);
  for (const password of HOSTILE_VALUES) {
    await checkWpConfigPassword(machine, password, phpVersion);
    await checkPhpMyAdminPassword(machine, password, phpVersion);
  }
  await checkWpInstallScript(machine, phpVersion);
}

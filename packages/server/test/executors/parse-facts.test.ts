import { describe, expect, it } from 'vitest';
import { parseFacts } from '../../src/provisioning/detect-facts.js';

// Pure parsing of captured FACTS_SCRIPT outputs; needs no system (kept here because this folder is
// where the executor work lives; it runs with the system tests).
const section = (name: string, ...lines: string[]) => `\n@@siteplane:${name}\n${lines.join('\n')}\n`;
const output = (...sections: string[]) => `${sections.join('')}\n@@siteplane:end\n`;

// Captured on this machine kind (Debian 12) by running FACTS_SCRIPT.
const DEBIAN_12 =
  '\n@@siteplane:os\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\nHOME_URL="https://www.debian.org/"\nSUPPORT_URL="https://www.debian.org/support"\nBUG_REPORT_URL="https://bugs.debian.org/"\n\n@@siteplane:arch\nx86_64\n\n@@siteplane:php\n/usr/bin/php8.2\n/usr/sbin/php-fpm8.2\n\n@@siteplane:node\nv20.20.2\n\n@@siteplane:mysql\nmariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n\n@@siteplane:postgresql\n15 main 5432 online postgres /var/lib/postgresql/15/main /var/log/postgresql/postgresql-15-main.log\n/usr/lib/postgresql/15/bin/postgres\npostgres (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)\n\n@@siteplane:nginx\nnginx version: nginx/1.22.1\n\n@@siteplane:pm2\n\n@@siteplane:end\n';

describe('parseFacts', () => {
  it('reads a Debian 12 server with nginx, PHP 8.2, MariaDB 10.11 and PostgreSQL 15', () => {
    expect(parseFacts(DEBIAN_12)).toEqual({
      os: 'debian 12',
      arch: 'x86_64',
      php: ['8.2'],
      node: '20.20.2',
      mysql: 'mariadb1011',
      postgresql: 'postgresql15',
      nginx: '1.22.1',
      pm2: null,
    });
  });

  it('reads an Ubuntu 22.04 server with two PHP versions, MySQL 8.0, PostgreSQL 14 online and pm2', () => {
    const facts = parseFacts(
      output(
        section('os', 'NAME="Ubuntu"', 'VERSION_ID="22.04"', 'ID=ubuntu', 'ID_LIKE=debian', 'PRETTY_NAME="Ubuntu 22.04.4 LTS"'),
        section('arch', 'aarch64'),
        section('php', '/usr/bin/php8.1', '/usr/bin/php8.3', '/usr/sbin/php-fpm8.1', '/usr/sbin/php-fpm8.3'),
        section('node', 'v18.19.1'),
        section('mysql', '/usr/sbin/mysqld  Ver 8.0.36-0ubuntu0.22.04.1 for Linux on aarch64 ((Ubuntu))'),
        section(
          'postgresql',
          '12 main 5433 down   postgres /var/lib/postgresql/12/main /var/log/postgresql/postgresql-12-main.log',
          '14 main 5432 online postgres /var/lib/postgresql/14/main /var/log/postgresql/postgresql-14-main.log',
          '/usr/lib/postgresql/12/bin/postgres',
          '/usr/lib/postgresql/14/bin/postgres',
        ),
        section('nginx', 'nginx version: nginx/1.18.0 (Ubuntu)'),
        section('pm2', '  "version": "5.3.1",'),
      ),
    );
    expect(facts).toEqual({
      os: 'ubuntu 22.04',
      arch: 'aarch64',
      php: ['8.3', '8.1'],
      node: '18.19.1',
      mysql: 'mysql80',
      postgresql: 'postgresql14',
      nginx: '1.18.0',
      pm2: '5.3.1',
    });
  });

  it('reads a RHEL-like layout: unversioned php, MySQL community server, /usr/pgsql-N', () => {
    const facts = parseFacts(
      output(
        section('os', 'NAME="Rocky Linux"', 'VERSION_ID="9.3"', 'ID="rocky"'),
        section('php', 'PHP 8.1.27 (cli) (built: Dec 19 2023 20:35:55) ( NTS gcc x86_64 )'),
        section('mysql', '/usr/sbin/mysqld  Ver 8.4.0 for Linux on x86_64 (MySQL Community Server - GPL)'),
        section('postgresql', '/usr/pgsql-16/bin/postgres'),
      ),
    );
    expect(facts).toMatchObject({ os: 'rocky 9.3', php: ['8.1'], mysql: 'mysql84', postgresql: 'postgresql16' });
  });

  it('reports nothing installed as nulls and an empty PHP list', () => {
    expect(parseFacts(output(section('os', 'PRETTY_NAME="Some Linux"'), section('arch', 'x86_64')))).toEqual({
      os: 'Some Linux',
      arch: 'x86_64',
      php: [],
      node: null,
      mysql: null,
      postgresql: null,
      nginx: null,
      pm2: null,
    });
  });

  it('ignores PHP versions the facts vocabulary does not have', () => {
    expect(parseFacts(output(section('php', '/usr/bin/php5.6', '/usr/bin/php7.4', '/usr/bin/php9.9'))).php).toEqual(['7.4']);
  });

  // Engines are named by their own version (DbEngine): the spec's §2.4 names where it has the
  // version, the same pattern where it has not, so §4.1 rule 5 never takes one version for another.
  it.each([
    ['mariadbd  Ver 11.8.3-MariaDB-0+deb13u1 from Debian -- for debian-linux-gnu on x86_64', 'mariadb118'],
    ['mariadbd  Ver 11.4.2-MariaDB-ubu2404 for debian-linux-gnu on x86_64', 'mariadb114'],
    ['mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for debian-linux-gnu', 'mariadb1011'],
    ['mariadbd  Ver 10.10.2-MariaDB for Linux', 'mariadb1010'],
    ['mariadbd  Ver 10.9.8-MariaDB for Linux', 'mariadb109'],
    ['mysqld  Ver 10.6.16-MariaDB-0ubuntu0.22.04.1 for debian-linux-gnu', 'mariadb106'],
    ['mysqld  Ver 10.5.23-MariaDB-0+deb11u1 for debian-linux-gnu', 'mariadb105'],
    ['mysqld  Ver 5.5.68-MariaDB for Linux', 'mariadb55'],
    ['/usr/sbin/mysqld  Ver 5.7.44 for Linux on x86_64 (MySQL Community Server (GPL))', 'mysql57'],
    ['/usr/sbin/mysqld  Ver 8.0.36-0ubuntu0.22.04.1 for Linux on x86_64', 'mysql80'],
    ['/usr/sbin/mysqld  Ver 8.2.0 for Linux on x86_64', 'mysql82'],
    ['/usr/sbin/mysqld  Ver 9.1.0 for Linux on x86_64', 'mysql91'],
  ])('names %s %s', (line, engine) => {
    expect(parseFacts(output(section('mysql', line))).mysql).toBe(engine);
  });

  it.each([
    ['11', 'postgresql11'],
    ['13', 'postgresql13'],
    ['16', 'postgresql16'],
    ['17', 'postgresql17'],
    ['18', 'postgresql18'],
  ])('names PostgreSQL %s %s', (major, engine) => {
    expect(parseFacts(output(section('postgresql', `/usr/lib/postgresql/${major}/bin/postgres`))).postgresql).toBe(engine);
  });

  it('prefers the newest online cluster over installed binaries', () => {
    const lines = [
      '17 main 5434 down postgres /x /y',
      '13 main 5432 online postgres /a /b',
      '/usr/lib/postgresql/17/bin/postgres',
    ];
    expect(parseFacts(output(section('postgresql', ...lines))).postgresql).toBe('postgresql13');
  });
});

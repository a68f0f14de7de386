import { describe, expect, it } from 'vitest';
import { vhostBackend } from '../../src/provisioning/steps/vhost-backend.js';
import { renderNginxVhost } from '../../src/provisioning/templates/nginx-vhost.js';
import { renderFpmPool } from '../../src/provisioning/templates/php-fpm-pool.js';
import { renderEcosystem } from '../../src/provisioning/templates/pm2-ecosystem.js';
import { siteOf } from './support/sites.js';

const common = {
  serverNames: ['shop.example.com'],
  acmeRoot: '/var/lib/siteplane/acme/shop.example.com',
  accessLog: '/var/log/nginx/shop.example.com.access.log',
  errorLog: '/var/log/nginx/shop.example.com.error.log',
};

describe('nginx vhost', () => {
  it('passes PHP to the user pool with root at current/public for Laravel', () => {
    const backend = vhostBackend(siteOf('laravel', { domain: 'shop.example.com' }));
    expect(renderNginxVhost({ ...common, backend })).toMatchInlineSnapshot(`
      "# Managed by Siteplane; changes here are overwritten.
      server {
          listen 80;
          listen [::]:80;
          server_name shop.example.com;
          access_log /var/log/nginx/shop.example.com.access.log;
          error_log /var/log/nginx/shop.example.com.error.log;
          disable_symlinks if_not_owner from=$document_root;

          location ^~ /.well-known/acme-challenge/ {
              root /var/lib/siteplane/acme/shop.example.com;
              default_type text/plain;
              try_files $uri =404;
          }

          root /home/alice/shop.example.com/current/public;
          index index.php index.html;
          client_max_body_size 64m;

          location ~ /\\.(?!well-known/) {
              deny all;
          }

          location / {
              try_files $uri $uri/ /index.php?$query_string;
          }

          location ~ \\.php$ {
              try_files $uri =404;
              include fastcgi_params;
              fastcgi_param SCRIPT_FILENAME $realpath_root$fastcgi_script_name;
              fastcgi_param DOCUMENT_ROOT $realpath_root;
              fastcgi_pass unix:/run/php/php8.3-fpm-alice.sock;
              fastcgi_read_timeout 300s;
          }
      }
      "
    `);
  });

  it('proxies Node, Generic Port and Soketi with WebSocket upgrade headers', () => {
    const soketi = renderNginxVhost({ ...common, backend: vhostBackend(siteOf('soketi')) });
    expect(soketi).toContain('proxy_pass http://127.0.0.1:6001;');
    expect(soketi).toContain('proxy_set_header Upgrade $http_upgrade;');
    expect(soketi).toContain('proxy_set_header Connection "upgrade";');
    expect(soketi).toContain('proxy_read_timeout 3600s;');
    const generic = renderNginxVhost({ ...common, backend: vhostBackend(siteOf('generic-port')) });
    expect(generic).toContain('proxy_pass http://127.0.0.1:8090;');
    expect(generic).toContain('proxy_read_timeout 60s;');
    expect(generic).not.toContain('fastcgi_pass');
  });

  it('with a stand-in (only while a deploy restarts a process in place): the site port first, the stand-in as its backup', () => {
    const backend = { kind: 'proxy' as const, port: 8090, longLived: false, standIn: 40123 };
    const vhost = renderNginxVhost({ ...common, backend });
    const name = /^upstream (siteplane_[0-9a-f]{16}) \{$/m.exec(vhost)?.[1];
    expect(vhost).toContain(
      `\nupstream ${name} {\n    server 127.0.0.1:8090 max_fails=0;\n    server 127.0.0.1:40123 backup max_fails=0;\n}\n`,
    );
    expect(vhost).toContain(`proxy_pass http://${name};`);
    // Before the server block (nginx wants upstream at http level), named after the domain.
    expect(vhost.indexOf('upstream')).toBeLessThan(vhost.indexOf('server {'));
    const other = renderNginxVhost({ ...common, serverNames: ['other.example.com'], backend });
    expect(/^upstream (\S+)/m.exec(other)?.[1]).not.toBe(name);
    expect(() => renderNginxVhost({ ...common, backend: { ...backend, standIn: 70000 } })).toThrow(/not a TCP port/);
  });

  it('serves static types from their directory', () => {
    const root = (site: ReturnType<typeof siteOf>) => {
      const backend = vhostBackend(site);
      return backend.kind === 'static' ? backend.root : backend.kind;
    };
    expect(root(siteOf('static-html'))).toBe('/home/alice/static-html.example.com/current/public_html');
    expect(root(siteOf('static-html', { options: {} }))).toBe('/home/alice/static-html.example.com/current');
    expect(root(siteOf('nodejs-static'))).toBe('/home/alice/nodejs-static.example.com/current/build/out');
    expect(root(siteOf('nuxt-static'))).toBe('/home/alice/nuxt-static.example.com/current/dist');
    expect(root(siteOf('nuxt-static', { options: { site_type_version: 3 } }))).toBe(
      '/home/alice/nuxt-static.example.com/current/.output/public',
    );
  });

  it('uses each PHP type its root and front controller', () => {
    const php = (type: Parameters<typeof siteOf>[0], options = {}) => {
      const site = siteOf(type, Object.keys(options).length ? { options } : {});
      return renderNginxVhost({ ...common, backend: vhostBackend(site) });
    };
    expect(php('wordpress')).toContain('root /home/alice/wordpress.example.com/current;');
    expect(php('wordpress')).toContain('try_files $uri $uri/ /index.php?$args;');
    expect(php('phpmyadmin')).toContain('try_files $uri $uri/ =404;');
    expect(php('php')).toContain('root /home/alice/php.example.com/current/web;');
    expect(php('laravel', { webDirectory: 'public_html' })).toContain(
      'root /home/alice/laravel.example.com/current/public_html;',
    );
    expect(php('php')).toContain('fastcgi_pass unix:/run/php/php8.2-fpm-alice.sock;');
  });

  it('always answers HTTP-01 challenges from the per-site directory, also behind TLS', () => {
    const backend = vhostBackend(siteOf('static-html'));
    const tls = renderNginxVhost({
      ...common,
      backend,
      tls: { certificate: '/etc/siteplane/certificates/shop/fullchain.pem', key: '/etc/siteplane/certificates/shop/key.pem' },
    });
    expect(
      tls.match(/location \^~ \/\.well-known\/acme-challenge\/ \{\n {8}root \/var\/lib\/siteplane\/acme\/shop\.example\.com;/g),
    ).toHaveLength(2);
    expect(tls).toContain('return 301 https://$host$request_uri;');
    expect(tls).toContain('listen 443 ssl;');
    expect(tls).toContain('ssl_certificate_key /etc/siteplane/certificates/shop/key.pem;');
  });

  it('refuses values that would change the configuration syntax', () => {
    for (const name of ['evil.com; include /etc/passwd', 'a.com{', 'x.com\n', '$host', 'a"b']) {
      expect(() =>
        renderNginxVhost({ ...common, serverNames: [name], backend: { kind: 'proxy', port: 3000, longLived: false } }),
      ).toThrow(/cannot be placed/);
    }
  });
});

describe('PHP-FPM pool', () => {
  const alice = {
    user: 'alice',
    phpVersion: '8.2',
    socket: '/run/php/php8.2-fpm-alice.sock',
    home: '/home/alice',
    tmpDir: '/home/alice/.siteplane/tmp',
    sessionDir: '/home/alice/.siteplane/sessions',
  };

  it("runs as the user behind a socket only nginx may open, confined to the user's home, temp and session directories", () => {
    expect(renderFpmPool(alice)).toMatchInlineSnapshot(`
      "; Managed by Siteplane: the PHP 8.2 pool of alice, shared by alice's PHP sites.
      [global]
      process_control_timeout = 10s

      [alice]
      user = alice
      group = alice
      listen = /run/php/php8.2-fpm-alice.sock
      listen.owner = www-data
      listen.group = www-data
      listen.mode = 0660
      pm = ondemand
      pm.max_children = 10
      pm.process_idle_timeout = 10s
      pm.max_requests = 500
      catch_workers_output = yes
      php_admin_flag[log_errors] = on
      php_admin_value[open_basedir] = /home/alice/:/usr/share/php/
      php_admin_value[sys_temp_dir] = /home/alice/.siteplane/tmp
      php_admin_value[upload_tmp_dir] = /home/alice/.siteplane/tmp
      php_admin_value[session.save_path] = /home/alice/.siteplane/sessions
      php_admin_value[session.gc_probability] = 1
      env[TMPDIR] = /home/alice/.siteplane/tmp
      "
    `);
  });

  it('refuses user names that could break out of the INI section', () => {
    expect(() => renderFpmPool({ ...alice, user: 'a]\n[evil' })).toThrow();
  });

  it('refuses paths that would add to open_basedir or break the INI line', () => {
    for (const home of ['/home/a:/', '/home/a b', '/home/a\nphp_admin_value[open_basedir] = /', '/home/"a']) {
      expect(() => renderFpmPool({ ...alice, home })).toThrow(/is not safe/);
    }
    expect(() => renderFpmPool({ ...alice, sessionDir: '/tmp:/var' })).toThrow(/is not safe/);
  });
});

describe('PM2 ecosystem', () => {
  it('runs the site in cluster mode named after the domain with cwd current and PORT, waiting for the new worker and the old one to finish', () => {
    const text = renderEcosystem({
      name: 'app.example.com',
      cwd: '/home/alice/app.example.com/current',
      script: 'server.js',
      port: 3001,
    });
    expect(text).toMatchInlineSnapshot(`
      "// Managed by Siteplane: the PM2 process of "app.example.com".
      module.exports = {
        "apps": [
          {
            "name": "app.example.com",
            "cwd": "/home/alice/app.example.com/current",
            "script": "server.js",
            "exec_mode": "cluster",
            "instances": 1,
            "autorestart": true,
            "listen_timeout": 30000,
            "kill_timeout": 10000,
            "kill_retry_time": 25,
            "pmx": false,
            "env": {
              "NODE_ENV": "production",
              "PORT": "3001"
            }
          }
        ]
      };
      "
    `);
  });

  it('keeps any value a JavaScript literal', () => {
    const text = renderEcosystem({
      name: 'x',
      cwd: '/c',
      script: 's.js',
      port: 1,
      env: { TRICK: "'}); require('child_process')//\n" },
    });
    const apps = new Function('module', `${text}; return module.exports;`)({ exports: {} }) as {
      apps: { env: Record<string, string> }[];
    };
    expect(apps.apps[0]?.env.TRICK).toBe("'}); require('child_process')//\n");
  });

  it('fork mode (Generic Port: one process PM2 restarts in place), PORT the site’s', () => {
    const text = renderEcosystem({ name: 'p', cwd: '/c', script: 'siteplane-placeholder.cjs', port: 8090, execMode: 'fork' });
    const app = (
      new Function('module', `${text}; return module.exports;`)({ exports: {} }) as { apps: Record<string, unknown>[] }
    ).apps[0];
    expect(app).toMatchObject({ exec_mode: 'fork', script: 'siteplane-placeholder.cjs', env: { PORT: '8090' } });
    expect(app).not.toHaveProperty('instances');
  });
});

import { createHash } from 'node:crypto';

/**
 * The nginx server block of one site. Every value placed into the file is checked to hold no
 * character that nginx's configuration syntax gives a meaning to (whitespace, ; { } quotes $ #),
 * whatever validated it before.
 */
export type VhostBackend =
  /** PHP through the user's FPM pool; `fallback` is the last try_files entry (a front controller or =404). */
  | { kind: 'php'; root: string; socket: string; fallback: '/index.php?$query_string' | '/index.php?$args' | '=404' }
  | { kind: 'static'; root: string }
  /**
   * A process on 127.0.0.1:port (Node, Generic Port, Soketi); WebSocket upgrades pass through.
   * `standIn`: a second port nginx turns to when the site's port refuses or drops a request, only
   * while a deploy restarts a process in place (deploy/stand-in.ts); never left in a vhost.
   */
  | { kind: 'proxy'; port: number; longLived: boolean; standIn?: number };

export interface VhostInput {
  serverNames: string[];
  /** Served at /.well-known/acme-challenge/ so HTTP-01 works with or without TLS configured. */
  acmeRoot: string;
  accessLog: string;
  errorLog: string;
  backend: VhostBackend;
  /** When set, port 80 only answers challenges and redirects; the site is served on 443. */
  tls?: { certificate: string; key: string };
}

const SAFE = /^[A-Za-z0-9._\-/:*@+=]+$/;

function safe(value: string, what: string): string {
  if (!SAFE.test(value)) throw new Error(`${what} ${JSON.stringify(value)} cannot be placed in an nginx configuration`);
  return value;
}

export function renderNginxVhost(input: VhostInput): string {
  const names = input.serverNames.map((name) => safe(name, 'server name')).join(' ');
  const acme = [
    '    location ^~ /.well-known/acme-challenge/ {',
    `        root ${safe(input.acmeRoot, 'ACME root')};`,
    '        default_type text/plain;',
    '        try_files $uri =404;',
    '    }',
  ];
  const common = [
    `    server_name ${names};`,
    `    access_log ${safe(input.accessLog, 'log path')};`,
    `    error_log ${safe(input.errorLog, 'log path')};`,
    // nginx's workers read every site on the server: a link the site user puts below the root is
    // followed only to a file of the link's owner, or that user would have nginx serve another
    // site's files as theirs. Above the root (`current`, a release) nothing is checked.
    '    disable_symlinks if_not_owner from=$document_root;',
    '',
  ];
  const header = ['# Managed by Siteplane; changes here are overwritten.', ...upstream(input)];
  if (!input.tls) {
    return [
      ...header,
      'server {',
      '    listen 80;',
      '    listen [::]:80;',
      ...common,
      ...acme,
      '',
      ...site(input.backend, input.serverNames),
      '}',
      '',
    ].join('\n');
  }
  return [
    ...header,
    'server {',
    '    listen 80;',
    '    listen [::]:80;',
    ...common,
    ...acme,
    '',
    '    location / {',
    '        return 301 https://$host$request_uri;',
    '    }',
    '}',
    '',
    'server {',
    '    listen 443 ssl;',
    '    listen [::]:443 ssl;',
    `    ssl_certificate ${safe(input.tls.certificate, 'certificate path')};`,
    `    ssl_certificate_key ${safe(input.tls.key, 'key path')};`,
    ...common,
    ...acme,
    '',
    ...site(input.backend, input.serverNames),
    '}',
    '',
  ].join('\n');
}

function site(backend: VhostBackend, serverNames: string[]): string[] {
  const hidden = ['    location ~ /\\.(?!well-known/) {', '        deny all;', '    }', ''];
  if (backend.kind === 'proxy') return [...hidden, ...proxy(backend, upstreamName(serverNames))];
  const root = [`    root ${safe(backend.root, 'document root')};`];
  if (backend.kind === 'static') {
    return [
      ...root,
      '    index index.html index.htm;',
      '',
      ...hidden,
      '    location / {',
      '        try_files $uri $uri/ $uri.html =404;',
      '    }',
    ];
  }
  return [
    ...root,
    '    index index.php index.html;',
    '    client_max_body_size 64m;',
    '',
    ...hidden,
    '    location / {',
    `        try_files $uri $uri/ ${backend.fallback};`,
    '    }',
    '',
    '    location ~ \\.php$ {',
    '        try_files $uri =404;',
    '        include fastcgi_params;',
    // $realpath_root: the resolved `current` release, so a deployment's symlink switch is seen at once.
    '        fastcgi_param SCRIPT_FILENAME $realpath_root$fastcgi_script_name;',
    '        fastcgi_param DOCUMENT_ROOT $realpath_root;',
    `        fastcgi_pass unix:${safe(backend.socket, 'FPM socket')};`,
    '        fastcgi_read_timeout 300s;',
    '    }',
  ];
}

function checkPort(port: number): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`port ${port} is not a TCP port`);
  return port;
}

/**
 * With a stand-in, the site's port and the stand-in as an upstream group whose second server is a
 * backup: nginx asks the site's port first, every time (max_fails=0 never sets it aside), and on a
 * refused connection or one dropped before the answer's header (proxy_next_upstream's default
 * "error timeout") asks the stand-in instead — a request nginx already sent is passed on again only
 * when its method is idempotent, as nginx does for any upstream. Its name comes from the site's
 * domain, unique among the server's vhosts.
 */
function upstream(input: VhostInput): string[] {
  const { backend } = input;
  if (backend.kind !== 'proxy' || backend.standIn === undefined) return [];
  return [
    `upstream ${upstreamName(input.serverNames)} {`,
    `    server 127.0.0.1:${checkPort(backend.port)} max_fails=0;`,
    `    server 127.0.0.1:${checkPort(backend.standIn)} backup max_fails=0;`,
    '}',
    '',
  ];
}

function upstreamName(serverNames: string[]): string {
  const domain = serverNames[0] ?? '';
  return `siteplane_${createHash('sha256').update(domain).digest('hex').slice(0, 16)}`;
}

function proxy(backend: Extract<VhostBackend, { kind: 'proxy' }>, upstream: string): string[] {
  const target = backend.standIn === undefined ? `127.0.0.1:${checkPort(backend.port)}` : upstream;
  return [
    '    location / {',
    `        proxy_pass http://${target};`,
    '        proxy_http_version 1.1;',
    '        proxy_set_header Upgrade $http_upgrade;',
    '        proxy_set_header Connection "upgrade";',
    '        proxy_set_header Host $host;',
    '        proxy_set_header X-Real-IP $remote_addr;',
    '        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    '        proxy_set_header X-Forwarded-Proto $scheme;',
    '        proxy_cache_bypass $http_upgrade;',
    `        proxy_read_timeout ${backend.longLived ? '3600s' : '60s'};`,
    '    }',
  ];
}

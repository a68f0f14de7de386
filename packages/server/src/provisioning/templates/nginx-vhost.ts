/**
 * The nginx server block of one site. Every value placed into the file is checked to hold no
 * character that nginx's configuration syntax gives a meaning to (whitespace, ; { } quotes $ #),
 * whatever validated it before.
 */
export type VhostBackend =
  /** PHP through the user's FPM pool; `fallback` is the last try_files entry (a front controller or =404). */
  | { kind: 'php'; root: string; socket: string; fallback: '/index.php?$query_string' | '/index.php?$args' | '=404' }
  | { kind: 'static'; root: string }
  /** A process on 127.0.0.1:port (Node, Generic Port, Soketi); WebSocket upgrades pass through. */
  | { kind: 'proxy'; port: number; longLived: boolean };

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
  const header = ['# Managed by Siteplane; changes here are overwritten.'];
  if (!input.tls) {
    return [
      ...header,
      'server {',
      '    listen 80;',
      '    listen [::]:80;',
      ...common,
      ...acme,
      '',
      ...site(input.backend),
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
    ...site(input.backend),
    '}',
    '',
  ].join('\n');
}

function site(backend: VhostBackend): string[] {
  const hidden = ['    location ~ /\\.(?!well-known/) {', '        deny all;', '    }', ''];
  if (backend.kind === 'proxy') return [...hidden, ...proxy(backend.port, backend.longLived)];
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

function proxy(port: number, longLived: boolean): string[] {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`port ${port} is not a TCP port`);
  return [
    '    location / {',
    `        proxy_pass http://127.0.0.1:${port};`,
    '        proxy_http_version 1.1;',
    '        proxy_set_header Upgrade $http_upgrade;',
    '        proxy_set_header Connection "upgrade";',
    '        proxy_set_header Host $host;',
    '        proxy_set_header X-Real-IP $remote_addr;',
    '        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    '        proxy_set_header X-Forwarded-Proto $scheme;',
    '        proxy_cache_bypass $http_upgrade;',
    `        proxy_read_timeout ${longLived ? '3600s' : '60s'};`,
    '    }',
  ];
}

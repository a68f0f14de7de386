import { phpString } from './php-string.js';
import { randomSecret } from './random-secret.js';

/** WordPress's eight keys and salts, fresh per site. */
export const WP_SALT_NAMES = [
  'AUTH_KEY',
  'SECURE_AUTH_KEY',
  'LOGGED_IN_KEY',
  'NONCE_KEY',
  'AUTH_SALT',
  'SECURE_AUTH_SALT',
  'LOGGED_IN_SALT',
  'NONCE_SALT',
] as const;

export interface WpConfigInput {
  database: string;
  user: string;
  password: string;
  host: string;
  /** Generated with randomSecret when not given (tests pass fixed ones). */
  salts?: Record<(typeof WP_SALT_NAMES)[number], string>;
}

export function renderWpConfig(input: WpConfigInput): string {
  const salts = input.salts ?? Object.fromEntries(WP_SALT_NAMES.map((name) => [name, randomSecret(64)]));
  const define = (name: string, value: string) => `define(${phpString(name)}, ${phpString(value)});`;
  return [
    '<?php',
    '// Written by Siteplane when the site was created.',
    define('DB_NAME', input.database),
    define('DB_USER', input.user),
    define('DB_PASSWORD', input.password),
    define('DB_HOST', input.host),
    define('DB_CHARSET', 'utf8mb4'),
    define('DB_COLLATE', ''),
    '',
    ...WP_SALT_NAMES.map((name) => define(name, salts[name as keyof typeof salts] ?? '')),
    '',
    "$table_prefix = 'wp_';",
    '',
    "define('WP_DEBUG', false);",
    '',
    "if (!defined('ABSPATH')) {",
    "    define('ABSPATH', __DIR__ . '/');",
    '}',
    '',
    "require_once ABSPATH . 'wp-settings.php';",
    '',
  ].join('\n');
}

import { phpString } from './php-string.js';
import { randomSecret } from './random-secret.js';

/**
 * phpMyAdmin's config.inc.php: cookie login against the local MySQL/MariaDB with people's own
 * accounts (root refused); the `phpmyadmin` account, which holds no rights, is its control user.
 * No configuration storage (pmadb) is set: the control user would need rights for it.
 * blowfish_secret must be exactly 32 bytes in 5.2.
 */
export interface PhpMyAdminConfigInput {
  controlUser: string;
  controlPassword: string;
  tempDir: string;
  blowfishSecret?: string;
}

export function renderPhpMyAdminConfig(input: PhpMyAdminConfigInput): string {
  const secret = input.blowfishSecret ?? randomSecret(32);
  if (Buffer.byteLength(secret, 'utf8') !== 32) throw new Error('blowfish_secret must be 32 bytes');
  return [
    '<?php',
    '// Written by Siteplane when the site was created.',
    'declare(strict_types=1);',
    '',
    `$cfg['blowfish_secret'] = ${phpString(secret)};`,
    '$i = 1;',
    "$cfg['Servers'][$i]['auth_type'] = 'cookie';",
    "$cfg['Servers'][$i]['host'] = 'localhost';",
    "$cfg['Servers'][$i]['compress'] = false;",
    "$cfg['Servers'][$i]['AllowNoPassword'] = false;",
    "$cfg['Servers'][$i]['AllowRoot'] = false;",
    `$cfg['Servers'][$i]['controluser'] = ${phpString(input.controlUser)};`,
    `$cfg['Servers'][$i]['controlpass'] = ${phpString(input.controlPassword)};`,
    `$cfg['TempDir'] = ${phpString(input.tempDir)};`,
    "$cfg['VersionCheck'] = false;",
    '',
  ].join('\n');
}

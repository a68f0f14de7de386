import { describe, expect, it } from 'vitest';
import { patchVendorConfig } from '../../src/provisioning/steps/phpmyadmin/ensure-phpmyadmin-files.js';
import { dotenvValue, mergeDotenv } from '../../src/provisioning/templates/dotenv.js';
import { phpString } from '../../src/provisioning/templates/php-string.js';
import { HOSTILE_VALUES } from './support/hostile.js';

/** PHP's rules for single-quoted strings: only \\ and \' are escapes. */
function decodePhpSingleQuoted(literal: string): string {
  expect(literal.startsWith("'") && literal.endsWith("'")).toBe(true);
  const body = literal.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\' && (body[i + 1] === '\\' || body[i + 1] === "'")) out += body[++i];
    else if (c === "'") throw new Error('unescaped quote ends the string early');
    else out += c;
  }
  return out;
}

describe('PHP string literals', () => {
  it.each(HOSTILE_VALUES)('%j survives a PHP single-quoted literal', (value) => {
    expect(decodePhpSingleQuoted(phpString(value))).toBe(value);
  });
  it('escapes exactly backslash and quote', () => {
    expect(phpString("it's C:\\path $x {$y}")).toBe("'it\\'s C:\\\\path $x {$y}'");
  });
});

describe('.env values (dotenv has no escapes inside quotes)', () => {
  it('picks a quote the value does not contain', () => {
    expect(dotenvValue('plain')).toBe("'plain'");
    expect(dotenvValue("it's")).toBe("`it's`");
    expect(dotenvValue("it's `x`")).toBe('"it\'s `x`"');
  });
  it('refuses what dotenv cannot hold', () => {
    expect(() => dotenvValue('a\nb')).toThrow();
    expect(() => dotenvValue('\'"`')).toThrow(/every quote character/);
    expect(() => dotenvValue('\'`\\n"')).toThrow();
  });
  it('replaces keys in place and appends new ones, leaving the rest', () => {
    expect(mergeDotenv('# c\nHOST=0.0.0.0\nAPP_KEYS=a,b\n', { HOST: '127.0.0.1', PORT: '3001' })).toBe(
      "# c\nHOST='127.0.0.1'\nAPP_KEYS=a,b\nPORT='3001'\n",
    );
  });
});

describe("phpMyAdmin's vendor_config.php", () => {
  it("points Debian's tree at its own config.inc.php and tmp/", () => {
    const debian = `<?php\nreturn [\n    'autoloadFile' => ROOT_PATH . DIRECTORY_SEPARATOR . 'autoload.php',\n    'tempDir' => '/var/lib/phpmyadmin/tmp/',\n\n    'configFile' => '/etc/phpmyadmin/config.inc.php',\n    'versionSuffix' => 'deb1+deb12u1',\n];\n`;
    const patched = patchVendorConfig(debian);
    expect(patched).toContain("'configFile' => ROOT_PATH . 'config.inc.php',");
    expect(patched).toContain("'tempDir' => ROOT_PATH . 'tmp' . DIRECTORY_SEPARATOR,");
    expect(patched).toContain("'autoloadFile' => ROOT_PATH . DIRECTORY_SEPARATOR . 'autoload.php',");
    expect(patched.split('\n')).toHaveLength(debian.split('\n').length);
  });
  it('leaves an upstream tree as it is', () => {
    const upstream = `<?php\nreturn [\n    'tempDir' => ROOT_PATH . 'tmp' . DIRECTORY_SEPARATOR,\n    'configFile' => ROOT_PATH . 'config.inc.php',\n];\n`;
    expect(patchVendorConfig(upstream)).toBe(upstream);
  });
});

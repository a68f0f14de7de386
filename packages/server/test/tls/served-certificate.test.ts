// The last check of a certificate operation: nginx on the server presents the new certificate.
import { describe, expect, it } from 'vitest';
import type { CommandResult, Executor } from '../../src/provisioning/executor.js';
import { RELOAD_NGINX } from '../../src/provisioning/steps/services.js';
import { checkServedCertificate } from '../../src/provisioning/steps/tls/served-certificate.js';
import { makeContext } from '../provisioning/support/context.js';
import { siteOf } from '../provisioning/support/sites.js';

/** services.ts reloads nginx with one constant script (signal, wait for the old workers). */
const isNginxReload = (argv: readonly string[]) => argv[0] === 'sh' && argv[2] === RELOAD_NGINX;

/** A server whose nginx presents `serial` until reloaded, then `afterReload`. */
function server(serial: string | null, afterReload: string | null = serial) {
  const commands: string[] = [];
  let presented = serial;
  const exec: Executor = {
    kind: 'local',
    async run(argv): Promise<CommandResult> {
      commands.push(argv.join(' '));
      if (argv[0] === 'sh' && argv[2]?.includes('openssl s_client')) {
        return presented
          ? { code: 0, stdout: `serial=${presented}\n`, stderr: '' }
          : { code: 1, stdout: '', stderr: 'unable to load' };
      }
      if (isNginxReload(argv)) presented = afterReload;
      return { code: argv[0] === 'stat' ? 1 : 0, stdout: '', stderr: '' };
    },
    close: async () => {},
  };
  return { exec, commands };
}

const fast = { waitMs: 400, intervalMs: 20 };

describe('checkServedCertificate', () => {
  it('passes once nginx presents the serial, leading zeros aside, asking by SNI for the site’s name', async () => {
    const { exec, commands } = server('0ABC12');
    const ctx = makeContext(exec, siteOf('static-html'));
    await checkServedCertificate(() => ({ serial: 'ABC12' }), fast).run(ctx);
    expect(commands[0]).toContain('openssl s_client -connect 127.0.0.1:443 -servername "$1"');
    expect(commands[0]?.endsWith(' sh static-html.example.com')).toBe(true);
    expect(ctx.logs).toEqual(['nginx serves the certificate (serial ABC12) for static-html.example.com']);
  });

  it('reloads nginx once when the new certificate does not show (a lost reload), then passes', async () => {
    const { exec, commands } = server('01', '02');
    const ctx = makeContext(exec, siteOf('static-html'));
    await checkServedCertificate(() => ({ serial: '02' }), fast).run(ctx);
    expect(commands.filter((c) => c === `sh -c ${RELOAD_NGINX}`)).toHaveLength(1);
    expect(ctx.logs[0]).toBe('nginx still presents serial 01 for static-html.example.com; reloading it again');
  });

  it('fails saying what nginx presents instead', async () => {
    const { exec } = server(null);
    const ctx = makeContext(exec, siteOf('static-html'));
    await expect(checkServedCertificate(() => ({ serial: '02' }), fast).run(ctx)).rejects.toThrow(
      'nginx on the server does not serve the new certificate for static-html.example.com on port 443 (it presents no certificate)',
    );
  });

  it('is skipped without openssl on the server, and without a certificate', async () => {
    const missing: Executor = { kind: 'local', run: async () => ({ code: 127, stdout: '', stderr: '' }), close: async () => {} };
    const ctx = makeContext(missing, siteOf('static-html'));
    await checkServedCertificate(() => ({ serial: '02' }), fast).run(ctx);
    expect(ctx.logs).toEqual(['openssl is not installed on the server: the served certificate is not checked']);
    const { exec, commands } = server('01');
    await checkServedCertificate(() => null, fast).run(makeContext(exec, siteOf('static-html')));
    expect(commands).toEqual([]);
  });
});

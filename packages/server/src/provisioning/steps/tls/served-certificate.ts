import { setTimeout as sleep } from 'node:timers/promises';
import type { Step, StepContext } from '../../step.js';
import { run, StepError } from '../commands.js';
import { reloadNginx } from '../services.js';

/**
 * `nginx -s reload` returns before the new workers take over, so "the vhost was reloaded" is not
 * yet "the site is served with the new certificate". This asks nginx on the server itself, by
 * SNI, which certificate it presents, until it is the new one: `ssl.status` becomes `active` only
 * once it is true. A reload can also be lost (the signal reached a master that was being stopped
 * or restarted at that moment): half-way through the wait nginx is reloaded (or started) once more.
 * The script is constant; the name is a positional argument.
 */
const SERVED_SERIAL =
  'openssl s_client -connect 127.0.0.1:443 -servername "$1" </dev/null 2>/dev/null | openssl x509 -noout -serial';
const WAIT_MS = 16_000;
const INTERVAL_MS = 250;

/** Hex serials as OpenSSL and node:crypto print them, compared without leading zeros. */
const canonicalSerial = (serial: string) => serial.trim().toUpperCase().replace(/^0+/, '');

export function checkServedCertificate(
  expected: () => { serial: string } | null,
  options: { waitMs?: number; intervalMs?: number } = {},
): Step {
  const waitMs = options.waitMs ?? WAIT_MS;
  const intervalMs = options.intervalMs ?? INTERVAL_MS;
  return {
    name: 'check the served certificate',
    async run(ctx: StepContext) {
      const certificate = expected();
      if (!certificate) return;
      const name = ctx.site.domain;
      const want = canonicalSerial(certificate.serial);
      const started = Date.now();
      const until = started + waitMs;
      let reloaded = false;
      let seen = 'nothing';
      for (;;) {
        const result = await run(ctx, ['sh', '-c', SERVED_SERIAL, 'sh', name], { timeoutMs: 10_000 });
        if (result.code === 127) {
          ctx.log('openssl is not installed on the server: the served certificate is not checked');
          return;
        }
        const served = /serial=([0-9A-Fa-f]+)/.exec(result.stdout)?.[1];
        if (served && canonicalSerial(served) === want) {
          ctx.log(`nginx serves the certificate (serial ${certificate.serial}) for ${name}`);
          return;
        }
        seen = served ? `serial ${served}` : 'no certificate';
        if (Date.now() > until) break;
        if (!reloaded && Date.now() > started + waitMs / 2) {
          reloaded = true;
          ctx.log(`nginx still presents ${seen} for ${name}; reloading it again`);
          await ctx.withServerLock('nginx', () => reloadNginx(ctx));
        }
        await sleep(intervalMs);
      }
      throw new StepError(`nginx on the server does not serve the new certificate for ${name} on port 443 (it presents ${seen})`);
    },
  };
}

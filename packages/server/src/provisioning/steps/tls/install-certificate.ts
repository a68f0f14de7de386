import type { Step, StepContext } from '../../step.js';
import { AS_ROOT, mustRun, StepError } from '../commands.js';
import { ensureNginxVhost } from '../ensure-nginx-vhost.js';
import { claim } from '../ledger.js';
import {
  fileHash,
  linkTarget,
  makeDirectory,
  moveInto,
  type Ownership,
  pathKind,
  pointLink,
  sha256,
  writeFile,
} from '../remote-files.js';
import { reloadNginx, testNginx } from '../services.js';
import { siteLayout } from '../site-layout.js';
import { type CertificateFiles, certificateFiles, versionName } from './certificate-files.js';

/** What a step installs; null when the operation has nothing to install (dry-run, skipped). */
export interface CertificateToInstall {
  fullChainPem: string;
  privateKeyPem: string;
  serial: string;
  names: string[];
}

/** Shared by the two steps of one operation: whether the files on the server changed. */
export interface InstallState {
  filesChanged: boolean;
}

const CERTIFICATE_FILE: Ownership = { owner: 'root', group: 'root', mode: '0644' };
const KEY_FILE: Ownership = { owner: 'root', group: 'root', mode: '0600' };
const PRIVATE_DIR: Ownership = { owner: 'root', group: 'root', mode: '0700' };

/**
 * The certificate and key in a directory of their own under /etc/siteplane/certificates/<domain>/,
 * then `current` switched to it in one rename (certificate-files.ts says why), then the previous
 * version removed. Ledgered (`certificate`, details.paths) before anything is written, so
 * deletion removes the whole directory. The key travels on stdin and is never logged.
 */
export function installCertificate(
  material: () => CertificateToInstall | null,
  state: InstallState = { filesChanged: false },
): Step {
  return {
    name: 'install certificate',
    async run(ctx: StepContext) {
      const certificate = material();
      if (!certificate) {
        ctx.log('no certificate to install');
        return;
      }
      const files = certificateFiles(ctx.site.domain);
      const version = versionName(certificate.serial);
      const dir = `${files.dir}/${version}`;
      await claim(
        ctx,
        { kind: 'certificate', ref: files.dir, details: { paths: [files.dir] } },
        (await pathKind(ctx, files.dir)) !== null,
        'certificate directory',
      );
      await makeDirectory(ctx, files.dir, PRIVATE_DIR);
      const live = await linkTarget(ctx, files.current);
      const key = `${dir}/privkey.pem`;
      const chain = `${dir}/fullchain.pem`;
      const intact =
        live === version &&
        (await fileHash(ctx, key)) === sha256(certificate.privateKeyPem) &&
        (await fileHash(ctx, chain)) === sha256(certificate.fullChainPem);
      const about = `the certificate for ${certificate.names.join(', ')} (serial ${version})`;
      if (intact) {
        ctx.log(`${about} is in place in ${files.dir}`);
        return;
      }
      await makeDirectory(ctx, dir, PRIVATE_DIR);
      await replaceFile(ctx, key, certificate.privateKeyPem, KEY_FILE);
      await replaceFile(ctx, chain, certificate.fullChainPem, CERTIFICATE_FILE);
      await pointLink(ctx, files.current, version);
      state.filesChanged = true;
      if (live && live !== version && /^[0-9A-F]+$/.test(live)) {
        await mustRun(ctx, ['rm', '-rf', '--', `${files.dir}/${live}`], AS_ROOT, 'remove the previous certificate');
      }
      ctx.log(`installed ${about} in ${files.dir}`);
    },
  };
}

/**
 * The site's vhost with TLS on 443 and port 80 redirecting (ACME challenges still answered). A
 * renewal changes the files but not the vhost: nginx reads certificates only when it loads its
 * configuration, so it is reloaded (after `nginx -t`) when the files changed and the vhost did not.
 */
export function ensureTlsVhost(material: () => CertificateToInstall | null, state: InstallState = { filesChanged: false }): Step {
  return {
    name: 'ensure nginx vhost with TLS',
    async run(ctx: StepContext) {
      if (!material()) {
        ctx.log('no certificate: the vhost stays as it is');
        return;
      }
      const files: CertificateFiles = certificateFiles(ctx.site.domain);
      const vhost = siteLayout(ctx.site).vhost;
      const before = await fileHash(ctx, vhost);
      await ensureNginxVhost({ tls: { certificate: files.certificate, key: files.key } }).run(ctx);
      if (!state.filesChanged || (await fileHash(ctx, vhost)) !== before) return;
      await ctx.withServerLock('nginx', async () => {
        const test = await testNginx(ctx);
        if (test.code !== 0) {
          // Not reloaded: the running nginx keeps the certificate it loaded before.
          throw new StepError(`nginx -t fails with the new certificate files: ${`${test.stderr}\n${test.stdout}`.trim()}`);
        }
        await reloadNginx(ctx);
      });
      ctx.log('reloaded nginx for the new certificate files');
    },
  };
}

async function replaceFile(ctx: StepContext, path: string, content: string, own: Ownership): Promise<boolean> {
  if ((await fileHash(ctx, path)) === sha256(content)) return false;
  const temporary = `${path}.siteplane-new`;
  await writeFile(ctx, temporary, content, own);
  await moveInto(ctx, temporary, path);
  return true;
}

import { open } from 'node:fs/promises';
import type { Step, StepContext } from '../step.js';
import { mustRun } from '../steps/commands.js';
import { pathKind } from '../steps/remote-files.js';
import { refuseLiveRelease } from './fetch-git.js';
import { mustRunLong } from './long-run.js';
import type { DeployPlan, DeploySource } from './plan.js';
import { asUserIn, releasePaths } from './release-paths.js';

/** Raw bytes per upload command: 4 MiB, about 5.6 MB of base64 on stdin. */
export const UPLOAD_CHUNK_BYTES = 4 * 1024 * 1024;
const UPLOAD_TIMEOUT_MS = 5 * 60_000;

/**
 * APPEND, as the site user: one base64 chunk of the archive on stdin (the executors' stdin is text)
 * decoded into $1; `new` starts the file over (an earlier attempt's upload is never trusted).
 */
export const APPEND = `set -euo pipefail
umask 077
if [ "$2" = new ]; then base64 -d > "$1"; else base64 -d >> "$1"; fi`;

/**
 * UNPACK, as the site user, from the uploaded $1.tar.gz: its SHA-256 checked against $2 (what the
 * control plane received), listed first and refused when a member is absolute or climbs out with
 * `..` (GNU tar would only skip those, silently), unpacked without owners into a temporary directory,
 * refused when a symlink in it resolves outside it, then renamed into release $1.
 */
export const UNPACK = `set -euo pipefail
archive="$1.tar.gz"
rm -rf -- "$1.partial"
trap 'rm -f -- "$archive"' EXIT
got=$(sha256sum -- "$archive" | cut -d' ' -f1)
if [ "$got" != "$2" ]; then echo "the uploaded archive's sha256 is $got, not $2" >&2; exit 3; fi
tar -t -z -f "$archive" | while IFS= read -r member; do
  case "/$member/" in */../*) echo "archive member $member climbs out of the release" >&2; exit 3 ;; esac
  case $member in /*) echo "archive member $member is an absolute path" >&2; exit 3 ;; esac
done
mkdir -p -- "$1.partial"
tar -x -z -f "$archive" -C "$1.partial" --no-same-owner --no-same-permissions
base=$(realpath -- "$1.partial")
find "$1.partial" -type l -print0 | while IFS= read -r -d '' link; do
  target=$(realpath -m -- "$link")
  case "$target/" in "$base/"*) ;; *)
    echo "archive member \${link#"$1.partial/"} is a link to $(readlink -- "$link"), outside the release" >&2
    rm -rf -- "$1.partial"
    exit 3 ;;
  esac
done
mv -T -- "$1.partial" "$1"`;

export function unpackArtifact(plan: DeployPlan): Step {
  return {
    name: 'unpack artifact',
    async run(ctx: StepContext) {
      const source = plan.source as Extract<DeploySource, { kind: 'artifact' }>;
      const paths = releasePaths(ctx.site, plan.release);
      const user = asUserIn(paths.layout);
      await refuseLiveRelease(ctx, paths.layout, paths.linkTarget);
      if ((await pathKind(ctx, paths.dir, user)) === 'directory') {
        ctx.log(`${paths.dir} was unpacked by an earlier attempt`);
        return;
      }
      const archive = `${paths.dir}.tar.gz`;
      let sent = 0;
      await readChunks(source.file, async (chunk) => {
        await mustRun(
          ctx,
          ['bash', '-c', APPEND, 'upload', archive, sent === 0 ? 'new' : 'append'],
          { ...user, stdin: chunk.toString('base64'), timeoutMs: UPLOAD_TIMEOUT_MS },
          'upload the artifact',
        );
        sent += chunk.length;
      });
      if (sent !== source.bytes) throw new Error(`the stored artifact has ${sent} bytes, not the ${source.bytes} received`);
      ctx.log(`uploaded the artifact (${sent} bytes, sha256 ${source.sha256}) to ${archive}`);
      await mustRunLong(ctx, ['bash', '-c', UNPACK, 'unpack', paths.dir, source.sha256], user, 'unpack the artifact');
      ctx.log(`unpacked the artifact into ${paths.dir}`);
    },
  };
}

/** The control plane's copy of the archive, a chunk at a time: a 200 MB upload is never one string. */
async function readChunks(file: string, each: (chunk: Buffer) => Promise<void>): Promise<void> {
  const handle = await open(file, 'r').catch((error: NodeJS.ErrnoException) => {
    throw new Error(
      error.code === 'ENOENT'
        ? 'the uploaded artifact is gone from the data directory (its deployment ended, or another Siteplane process received it: API and worker must share SITEPLANE_DATA_DIR)'
        : `the uploaded artifact cannot be read: ${error.message}`,
    );
  });
  try {
    const buffer = Buffer.alloc(UPLOAD_CHUNK_BYTES);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, UPLOAD_CHUNK_BYTES, null);
      if (bytesRead === 0) return;
      await each(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
}

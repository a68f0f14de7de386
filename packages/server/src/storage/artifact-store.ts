import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { Kysely } from 'kysely';
import { DomainError } from '../domain/errors.js';
import type { Database } from './schema.js';

/** Why an upload was refused: `body_too_large` (413) or `invalid_artifact` (422); nothing is kept. */
export class ArtifactRejected extends DomainError {
  constructor(code: 'body_too_large' | 'invalid_artifact', message: string) {
    super(code, message);
    this.name = 'ArtifactRejected';
  }
}

/** An upload received whole and flushed to disk, not yet tied to a deployment. */
export interface IncomingArtifact {
  file: string;
  sha256: string;
  bytes: number;
}

const FILE_SUFFIX = '.tar.gz';
const UUID_FILE = /^[0-9a-f-]{36}\.tar\.gz$/;
/** A file no deployment names (a crash between the rename and the commit) is removed after this. */
const ORPHAN_AFTER_MS = 60 * 60 * 1000;
const TAR_BLOCK = 512;

/**
 * Uploaded deploy artifacts (POST …/deployments with a .tar.gz body), as files of the data directory:
 * `<data>/artifacts/incoming/<random>.part` while a request streams in, then
 * `<data>/artifacts/<deployment uuid>.tar.gz` once the deployment that names it commits. Directories
 * 0700 and files 0600: only this service reads them, and each belongs to one deployment, so to one
 * team. Flushed (fsync) before the 202, so an acknowledged upload survives a crash; removed once the
 * deployment has ended (succeeded, failed, cancelled or superseded) by `remove` or `sweep`. API and
 * worker processes must share the data directory (they already share its secret.key by default).
 */
export class ArtifactStore {
  constructor(
    readonly dir: string,
    readonly maxBytes: number,
  ) {}

  pathOf(deploymentUuid: string): string {
    return join(this.dir, `${deploymentUuid}${FILE_SUFFIX}`);
  }

  /**
   * Streams a request body to disk, hashing and counting it: over maxBytes, or not gzip (its magic
   * bytes), or a gzip whose first block is not a tar header, it is refused and nothing is kept.
   * Only the first tar block is decompressed: a gzip bomb costs nothing here; the archive's members
   * are checked by the unpack step on the server (provisioning/deploy/unpack-artifact.ts).
   */
  async receive(body: Readable): Promise<IncomingArtifact> {
    const incoming = join(this.dir, 'incoming');
    await mkdir(incoming, { recursive: true, mode: 0o700 });
    const file = join(incoming, `${randomUUID()}.part`);
    const hash = createHash('sha256');
    const check = new FirstTarBlock();
    let bytes = 0;
    const meter = new Transform({
      transform: (chunk: Buffer, _enc, done) => {
        bytes += chunk.length;
        if (bytes > this.maxBytes)
          return done(
            new ArtifactRejected(
              'body_too_large',
              `The artifact is larger than ${this.maxBytes} bytes (SITEPLANE_ARTIFACT_MAX_BYTES).`,
            ),
          );
        hash.update(chunk);
        const refused = check.feed(chunk);
        done(refused, chunk);
      },
    });
    // Not pipeline(body, …): a refusal must not destroy the request, whose socket carries the answer.
    // The rest of a refused body is read and dropped.
    const aborted = () => {
      if (!body.readableEnded) meter.destroy(new Error('the upload was aborted'));
    };
    body.on('error', (error) => meter.destroy(error));
    body.on('close', aborted);
    // Created before anything streams: a refusal must find the file to remove (a write stream
    // opening it itself could create it after the unlink below, leaving a .part behind).
    const handle = await open(file, 'wx', 0o600);
    body.pipe(meter);
    try {
      await pipeline(meter, handle.createWriteStream());
      if (bytes === 0) throw new ArtifactRejected('invalid_artifact', 'The body is empty: send the .tar.gz to deploy.');
      const verdict = await check.end();
      if (verdict) throw verdict;
      await flush(file);
    } catch (error) {
      body.off('close', aborted);
      body.unpipe(meter);
      body.resume();
      await unlink(file).catch(() => undefined);
      throw error;
    }
    body.off('close', aborted);
    return { file, sha256: hash.digest('hex'), bytes };
  }

  /** Names the upload by its deployment and flushes the directory: called inside the deployment's transaction. */
  async keep(incoming: IncomingArtifact, deploymentUuid: string): Promise<void> {
    await rename(incoming.file, this.pathOf(deploymentUuid));
    await flush(this.dir);
  }

  /** An upload no deployment took (a refused or replayed request). */
  async discard(incoming: IncomingArtifact): Promise<void> {
    await unlink(incoming.file).catch(() => undefined);
  }

  async remove(deploymentUuid: string): Promise<void> {
    await unlink(this.pathOf(deploymentUuid)).catch(() => undefined);
  }

  /**
   * Removes the archives of deployments that have ended, those no deployment names (older than an
   * hour: one may be committing now) and stale partial uploads. Run by the worker at start and after
   * each deploy; returns how many files it removed.
   */
  async sweep(db: Kysely<Database>, now = Date.now()): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return 0;
    }
    let removed = 0;
    for (const name of names) {
      if (!UUID_FILE.test(name)) continue;
      const uuid = name.slice(0, -FILE_SUFFIX.length);
      const row = await db
        .selectFrom('deployments')
        .innerJoin('operations', 'operations.uuid', 'deployments.operation_uuid')
        .select('operations.status')
        .where('deployments.uuid', '=', uuid)
        .executeTakeFirst();
      const ended = row ? row.status !== 'queued' && row.status !== 'running' : await olderThan(join(this.dir, name), now);
      if (
        ended &&
        (await unlink(join(this.dir, name)).then(
          () => true,
          () => false,
        ))
      )
        removed++;
    }
    const incoming = join(this.dir, 'incoming');
    for (const name of await readdir(incoming).catch(() => [] as string[]))
      if (await olderThan(join(incoming, name), now))
        if (
          await unlink(join(incoming, name)).then(
            () => true,
            () => false,
          )
        )
          removed++;
    return removed;
  }
}

async function olderThan(file: string, now: number): Promise<boolean> {
  const info = await stat(file).catch(() => null);
  return info !== null && now - info.mtimeMs > ORPHAN_AFTER_MS;
}

/** fsync of a file or directory: what is acknowledged must be on disk. */
async function flush(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Checks the upload's start as it streams by: the gzip magic bytes (1f 8b), then the first tar
 * block, decompressed from as many chunks as it takes and no more: `ustar` at offset 257 (POSIX and
 * GNU tar), or an all-zero block (an empty archive).
 */
class FirstTarBlock {
  private head = Buffer.alloc(0);
  private gunzip: ReturnType<typeof createGunzip> | null = null;
  private block = Buffer.alloc(0);
  private failure: Error | null = null;
  private done = false;

  feed(chunk: Buffer): ArtifactRejected | null {
    if (this.done) return null;
    if (this.head.length < 2) {
      this.head = Buffer.concat([this.head, chunk.subarray(0, 2 - this.head.length)]);
      if (this.head.length >= 1 && this.head[0] !== 0x1f) return this.notGzip();
      if (this.head.length === 2 && this.head[1] !== 0x8b) return this.notGzip();
    }
    if (!this.gunzip) {
      this.gunzip = createGunzip();
      this.gunzip.on('data', (out: Buffer) => {
        if (this.block.length < TAR_BLOCK) this.block = Buffer.concat([this.block, out]);
      });
      this.gunzip.on('error', (error) => {
        this.failure = error;
      });
    }
    if (this.block.length >= TAR_BLOCK || this.failure) {
      this.done = true;
      return null;
    }
    this.gunzip.write(chunk);
    return null;
  }

  /** After the last chunk: null when the upload is a gzip'd tar archive, else why not. */
  async end(): Promise<ArtifactRejected | null> {
    const gunzip = this.gunzip;
    if (this.head.length < 2) return this.notGzip();
    if (gunzip && !this.done) {
      await new Promise<void>((resolve) => {
        gunzip.once('end', resolve);
        gunzip.once('error', () => resolve());
        gunzip.end();
        gunzip.resume();
      });
    }
    gunzip?.destroy();
    if (this.block.length < TAR_BLOCK)
      return new ArtifactRejected(
        'invalid_artifact',
        this.failure
          ? `The body is not a valid gzip stream: ${this.failure.message}.`
          : 'The gzip stream holds no tar archive (less than one 512-byte block).',
      );
    const block = this.block.subarray(0, TAR_BLOCK);
    if (block.every((b) => b === 0)) return new ArtifactRejected('invalid_artifact', 'The tar archive is empty.');
    if (block.subarray(257, 262).toString('latin1') !== 'ustar')
      return new ArtifactRejected('invalid_artifact', 'The gzip stream does not hold a tar archive (no ustar header).');
    return null;
  }

  private notGzip(): ArtifactRejected {
    return new ArtifactRejected(
      'invalid_artifact',
      'The body is not gzip-compressed (it does not start with 1f 8b): send a .tar.gz.',
    );
  }
}

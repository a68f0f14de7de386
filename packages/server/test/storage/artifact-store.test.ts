/**
 * The artifact store's files (storage/artifact-store.ts): private modes, an upload refused midway
 * leaves nothing, and the sweep removes what no running deployment needs: uploads no deployment
 * names once they are an hour old (younger ones may be committing), stale partial uploads.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactStore } from '../../src/storage/artifact-store.js';
import { startTestService, TEST_DB, type TestService } from '../support/test-service.js';

describe(`ArtifactStore (${TEST_DB})`, () => {
  let s: TestService;
  let dir: string;
  beforeAll(async () => {
    s = await startTestService();
    dir = mkdtempSync(join(tmpdir(), 'artifact-store-'));
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const archive = () => {
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'src/index.html'), 'hi');
    return execFileSync('tar', ['-czf', '-', '-C', join(dir, 'src'), '.']);
  };

  it('keeps an upload 0600 in a 0700 directory, named after its deployment', async () => {
    const store = new ArtifactStore(join(dir, 'a'), 1024 * 1024);
    const got = await store.receive(Readable.from([archive()]));
    expect(statSync(got.file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'a')).mode & 0o777).toBe(0o700);
    await store.keep(got, '01a2188e-7d6b-79da-96cb-5f8152897ecd');
    expect(readdirSync(join(dir, 'a'))).toContain('01a2188e-7d6b-79da-96cb-5f8152897ecd.tar.gz');
    expect(readdirSync(join(dir, 'a/incoming'))).toEqual([]);
  });

  it('leaves nothing of a body refused while it streams (over the limit)', async () => {
    const store = new ArtifactStore(join(dir, 'b'), 100);
    const chunks = [archive(), Buffer.alloc(200)];
    await expect(store.receive(Readable.from(chunks))).rejects.toMatchObject({ code: 'body_too_large' });
    expect(readdirSync(join(dir, 'b/incoming'))).toEqual([]);
  });

  it('sweeps uploads no deployment names once an hour old, and stale partial uploads; keeps younger ones', async () => {
    const store = new ArtifactStore(join(dir, 'c'), 1024 * 1024);
    mkdirSync(join(dir, 'c/incoming'), { recursive: true });
    const old = '01a2188e-0000-7000-8000-000000000001.tar.gz';
    const young = '01a2188e-0000-7000-8000-000000000002.tar.gz';
    for (const name of [old, young, 'incoming/x.part', 'incoming/y.part']) writeFileSync(join(dir, 'c', name), 'x');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    for (const name of [old, 'incoming/x.part']) utimesSync(join(dir, 'c', name), twoHoursAgo, twoHoursAgo);
    expect(await store.sweep(s.storage.db)).toBe(2);
    expect(existsSync(join(dir, 'c', old))).toBe(false);
    expect(existsSync(join(dir, 'c', young))).toBe(true);
    expect(readdirSync(join(dir, 'c/incoming'))).toEqual(['y.part']);
  });
});

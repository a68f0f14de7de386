import { describe, expect, it } from 'vitest';
import { type PooledSsh, SshExecutorPool } from '../../src/app/ssh-executor-pool.js';
import type { SshExecutorOptions } from '../../src/provisioning/executors/ssh.js';

/** Stands for an SshExecutor: counts connects and closes, runs nothing. */
class FakeSsh implements PooledSsh {
  readonly kind = 'ssh' as const;
  connects = 0;
  closed = false;
  constructor(readonly options: SshExecutorOptions) {}
  async connect() {
    if (this.options.host === 'unreachable') throw new Error('connect ECONNREFUSED');
    this.connects++;
    return { fingerprint: 'SHA256:x' };
  }
  async run() {
    if (this.closed) throw new Error('closed');
    return { code: 0, stdout: this.options.host, stderr: '' };
  }
  async runDetached() {
    return this.run();
  }
  async close() {
    this.closed = true;
  }
}

const target = (overrides: Partial<SshExecutorOptions> = {}): SshExecutorOptions => ({
  host: '127.0.0.1',
  port: 2222,
  username: 'root',
  privateKey: 'key-a',
  hostFingerprint: 'SHA256:x',
  ...overrides,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('one SSH connection per server (ARCHITECTURE §3), shared by its jobs', () => {
  function pool(idleMs = 60_000) {
    const made: FakeSsh[] = [];
    const create = (options: SshExecutorOptions) => {
      const fake = new FakeSsh(options);
      made.push(fake);
      return fake;
    };
    return { made, pool: new SshExecutorPool(create, idleMs) };
  }

  it('jobs on one server at once share one executor; closing a job’s executor only lets go of it', async () => {
    const { made, pool: p } = pool();
    const [a, b] = await Promise.all([p.acquire('s1', target()), p.acquire('s1', target())]);
    expect(made).toHaveLength(1);
    await a!.close();
    await a!.close(); // twice is once
    expect(made[0]!.closed).toBe(false);
    expect(await b!.run(['true'])).toMatchObject({ code: 0 });
    await b!.close();
    expect(made[0]!.closed).toBe(false); // kept for the next job
    const c = await p.acquire('s1', target());
    expect(made).toHaveLength(1);
    await c.close();
    await p.closeAll();
    expect(made[0]!.closed).toBe(true);
  });

  it('other servers get connections of their own', async () => {
    const { made, pool: p } = pool();
    await Promise.all([p.acquire('s1', target()), p.acquire('s2', target({ host: '127.0.0.2' }))]);
    expect(made.map((m) => m.options.host)).toEqual(['127.0.0.1', '127.0.0.2']);
    await p.closeAll();
  });

  it('an idle connection is closed after idleMs, and the next job opens a new one', async () => {
    const { made, pool: p } = pool(30);
    await (await p.acquire('s1', target())).close();
    await sleep(80);
    expect(made[0]!.closed).toBe(true);
    await (await p.acquire('s1', target())).close();
    expect(made).toHaveLength(2);
    await p.closeAll();
  });

  it('a re-verified server (another host key or key pair) gets a new connection; the old one closes after its job', async () => {
    const { made, pool: p } = pool();
    const old = await p.acquire('s1', target());
    const fresh = await p.acquire('s1', target({ hostFingerprint: 'SHA256:y' }));
    expect(made).toHaveLength(2);
    expect(made[0]!.closed).toBe(false); // its job still runs
    await old.close();
    expect(made[0]!.closed).toBe(true);
    await p.acquire('s1', target({ hostFingerprint: 'SHA256:y', privateKey: 'key-b' }));
    expect(made).toHaveLength(3);
    await fresh.close();
    await p.closeAll();
  });

  it('a connect that fails is reported to the job and leaves nothing held', async () => {
    const { made, pool: p } = pool(10);
    await expect(p.acquire('s1', target({ host: 'unreachable' }))).rejects.toThrow(/ECONNREFUSED/);
    await sleep(40);
    expect(made[0]!.closed).toBe(true);
  });
  it('counts the connections it holds open (siteplane_ssh_connections_open): current, retired in use, closed when idle', async () => {
    const { pool: p } = pool(30);
    expect(p.openConnections).toBe(0);
    const a = await p.acquire('s1', target());
    const b = await p.acquire('s2', target());
    expect(p.openConnections).toBe(2);
    // s1 re-verified with another key: the old connection stays open for its job, a new one opens.
    const a2 = await p.acquire('s1', target({ privateKey: 'key-b' }));
    expect(p.openConnections).toBe(3);
    await a.close();
    expect(p.openConnections).toBe(2);
    await a2.close();
    await b.close();
    expect(p.openConnections).toBe(2); // idle, kept for the next job
    await sleep(80);
    expect(p.openConnections).toBe(0);
  });
});

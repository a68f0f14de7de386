import { constants as osConstants } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, ClientChannel } from 'ssh2';
import { networkFailure } from '../../egress/egress-error.js';
import type { CommandResult } from '../executor.js';
import { TIMEOUT_CODE } from './command.js';
import { HostKeyMismatch, normalizeFingerprint, sshFingerprint } from './ssh-host-key.js';
import { loadSsh2 } from './ssh2-module.js';

export interface SshTarget {
  host: string;
  /** Default 22. */
  port?: number;
  username: string;
  privateKey: string | Buffer;
  passphrase?: string;
  /**
   * The pinned host key, `SHA256:…` as `ssh-keygen -lf` prints it. `null` only for verify's first
   * connect: any key is accepted, `connect()` returns its fingerprint to pin, and later reconnects of
   * this connection insist on it. Required (not optional) so that forgetting the pin cannot compile.
   */
  hostFingerprint: string | null;
  /** Handshake + authentication limit. Default 20 s. */
  readyTimeoutMs?: number;
  /** Keep-alive probe interval; after keepaliveCountMax unanswered probes the connection is dropped. Default 15 s. */
  keepaliveIntervalMs?: number;
  /** Default 3. */
  keepaliveCountMax?: number;
  /** Channels open at once; more wait. OpenSSH refuses beyond MaxSessions (default 10). Default 8. */
  maxChannels?: number;
}

/** The connection ended while a command ran: it may or may not have completed. */
export class ConnectionLost extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectionLost';
  }
}

type ExecRequest = { stdin?: string; timeoutMs?: number };

/** Tries to open a channel before giving up (see execOn). */
const OPEN_ATTEMPTS = 5;

/** A channel that could not be opened (internal: marks errors after which nothing ran). */
class OpenFailed extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}

/**
 * One SSH connection to one server, shared by all of its commands: each command is an `exec` channel
 * on it (ARCHITECTURE §3). Connects lazily, and again after the connection dropped, for the next
 * command. A command in flight when the connection drops rejects with ConnectionLost.
 */
export class SshConnection {
  private client: Client | null = null;
  private connecting: Promise<Client> | null = null;
  private pinned: string | null;
  private closed = false;
  private connects = 0;
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  /** Per client: how to fail its in-flight commands when it closes. */
  private readonly inflight = new WeakMap<Client, Set<(err: Error) => void>>();

  constructor(private readonly target: SshTarget) {
    this.pinned = target.hostFingerprint === null ? null : normalizeFingerprint(target.hostFingerprint);
  }

  /** The pinned fingerprint: the configured one, or the one seen at the first connect without a pin. */
  get fingerprint(): string | null {
    return this.pinned;
  }

  /** How many times this connection was established (1 + reconnects). */
  get connectCount(): number {
    return this.connects;
  }

  get label(): string {
    return `${this.target.username}@${this.target.host}:${this.target.port ?? 22}`;
  }

  /** Connects now (verify); returns the host key fingerprint to pin. */
  async connect(): Promise<{ fingerprint: string }> {
    await this.ensureClient();
    return { fingerprint: this.pinned! };
  }

  /** Runs one command line on a new channel; stdin is written, then ended. Non-zero exits resolve. */
  async exec(command: string, request: ExecRequest = {}): Promise<CommandResult> {
    await this.acquire();
    try {
      return await this.execOn(await this.ensureClient(), command, request, 1);
    } finally {
      this.release();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client ?? (await this.connecting?.catch(() => null)) ?? null;
    if (!client || this.client !== client) return;
    await new Promise<void>((resolve) => {
      client.once('close', () => resolve());
      client.end();
    });
  }

  private async execOn(client: Client, command: string, request: ExecRequest, attempt: number): Promise<CommandResult> {
    try {
      return await new Promise<CommandResult>((resolve, reject) => {
        // Listeners go on in the callback itself: exit status and close may arrive in the same
        // TCP read as the channel's confirmation, before any promise continuation runs.
        client.exec(command, (err, channel) =>
          err ? reject(new OpenFailed(err)) : this.watch(client, channel, request, resolve, reject),
        );
      });
    } catch (err) {
      // `client.exec` throws when the socket is already gone; the callback reports a failed open.
      // Either way the channel never opened, so the command never started and may be tried again:
      // on a fresh connection when the old one died, after a pause when the server refused (sshd
      // counts a just-closed session against MaxSessions until it has reaped it).
      if (err instanceof ConnectionLost) throw err; // it may have run: never repeated
      const cause = err instanceof OpenFailed ? err.cause : err;
      if (attempt >= OPEN_ATTEMPTS) throw new Error(`ssh ${this.label}: ${(cause as Error).message}`, { cause });
      if ((cause as { reason?: unknown }).reason === undefined) this.discard(client);
      else await sleep(50 * 2 ** attempt);
      return this.execOn(await this.ensureClient(), command, request, attempt + 1);
    }
  }

  private watch(
    client: Client,
    channel: ClientChannel,
    request: ExecRequest,
    resolve: (result: CommandResult) => void,
    reject: (err: Error) => void,
  ): void {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let exitCode: number | null = null;
    let settled = false;
    const output = () => ({ stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') });
    const aborts = this.inflight.get(client)!;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      aborts.delete(abort);
      fn();
    };
    const abort = (err: Error) => settle(() => reject(err));
    aborts.add(abort);
    // The server enforces the command's own deadline; this one is for a server that stopped answering.
    const timer =
      request.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            settle(() => resolve({ code: TIMEOUT_CODE, ...output() }));
            try {
              channel.signal('KILL');
            } catch {}
            channel.close();
          }, request.timeoutMs);

    channel.on('data', (chunk: Buffer) => stdout.push(chunk));
    channel.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    channel.on('exit', (code: number | null, signal?: string) => {
      exitCode = code ?? 128 + (osConstants.signals[signal as keyof typeof osConstants.signals] ?? 0);
    });
    channel.on('close', () => {
      if (exitCode !== null) settle(() => resolve({ code: exitCode!, ...output() }));
      else abort(new ConnectionLost(`ssh ${this.label}: connection lost before the command finished`));
    });
    channel.on('error', (err: Error) => abort(new ConnectionLost(`ssh ${this.label}: ${err.message}`)));
    channel.end(request.stdin ?? '');
  }

  private ensureClient(): Promise<Client> {
    if (this.closed) return Promise.reject(new Error(`ssh ${this.label}: connection closed`));
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  /** Forgets a client whose socket is dead but whose 'close' has not arrived yet. */
  private discard(client: Client): void {
    if (this.client === client) this.client = null;
    client.destroy();
  }

  private async open(): Promise<Client> {
    const ssh2 = await loadSsh2();
    return new Promise<Client>((resolve, reject) => {
      const client = new ssh2.Client();
      let seen: string | null = null;
      let ready = false;
      this.inflight.set(client, new Set());
      client.on('ready', () => {
        ready = true;
        if (this.closed) {
          client.end();
          reject(new Error(`ssh ${this.label}: connection closed`));
          return;
        }
        this.pinned ??= seen;
        this.client = client;
        this.connects++;
        resolve(client);
      });
      client.on('error', (err: Error) => {
        if (ready) return; // 'close' follows and fails what was in flight
        if (seen !== null && this.pinned !== null && seen !== this.pinned) {
          reject(new HostKeyMismatch(this.label, this.pinned, seen));
        } else {
          // A socket failure is told by its kind only (egress-error.ts); a refused login keeps its words.
          const failure = networkFailure(err, `ssh ${this.label}`);
          reject(
            failure ? Object.assign(failure, { cause: err }) : new Error(`ssh ${this.label}: ${err.message}`, { cause: err }),
          );
        }
      });
      client.on('close', () => {
        if (this.client === client) this.client = null;
        const lost = new ConnectionLost(`ssh ${this.label}: connection lost before the command finished`);
        for (const abort of [...(this.inflight.get(client) ?? [])]) abort(lost);
        if (!ready) reject(new Error(`ssh ${this.label}: connection closed during handshake`));
      });
      client.connect({
        host: this.target.host,
        port: this.target.port ?? 22,
        username: this.target.username,
        privateKey: this.target.privateKey,
        passphrase: this.target.passphrase,
        readyTimeout: this.target.readyTimeoutMs ?? 20_000,
        keepaliveInterval: this.target.keepaliveIntervalMs ?? 15_000,
        keepaliveCountMax: this.target.keepaliveCountMax ?? 3,
        hostVerifier: (key: Buffer) => {
          seen = sshFingerprint(key);
          return this.pinned === null || seen === this.pinned;
        },
      });
    });
  }

  private async acquire(): Promise<void> {
    if (this.active < (this.target.maxChannels ?? 8)) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Hands the slot straight to the next waiter, so `active` stays counted. */
  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
}

import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { loadPg } from './pg-driver.js';

/**
 * "Something about <topic> changed; read it again." Readers that follow a record live (the event
 * streams, http/routes/operations) subscribe to its topic (`operation:<uuid>`); writers notify
 * after their change is committed. A notification carries no data: the database stays the one
 * source of truth, so a lost or doubled notification only delays or repeats a read, and readers
 * also read again on a timer. Within one process an EventEmitter carries them; on PostgreSQL they
 * also cross processes through LISTEN/NOTIFY (an API process streams what a worker process does).
 */
export interface ChangeNotifier {
  notify(topic: string): void;
  /** Calls `listener` on each notification of the topic until the returned function is called. */
  subscribe(topic: string, listener: () => void): () => void;
  /** Calls `listener` with the topic of each notification whose topic starts with `prefix` (the webhook dispatcher: every team). */
  subscribePrefix(prefix: string, listener: (topic: string) => void): () => void;
  close(): Promise<void>;
}

/** The prefix of every team's change-log topic (teamEventsTopic). */
export const TEAM_EVENTS_PREFIX = 'events:';

export function operationTopic(operationUuid: string): string {
  return `operation:${operationUuid}`;
}

/** A team's change log grew (storage/event-log.ts); GET /api/v1/events and the webhook dispatcher follow it. */
export function teamEventsTopic(teamUuid: string): string {
  return `${TEAM_EVENTS_PREFIX}${teamUuid}`;
}

/** One process (SQLite): notifications stay in this process. */
export class InProcessNotifier implements ChangeNotifier {
  protected readonly emitter = new EventEmitter();

  constructor() {
    // One listener per open stream; a busy operation may have many readers.
    this.emitter.setMaxListeners(0);
  }

  notify(topic: string): void {
    this.emit(topic);
  }

  /** To this topic's listeners and to every prefix listener (which pick their own). */
  protected emit(topic: string): void {
    this.emitter.emit(topic);
    this.emitter.emit(ANY_TOPIC, topic);
  }

  subscribe(topic: string, listener: () => void): () => void {
    this.emitter.on(topic, listener);
    return () => this.emitter.off(topic, listener);
  }

  subscribePrefix(prefix: string, listener: (topic: string) => void): () => void {
    const filtered = (topic: string) => {
      if (topic.startsWith(prefix)) listener(topic);
    };
    this.emitter.on(ANY_TOPIC, filtered);
    return () => this.emitter.off(ANY_TOPIC, filtered);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

/** The emitter's event carrying every topic (a Symbol: no topic string can collide with it). */
const ANY_TOPIC = Symbol('any topic');

const CHANNEL = 'siteplane_changes';

/**
 * Several processes on one PostgreSQL: a notification is delivered here at once and sent with
 * pg_notify to every process LISTENing (this one included: a doubled read is harmless). The
 * listening connection is opened lazily, on the first subscription, and opened again after it drops.
 */
export class PostgresNotifier extends InProcessNotifier {
  private listener: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly send: (channel: string, topic: string) => Promise<unknown>,
    private readonly onError: (error: Error) => void = () => undefined,
  ) {
    super();
  }

  override notify(topic: string): void {
    super.notify(topic);
    this.send(CHANNEL, topic).catch((error: Error) => this.onError(error));
  }

  override subscribe(topic: string, listener: () => void): () => void {
    void this.listen();
    return super.subscribe(topic, listener);
  }

  override subscribePrefix(prefix: string, listener: (topic: string) => void): () => void {
    void this.listen();
    return super.subscribePrefix(prefix, listener);
  }

  private listen(): Promise<void> {
    if (this.closed || this.listener) return Promise.resolve();
    this.connecting ??= (async () => {
      const client = new (await loadPg()).Client({ connectionString: this.databaseUrl });
      client.on('notification', (message) => {
        if (message.channel === CHANNEL && message.payload) this.emit(message.payload);
      });
      client.on('error', (error) => {
        this.onError(error);
        if (this.listener === client) this.listener = null;
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${CHANNEL}`);
        if (this.closed) await client.end();
        else this.listener = client;
      } catch (error) {
        this.onError(error as Error);
        await client.end().catch(() => undefined);
      }
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  override async close(): Promise<void> {
    this.closed = true;
    await this.connecting;
    await this.listener?.end().catch(() => undefined);
    this.listener = null;
    await super.close();
  }
}

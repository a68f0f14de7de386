/**
 * Pebble validates HTTP-01 on port 5002 of the address the mock DNS gives (its `httpPort`), where
 * a real CA uses port 80. This forwards 127.0.0.1:5002 to nginx on 127.0.0.1:80 byte for byte, so
 * the challenge is answered by the site's real vhost (production config, Host header untouched)
 * without a test-only `listen` in it and without changing pebble.sh, whose other users
 * (test/system/tls/http01.test.ts) bind 5002 themselves. The port is the lock between such
 * suites: whoever holds it answers; the other waits until it is free.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { listenWhenFree } from '../../support/listen-when-free.js';

export interface Forwarder {
  close(): Promise<void>;
}

export async function forwardPort(from: number, to: number, waitMs = 180_000): Promise<Forwarder> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: to });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await listenWhenFree(server, from, waitMs);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * For the HTTP-01 cases of a describe block: 5002 → nginx's 80 while they run, and free again
 * afterwards so other suites that bind 5002 wait as briefly as possible.
 */
export function holdHttp01Port(): void {
  let forwarder: Forwarder | null = null;
  beforeAll(async () => {
    forwarder = await forwardPort(5002, 80);
  }, 200_000);
  afterAll(async () => {
    await forwarder?.close();
  });
}

import type { Server } from 'node:net';

/**
 * Listens on 127.0.0.1:`port`, waiting (up to `waitMs`) while another suite holds it: port 5002,
 * where Pebble validates HTTP-01, is shared by test/system/tls and test/system/tls-sites, and the
 * port itself is the lock between them.
 */
export async function listenWhenFree(server: Server, port: number, waitMs: number): Promise<void> {
  const until = Date.now() + waitMs;
  for (;;) {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      server.once('error', resolve);
      server.listen(port, '127.0.0.1', () => {
        server.removeAllListeners('error');
        resolve(null);
      });
    });
    if (!error) return;
    if (error.code !== 'EADDRINUSE' || Date.now() > until) throw error;
    await new Promise((r) => setTimeout(r, 500));
  }
}

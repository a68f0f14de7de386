import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy to a local port that can go silent: after freeze() it keeps every socket open but
 * forwards nothing, like a network path that died without a FIN or RST. Only keep-alives notice.
 */
export class FreezableProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private frozen = false;

  constructor(private readonly targetPort: number) {}

  async listen(): Promise<number> {
    this.server = createServer((client) => {
      const upstream = connect(this.targetPort, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.on('data', (chunk) => this.frozen || upstream.write(chunk));
      upstream.on('data', (chunk) => this.frozen || client.write(chunk));
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    return address.port;
  }

  freeze(): void {
    this.frozen = true;
  }

  thaw(): void {
    this.frozen = false;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

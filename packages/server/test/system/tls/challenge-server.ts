/**
 * Serves HTTP-01 tokens on 127.0.0.1:5002, where Pebble validates (its `httpPort`). Stands in
 * for the site's nginx, which serves them in production behind the same Http01Hooks.
 */
import http from 'node:http';
import type { Http01Hooks } from '../../../src/tls/challenge-hooks.js';
import { listenWhenFree } from '../support/listen-when-free.js';

export interface ChallengeServer {
  hooks: Http01Hooks;
  /** Tokens currently published. */
  published: Map<string, string>;
  /** Tokens that were fetched while published (by the CA). */
  served: string[];
  removed: string[];
  close(): Promise<void>;
}

const PREFIX = '/.well-known/acme-challenge/';

export async function startChallengeServer(port = 5002): Promise<ChallengeServer> {
  const published = new Map<string, string>();
  const served: string[] = [];
  const removed: string[] = [];
  const server = http.createServer((req, res) => {
    const token = req.url?.startsWith(PREFIX) ? req.url.slice(PREFIX.length) : '';
    const answer = published.get(token);
    if (answer === undefined) {
      res.writeHead(404).end();
      return;
    }
    served.push(token);
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end(answer);
  });
  // Port 5002 is shared with test/system/tls-sites (which forwards it to nginx while its HTTP-01
  // cases run): whoever binds it first answers, the other waits until it is free.
  await listenWhenFree(server, port, 100_000);
  return {
    published,
    served,
    removed,
    hooks: {
      async publish(token, keyAuthorization) {
        published.set(token, keyAuthorization);
      },
      async remove(token) {
        published.delete(token);
        removed.push(token);
      },
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * How long a Node site's old process may take to finish the requests it holds once PM2 stops it
 * (a reload after a deployment or rollback, a stop). PM2's kill_timeout is a little longer, so
 * the process ends itself first; a request still open then (a long poll, a WebSocket) is cut.
 */
export const DRAIN_MS = 8_000;
export const KILL_TIMEOUT_MS = DRAIN_MS + 2_000;

/**
 * JavaScript (CommonJS) run first in every process Siteplane starts under PM2 for a Node site (the
 * placeholder app and each release's launcher), before the app itself.
 *
 * Why: PM2's cluster reload starts the new worker, waits until it listens, then sends the old one
 * SIGINT. A Node program without a handler dies on that signal at once, and every request it was
 * answering is cut; worse, a connection the cluster master (PM2's daemon) was just handing to that
 * worker stays open in the master with nobody to answer it, so the visitor waits until nginx gives
 * up (seen in a CI run: 1 request in 55 without an answer in 5 s). Apps cannot be asked to handle
 * this themselves, so the launcher does it for them: every server the app listens with is recorded,
 * and on SIGINT or SIGTERM each stops accepting (in cluster mode the master then hands new
 * connections only to the new worker, and gives back any it had not delivered), idle keep-alive
 * connections close, and the process exits as soon as the requests in progress are answered — at
 * the latest after DRAIN_MS. An app that handles these signals itself keeps its own handler too.
 */
export const GRACEFUL_STOP = `(() => {
  const net = require('node:net');
  const servers = new Set();
  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function (...args) {
    servers.add(this);
    return listen.apply(this, args);
  };
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(0), ${DRAIN_MS}).unref();
    const open = [...servers].filter((server) => server.listening);
    let left = open.length;
    if (left === 0) process.exit(0);
    for (const server of open) {
      server.close(() => {
        left -= 1;
        if (left === 0) process.exit(0);
      });
      if (typeof server.closeIdleConnections === 'function') server.closeIdleConnections();
    }
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
})();`;

/**
 * JavaScript (CommonJS) run first in each release's launcher: an app listening on the site's own
 * port (PORT) on every address (`listen(PORT)`, as most apps and `next start` do) listens on
 * 127.0.0.1 instead.
 *
 * Why: nginx reaches the app at 127.0.0.1:PORT, so nothing is lost — and two things are won. The
 * port is not open to the internet beside nginx (and its TLS). And PM2's cluster reload works: the
 * new worker's listen is served by the cluster master from the handle the old worker holds only
 * when both ask for the same address; the placeholder and the releases before listen on
 * 127.0.0.1, so an app asking for `::` failed with EADDRINUSE until PM2 gave up on it (seen in CI:
 * a Next app's first deploy, PM2 waiting its whole listen timeout, then 502 until switched back).
 * Another port, or an explicit non-wildcard address, is left as the app asks.
 */
export const LOOPBACK_LISTEN = `(() => {
  const net = require('node:net');
  const port = Number(process.env.PORT);
  const wildcard = (host) => host === undefined || host === null || host === '' || host === '0.0.0.0' || host === '::';
  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function (...args) {
    const [first] = args;
    if (first !== null && typeof first === 'object' && Number(first.port) === port && wildcard(first.host)) {
      args[0] = { ...first, host: '127.0.0.1' };
    } else if ((typeof first === 'number' || (typeof first === 'string' && /^[0-9]+$/.test(first))) && Number(first) === port) {
      if (typeof args[1] === 'string') {
        if (wildcard(args[1])) args[1] = '127.0.0.1';
      } else if (args[1] === undefined || args[1] === null) args[1] = '127.0.0.1';
      else args.splice(1, 0, '127.0.0.1');
    }
    return listen.apply(this, args);
  };
})();`;

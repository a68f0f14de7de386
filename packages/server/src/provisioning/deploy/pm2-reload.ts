/**
 * PM2_RELOAD_JS: `pm2 reload <name>` without PM2's command line, for `node -e` as the site user
 * (PM2_HOME set): argv[1] is PM2's package directory, argv[2] the process name.
 *
 * Why: the `pm2` program loads PM2's whole command line before it asks the daemon anything, and
 * on a loaded 2-core server that alone took 1–2 s (`pm2 -v` 1.2–2.2 s at load 18, `node -e ''`
 * 0.1–0.2 s): most of a rollback's time. This asks the user's daemon directly over its socket
 * (PM2_HOME/rpc.sock) with the two small modules PM2's own client uses, the same calls the command
 * line makes: the process list to find the name's ids, then `reloadProcessId` for each, one after
 * another — the daemon's cluster reload (a new worker, and the old one stopped once it listens).
 * PM2 is installed from npm at whatever version is current, so its internals may move: exit 2
 * means nothing was asked of the daemon yet (modules not found, no daemon, no such process) and the
 * caller runs `pm2 reload` instead; exit 1 is a reload the daemon refused or did not finish.
 */
export const PM2_RELOAD_JS = `'use strict';
const dir = process.argv[1];
const name = process.argv[2];
const done = (code, message) => {
  if (message) process.stdout.write(message + '\\n');
  process.exit(code);
};
let axon;
let rpc;
try {
  axon = require(dir + '/modules/pm2-axon');
  rpc = require(dir + '/modules/pm2-axon-rpc');
} catch (error) {
  done(2, "PM2's client modules not found: " + error.message);
}
const sock = axon.socket('req');
const client = new rpc.Client(sock);
let asked = false;
const waiting = setTimeout(() => done(2, 'the PM2 daemon did not answer'), 5000);
// axon retries quietly on a refused or missing socket (no daemon): 'socket error' reports every
// error at once, so the command line (which starts a daemon) takes over without waiting.
const failed = (error) => done(asked ? 1 : 2, 'PM2 daemon: ' + error.message);
sock.on('error', failed);
sock.on('socket error', failed);
sock.once('connect', () => {
  client.call('getMonitorData', {}, (error, list) => {
    clearTimeout(waiting);
    if (error || !Array.isArray(list)) return done(2, 'no process list from the PM2 daemon');
    const ids = list
      .filter((p) => (p.name ?? (p.pm2_env && p.pm2_env.name)) === name)
      .map((p) => (p.pm_id ?? (p.pm2_env && p.pm2_env.pm_id)));
    if (ids.length === 0 || ids.some((id) => typeof id !== 'number')) return done(2, 'no PM2 process ' + name);
    asked = true;
    const next = (i) => {
      if (i === ids.length) return done(0);
      client.call('reloadProcessId', { id: ids[i], env: {} }, (failure) =>
        failure ? done(1, 'pm2 reload ' + name + ' failed: ' + failure.message) : next(i + 1),
      );
    };
    next(0);
  });
});
sock.connect(process.env.PM2_HOME + '/rpc.sock');
`;

/**
 * RELOAD, a shell function for scripts run as the site user with $name (the process) and $reload_js
 * (PM2_RELOAD_JS) set: reloads through the daemon's socket, or through `pm2 reload` when that
 * cannot be asked (exit 2 above). Prints `reloaded MS daemon|cli`; on failure prints the error and
 * exits 1.
 */
export const RELOAD = `reload() {
  started=$(date +%s%N) how=daemon
  pm2_dir=$(readlink -f -- "$(command -v pm2)" 2>/dev/null) || pm2_dir=
  pm2_dir=\${pm2_dir%/bin/*}
  out=$(node -e "$reload_js" "$pm2_dir" "$name" 2>&1) && rc=0 || rc=$?
  if [ "$rc" -eq 2 ]; then
    how=cli
    out=$(pm2 reload "$name" 2>&1) && rc=0 || rc=1
  fi
  if [ "$rc" -ne 0 ]; then echo "pm2 reload $name failed:"; printf '%s\\n' "$out" | tail -n 20; exit 1; fi
  echo "reloaded $(( ($(date +%s%N) - started) / 1000000 )) $how"
}`;

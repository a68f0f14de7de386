import type { CommandResult, RunOptions } from '../../../src/provisioning/executor.js';
import { fail, ok } from './fake-commands.js';
import type { FakeServer } from './fake-server.js';

/** Users, programs, daemons, databases, npm and PM2 of the fake server. */
export function dispatchSystem(server: FakeServer, argv: string[], options: RunOptions): CommandResult | null {
  const { fs } = server;
  const [cmd, ...args] = argv;
  if (cmd === 'sh' && args[1] === 'command -v -- "$1"') {
    return server.programs.has(args[3]!) ? ok(`/usr/bin/${args[3]}\n`) : fail('', 1);
  }
  if (cmd === 'env' && args[0] === 'node' && args[1] === '--version') {
    return server.nodeVersion ? ok(`v${server.nodeVersion}\n`) : fail('env: ‘node’: No such file or directory', 127);
  }
  if (cmd === 'env' && args[0] === 'node' && args[1] === '-p') {
    // Debian's node: /usr/bin/node → nodejs; its headers (/usr/include/node) come with libnode-dev.
    return server.nodeVersion
      ? ok(`/usr/bin/nodejs\nv${server.nodeVersion}\n`)
      : fail('env: ‘node’: No such file or directory', 127);
  }
  if (cmd === 'getent') {
    const line = server.passwdLine(args[args.length - 1]!);
    return line === null ? fail('', 2) : ok(line);
  }
  if (cmd === 'id' && args[0] === '-Gn') {
    const user = args[args.length - 1]!;
    const line = server.groupsLine(user);
    return line === null ? fail(`id: '${user}': no such user`) : ok(line);
  }
  if (cmd === 'useradd') {
    const user = args[args.length - 1]!;
    if (server.users.has(user)) return fail(`useradd: user '${user}' already exists`, 9);
    server.addUser(user);
    return ok();
  }
  // Listing nginx's workers through /proc (services.ts): this fake has no /proc, like a kernel
  // that does not list children, so a reload does not wait for old workers.
  if (cmd === 'sh' && args[1]?.includes('/task/$m/children')) return ok('');
  if (cmd === 'nginx') return nginx(server, args);
  if (cmd?.startsWith('php-fpm')) {
    if (!server.programs.has(cmd)) return fail(`${cmd}: not found`, 127);
    if (args[0] === '-t') return fs.read(args[2]!) === undefined ? fail('no config') : ok();
    if (fs.get('/run/php')?.type !== 'dir') return fail('unable to create the pid file: /run/php does not exist');
    server.startDaemon(cmd, `/run/php/php${cmd.slice('php-fpm'.length)}-fpm.pid`);
    return ok();
  }
  if (cmd === 'kill') {
    const [signal, pid] = args;
    if (!server.isAlive(pid!)) return fail(`kill: (${pid}) - No such process`);
    return signal === '-0' || signal === '-USR2' ? ok() : fail('unexpected signal');
  }
  if (cmd === 'systemctl') {
    if (!server.systemd) return fail("System has not been booted with systemd as init system (PID 1). Can't operate.");
    if (args[1] === 'mariadb' || args[1] === 'mysql') server.mysql.running = true;
    if (args[1] === 'postgresql') server.postgres.running = true;
    if (args[1] === 'nginx') server.running.set('nginx', 1);
    return ok();
  }
  if (cmd?.startsWith('/etc/init.d/')) {
    if (fs.read(cmd) === undefined) return fail(`${cmd}: not found`, 127);
    if (cmd.endsWith('postgresql')) server.postgres.running = true;
    else server.mysql.running = true;
    return ok();
  }
  if (cmd === 'mysql') {
    if (options.asUser || !options.sudo) return fail('mysql must run as root over the socket');
    if (!server.mysql.installed) return fail('mysql: not found', 127);
    return server.mysql.run(options.stdin ?? '');
  }
  if (cmd === 'psql') {
    if (options.asUser !== 'postgres') return fail('psql: peer authentication failed');
    if (!server.postgres.installed) return fail('psql: not found', 127);
    return server.postgres.run(options.stdin ?? '');
  }
  if (cmd === 'grep' && args.includes('/etc/nginx/sites-enabled')) {
    const needle = args[args.length - 2]!;
    const hits = fs
      .subtree('/etc/nginx/sites-enabled')
      .filter((p) => p !== '/etc/nginx/sites-enabled' && fs.read(p)?.includes(needle));
    return hits.length > 0 ? ok(hits.map((h) => `${h}\n`).join('')) : fail('', 1);
  }
  if (cmd === 'npm') return npm(server, args, options);
  if (cmd === 'node' && args[0] === 'node_modules/directus/cli.js' && args[1] === 'bootstrap') {
    if (!isBuilt(server, options.cwd!, 'isolated-vm')) {
      return fail(
        `Error: Cannot find module './out/isolated_vm'\nRequire stack:\n- ${options.cwd}/node_modules/isolated-vm/isolated-vm.js`,
      );
    }
    const configPath = options.env?.CONFIG_PATH;
    if (!configPath) return fail('no CONFIG_PATH');
    // On SQLite the bootstrap creates the database file, under the command's umask (022: 0644).
    const config = JSON.parse(fs.read(configPath) ?? '{}') as Record<string, unknown>;
    if (config.DB_CLIENT === 'sqlite3' && typeof config.DB_FILENAME === 'string' && !fs.get(config.DB_FILENAME)) {
      const owner = options.asUser ?? 'root';
      fs.write(config.DB_FILENAME, 'SQLite format 3\0', { owner, group: owner, mode: '644' });
    }
    return ok('Directus bootstrapped\n');
  }
  if (cmd === 'pm2') return pm2(server, args, options);
  if (cmd && /^php\d\.\d$/.test(cmd)) return phpCli(server, cmd, options);
  return null;
}

function nginx(server: FakeServer, args: string[]): CommandResult {
  const { fs } = server;
  if (!server.programs.has('nginx')) return fail('nginx: not found', 127);
  if (args[0] === '-t') {
    for (const path of fs.subtree('/etc/nginx/sites-enabled')) {
      if (path === '/etc/nginx/sites-enabled') continue;
      const content = fs.read(path);
      if (content === undefined) return fail(`nginx: [emerg] open() "${path}" failed (2: No such file or directory)`);
      if (server.nginxRejects && content.includes(server.nginxRejects)) {
        return fail(
          `nginx: [emerg] unknown directive "${server.nginxRejects}" in ${path}:3\nnginx: configuration file /etc/nginx/nginx.conf test failed`,
        );
      }
    }
    return ok();
  }
  if (args[0] === '-s')
    return server.running.has('nginx')
      ? ok()
      : fail('nginx: [error] open() "/run/nginx.pid" failed (2: No such file or directory)');
  if (args.length === 0) {
    server.startDaemon('nginx', '/run/nginx.pid');
    return ok();
  }
  return fail('unexpected nginx arguments');
}

function npm(server: FakeServer, args: string[], options: RunOptions): CommandResult {
  // Debian's or NodeSource's npm, or the one node-from-npm links into /usr/local/bin.
  if (!server.programs.has('npm') && server.fs.read('/usr/local/bin/npm') === undefined) return fail('npm: not found', 127);
  if (args[0] === 'install' && args[1] === '--global') {
    if (options.asUser) return fail('global installs need root');
    server.programs.add('pm2');
    return ok();
  }
  if (args.join(' ') === 'config get node-gyp' && !options.asUser) return ok(`${npmNodeGyp(server)}\n`);
  if (!options.asUser || !options.cwd) return fail('npm for a site must run as its user in a directory');
  if (args[0] === 'exec') {
    const name = args[args.indexOf('--') + 2]!;
    const dir = `${options.cwd}/${name}`;
    server.fs.mkdirp(dir, { owner: options.asUser, group: options.asUser });
    server.fs.write(`${dir}/.env`, 'HOST=0.0.0.0\nPORT=1337\nAPP_KEYS=a,b\nDATABASE_CLIENT=sqlite\n', {
      owner: options.asUser,
      group: options.asUser,
    });
    // create-strapi-app X pins @strapi/strapi to X and adds the SQLite driver.
    const version = /@([0-9.]+)$/.exec(args[args.indexOf('--') + 1]!)?.[1] ?? 'latest';
    const pkg = { dependencies: { '@strapi/strapi': version, 'better-sqlite3': '12.8.0' } };
    server.fs.write(`${dir}/package.json`, JSON.stringify(pkg), { owner: options.asUser, group: options.asUser });
    return ok();
  }
  if (args[0] === 'pkg' && args[1] === 'set' && args[2] === '--json') return npmPkgSet(server, args.slice(3), options);
  if (args[0] === 'install') return npmInstall(server, args, options);
  if (args[0] === 'run' && args[1] === 'build') return ok();
  return fail(`unexpected npm ${args.join(' ')}`);
}

/** `npm pkg set --json a.b=<json>…` in cwd's package.json. */
function npmPkgSet(server: FakeServer, settings: string[], options: RunOptions): CommandResult {
  const path = `${options.cwd}/package.json`;
  const pkg = JSON.parse(server.fs.read(path) ?? 'null') as Record<string, unknown> | null;
  if (pkg === null) return fail('npm error code ENOENT\nnpm error path package.json');
  for (const setting of settings) {
    const [key = '', value = ''] = setting.split(/=(.*)/s);
    const [head = '', ...rest] = key.split('.');
    const parent = (pkg[head] ?? {}) as Record<string, unknown>;
    parent[rest.join('.')] = JSON.parse(value);
    pkg[head] = parent;
  }
  const node = server.fs.get(path);
  if (node?.type === 'file') node.content = `${JSON.stringify(pkg, null, 2)}\n`;
  return ok();
}

/** The node-gyp.js npm falls back to: in the tree of the npm from the registry, else Debian's node-gyp package. */
function npmNodeGyp(server: FakeServer): string {
  const { fs } = server;
  if (fs.read('/usr/local/bin/npm') === undefined) return '/usr/share/nodejs/node-gyp/bin/node-gyp.js';
  return `${fs.resolve('/usr/local/bin/npm').replace(/\/bin\/npm-cli\.js$/, '')}/node_modules/node-gyp/bin/node-gyp.js`;
}

/**
 * The native modules of the projects the fakes scaffold: the strapi scaffold's better-sqlite3,
 * directus's isolated-vm and its optional sqlite3. As npm 12 does, an install builds only those
 * package.json's allowScripts lets it; node-gyp needs Node's headers, from npm_config_nodedir or
 * downloaded from nodejs.org. sqlite3 brings node-gyp 8.x (or package.json's override) to the
 * project's top, and its .bin comes before npm's own node-gyp: before 10 it fails on Python 3.12+.
 */
function npmInstall(server: FakeServer, args: string[], options: RunOptions): CommandResult {
  const { fs } = server;
  const own = { owner: options.asUser!, group: options.asUser! };
  fs.mkdirp(`${options.cwd}/node_modules`, own);
  const pkg = JSON.parse(fs.read(`${options.cwd}/package.json`) ?? '{}') as {
    dependencies?: Record<string, string>;
    allowScripts?: Record<string, boolean>;
    overrides?: Record<string, string>;
  };
  const wants = [...Object.keys(pkg.dependencies ?? {}), ...args.filter((a) => !a.startsWith('-'))];
  const natives: [string, boolean][] = [
    ...(wants.includes('better-sqlite3') ? [['better-sqlite3', false] as [string, boolean]] : []),
    ...(wants.some((w) => w.startsWith('directus'))
      ? [['isolated-vm', false] as [string, boolean], ['sqlite3', true] as [string, boolean]]
      : []),
  ];
  const gyp = natives.some(([name]) => name === 'sqlite3') ? (pkg.overrides?.['node-gyp'] ?? '8.4.1') : null;
  if (gyp !== null) {
    fs.mkdirp(`${options.cwd}/node_modules/node-gyp`, own);
    fs.write(`${options.cwd}/node_modules/node-gyp/package.json`, JSON.stringify({ name: 'node-gyp', version: gyp }), own);
  }
  const oldGyp = gyp !== null && Number(gyp.split('.')[0]) < 10 && Number(server.python.split('.')[1]) >= 12;
  for (const [name, optional] of natives) {
    const dir = `${options.cwd}/node_modules/${name}`;
    // npm does not run an installed package's install script again.
    if (fs.get(dir) !== undefined) continue;
    fs.mkdirp(dir, own);
    if (pkg.allowScripts?.[name] !== true) continue;
    const nodedir = options.env?.npm_config_nodedir;
    const headers = nodedir !== undefined && fs.read(`${nodedir}/include/node/node_version.h`) !== undefined;
    if (!headers && !server.reachesNodejsOrg) {
      if (optional) continue;
      return fail(`gyp ERR! stack FetchError: request to https://nodejs.org/download/release/ failed\nnpm error path ${dir}`);
    }
    if (oldGyp) {
      if (optional) continue;
      return fail(
        `npm error     from distutils.version import StrictVersion\nnpm error ModuleNotFoundError: No module named 'distutils'\nnpm error gyp ERR! node-gyp -v v${gyp}\nnpm error path ${dir}`,
      );
    }
    fs.mkdirp(`${dir}/build/Release`, own);
    fs.write(`${dir}/build/Release/${name}.node`, 'ELF', own);
  }
  return ok();
}

function isBuilt(server: FakeServer, cwd: string, name: string): boolean {
  return server.fs.read(`${cwd}/node_modules/${name}/build/Release/${name}.node`) !== undefined;
}

function pm2(server: FakeServer, args: string[], options: RunOptions): CommandResult {
  if (!server.programs.has('pm2')) return fail('pm2: not found', 127);
  const user = options.asUser;
  if (!user) return args[0] === 'startup' && server.systemd ? pm2Startup(server, args) : fail('pm2 must run as the site user');
  if (options.env?.PM2_HOME !== `/home/${user}/.pm2`) return fail("PM2_HOME is not the user's");
  // `kill` too: PM2 starts a daemon to stop it.
  server.startPm2Daemon(user);
  const apps = server.pm2Of(user);
  const [verb, target] = args;
  if (verb === 'kill') {
    server.stopPm2Daemon(user);
    return ok('[PM2] [v] All Applications Stopped\n[PM2] [v] PM2 Daemon Stopped\n');
  }
  if (verb === 'jlist')
    return ok(`${JSON.stringify([...apps.entries()].map(([name, app]) => ({ name, pm2_env: { status: app.status } })))}\n`);
  if (verb === 'start' || verb === 'startOrReload') {
    const content = server.fs.read(target!);
    if (content === undefined) return fail(`[PM2][ERROR] File ${target} not found`);
    const config = JSON.parse(content.slice(content.indexOf('{'), content.lastIndexOf('}') + 1)) as { apps: { name: string }[] };
    for (const app of config.apps) apps.set(app.name, { status: 'online', ecosystem: content });
    return ok();
  }
  if (verb === 'restart') {
    const app = apps.get(target!);
    if (!app) return fail('not found');
    app.status = 'online';
    return ok();
  }
  if (verb === 'delete') return apps.delete(target!) ? ok() : fail(`[PM2][ERROR] Process or Namespace ${target} not found`);
  if (verb === 'save') {
    server.pm2Saved.set(user, [...apps.keys()].sort());
    return ok();
  }
  return fail(`unexpected pm2 ${args.join(' ')}`);
}

/** `pm2 startup systemd -u <user> --hp <home>` as root: the unit, enabled for multi-user.target. */
function pm2Startup(server: FakeServer, args: string[]): CommandResult {
  const user = args[args.indexOf('-u') + 1];
  if (args[1] !== 'systemd' || !user) return fail(`unexpected pm2 ${args.join(' ')}`);
  const unit = `/etc/systemd/system/pm2-${user}.service`;
  server.fs.mkdirp('/etc/systemd/system/multi-user.target.wants');
  server.fs.write(unit, `[Service]\nUser=${user}\nExecStart=/usr/bin/pm2 resurrect\n`);
  server.fs.nodes.set(`/etc/systemd/system/multi-user.target.wants/pm2-${user}.service`, {
    type: 'link',
    target: unit,
    owner: 'root',
  });
  return ok();
}

function phpCli(server: FakeServer, binary: string, options: RunOptions): CommandResult {
  if (!server.programs.has(binary)) return fail(`${binary}: not found`, 127);
  if (!options.asUser) return fail('php scripts of a site run as its user');
  const script = options.stdin ?? '';
  const encoded = /base64_decode\('([A-Za-z0-9+/=]*)'\)/.exec(script)?.[1];
  if (!script.includes('wp_install(') || !encoded) return fail('unexpected php script');
  const data = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8')) as Record<string, string> & { root: string };
  server.wordpressRuns.push(data);
  if (server.wordpressInstalled.has(data.root)) return ok('already installed\n');
  server.wordpressInstalled.add(data.root);
  return ok('installed\n');
}

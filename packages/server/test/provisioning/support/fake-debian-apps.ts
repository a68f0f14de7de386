import type { CommandResult, RunOptions } from '../../../src/provisioning/executor.js';
import { fail, ok } from './fake-commands.js';
import { parent } from './fake-fs.js';
import type { FakeServer } from './fake-server.js';

/**
 * Debian's `wordpress` and `phpmyadmin` packages on the fake server, and the commands that copy
 * their trees as the site user (mkdir, cp -R -L, find -L) and preseed debconf. The trees have the
 * links that make a plain copy wrong: absolute ones into /etc and /var/lib (wp-config.php,
 * wp-content, the default theme) and relative ones into shared libraries.
 */
export const DEBIAN_APPS: Record<string, string> = {
  wordpress: '6.1.9+dfsg1-0+deb12u1',
  'wordpress-theme-twentytwentythree': '6.1.9+dfsg1-0+deb12u1',
  phpmyadmin: '4:5.2.1+dfsg-1+deb12u1',
  'php8.2': '8.2.28-1~deb12u1',
};

/** Debian 12's libraries/vendor_config.php of phpMyAdmin: configuration in /etc, cache in /var/lib. */
export const DEBIAN_VENDOR_CONFIG = `<?php
return [
    'autoloadFile' => ROOT_PATH . DIRECTORY_SEPARATOR . 'autoload.php',
    'tempDir' => '/var/lib/phpmyadmin/tmp/',
    'configFile' => '/etc/phpmyadmin/config.inc.php',
];
`;

export function installDebianApp(server: FakeServer, name: string): void {
  const { fs } = server;
  const link = (path: string, target: string) => fs.nodes.set(path, { type: 'link', target, owner: 'root' });
  if (name === 'wordpress') {
    fs.mkdirp('/usr/share/wordpress/wp-includes/ID3');
    fs.write('/usr/share/wordpress/index.php', '<?php // WordPress');
    fs.write('/usr/share/wordpress/wp-settings.php', '<?php // WordPress');
    fs.mkdirp('/etc/wordpress');
    fs.write('/etc/wordpress/wp-config.php', "<?php require '/etc/wordpress/config-'.$_SERVER['HTTP_HOST'].'.php';");
    fs.write('/etc/wordpress/htaccess', '# Debian');
    link('/usr/share/wordpress/wp-config.php', '/etc/wordpress/wp-config.php');
    link('/usr/share/wordpress/.htaccess', '/etc/wordpress/htaccess');
    fs.mkdirp('/usr/share/php/getid3');
    fs.write('/usr/share/php/getid3/getid3.php', '<?php // getID3');
    link('/usr/share/wordpress/wp-includes/ID3/getid3.php', '../../../php/getid3/getid3.php');
    fs.mkdirp('/var/lib/wordpress/wp-content/themes');
    fs.mkdirp('/var/lib/wordpress/wp-content/plugins');
    link('/usr/share/wordpress/wp-content', '/var/lib/wordpress/wp-content');
  } else if (name === 'wordpress-theme-twentytwentythree') {
    fs.mkdirp('/usr/share/wordpress-themes/twentytwentythree');
    fs.write('/usr/share/wordpress-themes/twentytwentythree/style.css', '/* Theme Name: Twenty Twenty-Three */');
    link('/var/lib/wordpress/wp-content/themes/twentytwentythree', '/usr/share/wordpress-themes/twentytwentythree');
  } else if (name === 'phpmyadmin') {
    if (server.debconf.get('phpmyadmin/dbconfig-install') !== 'false') server.mysql.databases.add('phpmyadmin');
    fs.mkdirp('/usr/share/phpmyadmin/libraries');
    fs.write('/usr/share/phpmyadmin/index.php', '<?php // phpMyAdmin');
    fs.write('/usr/share/phpmyadmin/libraries/vendor_config.php', DEBIAN_VENDOR_CONFIG);
    fs.mkdirp('/usr/share/javascript/jquery');
    fs.write('/usr/share/javascript/jquery/jquery.min.js', '/* jQuery */');
    fs.mkdirp('/usr/share/phpmyadmin/js/vendor/jquery');
    link('/usr/share/phpmyadmin/js/vendor/jquery/jquery.min.js', '../../../../javascript/jquery/jquery.min.js');
  }
}

/**
 * `apt-get install -s`: the plan, nothing changed. Like apt, wordpress's `libapache2-mod-php | php`
 * takes Apache's module unless a php<v> package is installed or named.
 */
export function simulateInstall(server: FakeServer, names: string[]): CommandResult {
  const lines = names.filter((name) => !server.apt.installed.has(name)).map((name) => `Inst ${name} (1.0 Debian:12)`);
  const php = [...server.apt.installed, ...names].some((name) => /^php\d\.\d$/.test(name));
  if (names.includes('wordpress') && !php)
    lines.push('Inst apache2-bin (2.4.62 Debian:12)', 'Inst libapache2-mod-php8.2 (8.2.28 Debian:12)');
  return ok(`${lines.join('\n')}\n`);
}

export function dispatchDebianApps(server: FakeServer, argv: string[], options: RunOptions): CommandResult | null {
  const { fs } = server;
  const [cmd, ...args] = argv;
  const owner = options.asUser ?? 'root';
  if (cmd === 'debconf-set-selections') {
    for (const line of (options.stdin ?? '').split('\n').filter(Boolean)) {
      const [, question, type, ...value] = line.split(/\s+/);
      if (!question || !type) return fail(`error: parse error on line: '${line}'`);
      server.debconf.set(question, value.join(' '));
    }
    return ok();
  }
  if (cmd === 'mkdir' && args[0] === '-m' && args[2] === '--') {
    const path = args[3]!;
    if (fs.get(path)) return fail(`mkdir: cannot create directory '${path}': File exists`);
    if (!fs.hasParent(path)) return fail(`mkdir: cannot create directory '${path}': No such file or directory`);
    fs.nodes.set(path, { type: 'dir', mode: args[1]!.replace(/^0/, ''), owner, group: owner });
    return ok();
  }
  if (cmd === 'find' && args[0] === '-L' && args[2] === '-type' && args[3] === 'l') {
    const dangling = fs.subtree(args[1]!).filter((p) => fs.get(p)?.type === 'link' && !fs.get(fs.resolve(p)));
    return ok(dangling.map((p) => `${p}\n`).join(''));
  }
  if (cmd === 'cp' && args.join(' ').startsWith('-R -L --preserve=mode,timestamps --')) {
    const from = args[4]!.replace(/\/\.$/, '');
    const to = args[5]!;
    if (fs.get(fs.resolve(from))?.type !== 'dir') return fail(`cp: cannot stat '${args[4]}'`);
    return copyDereferenced(server, from, to, owner);
  }
  return null;
}

/** cp -R -L run by `owner`: links become copies of what they point to, every node the owner's. */
function copyDereferenced(server: FakeServer, from: string, to: string, owner: string): CommandResult {
  const { fs } = server;
  const real = fs.resolve(from);
  for (const path of fs.subtree(real)) {
    if (path === real) continue;
    const target = to + path.slice(real.length);
    if (fs.get(target)) continue;
    const node = fs.get(fs.resolve(path));
    if (!node) return fail(`cp: cannot stat '${path}': No such file or directory`);
    if (node.type === 'dir') {
      fs.nodes.set(target, { ...node, owner, group: owner });
      const nested = copyDereferenced(server, path, target, owner);
      if (nested.code !== 0) return nested;
    } else if (node.type === 'file') {
      if (!fs.get(parent(target))) fs.mkdirp(parent(target), { owner, group: owner });
      fs.nodes.set(target, { ...node, owner, group: owner });
    }
  }
  return ok();
}

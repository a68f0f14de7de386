import { createHash } from 'node:crypto';
import type { CommandResult, RunOptions } from '../../../src/provisioning/executor.js';
import { dispatchDebianApps } from './fake-debian-apps.js';
import { dispatchNode } from './fake-node-commands.js';
import { aptCommand } from './fake-packages.js';
import type { FakeServer } from './fake-server.js';
import { dispatchSystem } from './fake-system-commands.js';

/**
 * The commands the steps run, simulated against the fake server's state. Argument shapes are
 * matched exactly as the steps build them, so a changed command shows up as an unknown one.
 * Returns null for a command it does not know.
 */
export const ok = (stdout = ''): CommandResult => ({ code: 0, stdout, stderr: '' });
export const fail = (stderr: string, code = 1): CommandResult => ({ code, stdout: '', stderr: `${stderr}\n` });

export function dispatch(server: FakeServer, argv: string[], options: RunOptions): CommandResult | null {
  const node = dispatchNode(server, argv, options) ?? dispatchDebianApps(server, argv, options);
  if (node) return node;
  const { fs } = server;
  const [cmd, ...args] = argv;
  switch (cmd) {
    case 'stat': {
      const path = args[3]!;
      const node = fs.get(path);
      if (!node) return fail(`stat: cannot statx '${path}': No such file or directory`);
      if (args[1] === '%a') return ok(`${node.type === 'link' ? '777' : node.mode}\n`);
      if (args[1] === '%a %G') return ok(`${node.type === 'link' ? '777 root' : `${node.mode} ${node.group}`}\n`);
      return ok(`${node.type === 'dir' ? 'directory' : node.type === 'link' ? 'symbolic link' : 'regular file'}\n`);
    }
    case 'sha256sum': {
      const content = fs.read(args[1]!);
      if (content === undefined) return fail(`sha256sum: ${args[1]}: No such file or directory`);
      return ok(`${createHash('sha256').update(content, 'utf8').digest('hex')}  ${args[1]}\n`);
    }
    case 'cat': {
      const content = fs.read(args[1]!);
      return content === undefined ? fail(`cat: ${args[1]}: No such file or directory`) : ok(content);
    }
    case 'readlink': {
      const node = fs.get(args[1]!);
      return node?.type === 'link' ? ok(`${node.target}\n`) : fail('');
    }
    case 'install':
      return install(server, args);
    case 'mkdir':
      return mkdir(server, args, options);
    case 'getent': {
      // `getent passwd [--] USER`
      const line = server.passwdLine(args[args.length - 1]!);
      return line === null ? fail('', 2) : ok(line);
    }
    case 'dd': {
      const path = args[0]!.replace(/^of=/, '');
      const node = fs.get(fs.resolve(path));
      const nofollow = args[1] === 'oflag=nofollow';
      if (args[nofollow ? 2 : 1] !== 'status=none' || options.stdin === undefined) return fail('dd: unexpected use');
      if (nofollow && fs.get(path)?.type === 'link')
        return fail(`dd: failed to open '${path}': Too many levels of symbolic links`);
      const own = { owner: options.asUser ?? 'root', group: options.asUser ?? 'root' };
      if (node?.type === 'file') node.content = options.stdin;
      else if (fs.hasParent(path)) fs.write(path, options.stdin, own);
      else return fail(`dd: failed to open '${path}': No such file or directory`);
      return ok();
    }
    case 'mv': {
      const [, , , from, to] = args;
      if (!fs.hasParent(to!)) return fail(`mv: cannot move to '${to}': No such file or directory`);
      return fs.rename(from!, to!) ? ok() : fail(`mv: cannot stat '${from}': No such file or directory`);
    }
    case 'cp': {
      if (args[0] === '-p') {
        const node = fs.get(args[2]!);
        if (!node) return fail('cp: no such file');
        fs.nodes.set(args[3]!, structuredClone(node));
        return ok();
      }
      const [, , source, destination] = args;
      const from = source!.replace(/\/\.$/, '');
      if (fs.get(from)?.type !== 'dir') return fail(`cp: cannot stat '${source}'`);
      fs.copyTree(from, destination!);
      return ok();
    }
    case 'rm': {
      const recursive = args[0] === '-rf';
      for (const path of args.slice(2)) fs.remove(path, recursive);
      return ok();
    }
    case 'ln': {
      const [target, link] = args.slice(4);
      if (!fs.hasParent(link!)) return fail('ln: no such directory');
      fs.nodes.set(link!, { type: 'link', target: target!, owner: options.asUser ?? 'root' });
      return ok();
    }
    case 'chown': {
      const [owner, path] = args[0] === '-R' ? [args[2]!, args[4]!] : [args[1]!, args[3]!];
      const [user, group] = owner.split(':');
      for (const p of args[0] === '-R' ? fs.subtree(path) : [path]) {
        const node = fs.get(p);
        if (node) Object.assign(node, node.type === 'link' ? { owner: user } : { owner: user, group });
      }
      return ok();
    }
    case 'chgrp': {
      // `chgrp -h -- GROUP PATH`: a link's own group, never its target's.
      const node = fs.get(args[3]!);
      if (args[0] !== '-h' || !node) return fail(`chgrp: cannot access '${args[3]}'`);
      if (node.type !== 'link') node.group = args[2]!;
      return ok();
    }
    case 'chmod': {
      if (args[0] === 'go=') {
        // `chmod go= -- PATH…`: the owner's digit kept, group and others cleared (links: their targets).
        for (const path of args.slice(2)) {
          const target = fs.get(fs.resolve(path));
          if (!target || target.type === 'link') return fail(`chmod: cannot access '${path}'`);
          target.mode = `${target.mode.slice(-3, -2)}00`;
        }
        return ok();
      }
      const node = fs.get(args[2]!);
      if (node && node.type !== 'link' && /^0?[0-7]{3}$/.test(args[0]!)) node.mode = args[0]!.replace(/^0/, '');
      else if (node?.type === 'dir' && args[0] === 'o+x') node.mode = node.mode.replace(/.$/, (d) => String(Number(d) | 1));
      else if (args[0] !== 'o+x') return fail(`chmod: unexpected mode ${args[0]}`);
      return ok();
    }
    case 'curl': {
      const out = args[args.indexOf('-o') + 1]!;
      if (!fs.hasParent(out)) return fail('curl: (23) Failure writing output');
      server.downloads.set(out, args[args.length - 1]!);
      fs.write(out, `download of ${args[args.length - 1]}`);
      return ok();
    }
    case 'tar': {
      const archive = args[1]!;
      const destination = args[3]!;
      const url = server.downloads.get(archive) ?? '';
      // Unpacked by whoever runs tar (--no-same-owner).
      const own = { owner: options.asUser ?? 'root', group: options.asUser ?? 'root' };
      if (/phpmyadmin/i.test(url)) {
        fs.write(`${destination}/index.php`, '<?php // phpMyAdmin', own);
        fs.mkdirp(`${destination}/libraries`, own);
        fs.write(`${destination}/libraries/vendor_config.php`, UPSTREAM_VENDOR_CONFIG, own);
      } else {
        fs.write(`${destination}/index.php`, '<?php // WordPress', own);
        fs.write(`${destination}/wp-settings.php`, '<?php // WordPress', own);
        fs.write(`${destination}/wp-config-sample.php`, '<?php // sample', own);
      }
      return ok();
    }
    case 'dpkg-query': {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own ${field} format
      if (args[2] === '${db:Status-Abbrev}') return server.apt.installed.has(args[4]!) ? ok('ii ') : fail('', 1);
      const lines = args
        .slice(4)
        .filter((name) => server.apt.installed.has(name))
        .map((name) => `${name}\tii \n`);
      return { code: lines.length === args.length - 4 ? 0 : 1, stdout: lines.join(''), stderr: '' };
    }
    case 'apt-cache':
    case 'apt-get':
    case 'find':
      return aptCommand(server, argv, options);
    default:
      return dispatchSystem(server, argv, options);
  }
}

function install(server: FakeServer, args: string[]): CommandResult {
  const { fs } = server;
  const directory = args[0] === '-d';
  // -D: missing parent directories are created (0755 under the commands' umask 022).
  const parents = args[0] === '-D';
  const rest = directory || parents ? args.slice(1) : args;
  const own = { mode: '755', owner: 'root', group: 'root' };
  const paths: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a === '-m') own.mode = rest[++i]!.replace(/^0/, '');
    else if (a === '-o') own.owner = rest[++i]!;
    else if (a === '-g') own.group = rest[++i]!;
    else if (a !== '--') paths.push(a);
  }
  for (const name of [own.owner, own.group]) if (!server.users.has(name)) return fail(`install: invalid user '${name}'`);
  if (directory) {
    for (const path of paths) fs.mkdirp(path, own);
    return ok();
  }
  const [source, target] = paths;
  // A real `install /dev/stdin` fails when stdin is a socket: files are created empty, then filled by dd.
  if (source !== '/dev/null') return fail(`install: cannot open '${source}' for reading: No such device or address`);
  if (parents) fs.mkdirp(target!.slice(0, target!.lastIndexOf('/')));
  if (!fs.hasParent(target!)) return fail(`install: cannot create regular file '${target}': No such file or directory`);
  fs.write(target!, '', own);
  return ok();
}

/** `mkdir [-p] [-m MODE] -- PATH…`: made by whoever runs it, who must own the directory it goes in. */
function mkdir(server: FakeServer, args: string[], options: RunOptions): CommandResult {
  const { fs } = server;
  const parents = args[0] === '-p';
  const modeAt = args.indexOf('-m');
  const mode = modeAt >= 0 ? args[modeAt + 1]!.replace(/^0/, '') : '755';
  const owner = options.asUser ?? 'root';
  for (const path of args.slice(args.indexOf('--') + 1)) {
    const parts = path.split('/').filter(Boolean);
    for (let i = parents ? 1 : parts.length; i <= parts.length; i++) {
      const dir = `/${parts.slice(0, i).join('/')}`;
      const node = fs.get(fs.resolve(dir));
      if (node?.type === 'dir' && (parents || i < parts.length)) continue;
      if (node || fs.get(dir)) return fail(`mkdir: cannot create directory '${dir}': File exists`);
      const up = fs.get(fs.resolve(dir.slice(0, dir.lastIndexOf('/')) || '/'));
      if (up?.type !== 'dir') return fail(`mkdir: cannot create directory '${dir}': No such file or directory`);
      if (owner !== 'root' && up.owner !== owner) return fail(`mkdir: cannot create directory '${dir}': Permission denied`);
      fs.nodes.set(dir, { type: 'dir', mode: i === parts.length ? mode : '755', owner, group: owner });
    }
  }
  return ok();
}

/** The shape of phpMyAdmin 5.2's own libraries/vendor_config.php (upstream archive). */
export const UPSTREAM_VENDOR_CONFIG = `<?php
return [
    'autoloadFile' => ROOT_PATH . 'vendor' . DIRECTORY_SEPARATOR . 'autoload.php',
    'tempDir' => ROOT_PATH . 'tmp' . DIRECTORY_SEPARATOR,
    'configFile' => ROOT_PATH . 'config.inc.php',
];
`;

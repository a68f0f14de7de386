import type { CommandResult, RunOptions } from '../../../src/provisioning/executor.js';
import { READ_ACCOUNT_SCRIPT } from '../../../src/provisioning/read-account.js';
import { INSTALL_CONFIG_SCRIPT, INSTALL_CONFIG_THEN_RELOAD_NGINX } from '../../../src/provisioning/steps/config-file.js';
import { POOL_DIRECTORIES } from '../../../src/provisioning/steps/ensure-php-fpm-pool.js';
import { PROBE_SCRIPT } from '../../../src/provisioning/steps/probe.js';
import { RELOAD_NGINX, RELOAD_PHP_FPM } from '../../../src/provisioning/steps/services.js';
import { SITE_DIRECTORIES } from '../../../src/provisioning/steps/site-tree.js';
import { USER_FILE_SCRIPT, USER_LINK_SCRIPT } from '../../../src/provisioning/steps/user-files.js';
import { fail, ok } from './fake-commands.js';
import type { FakeServer } from './fake-server.js';

/**
 * The steps' constant `sh -c` scripts, acted out command by command: each command a script runs
 * goes through server.inner (listed in `executed`, open to scripted failures) in the order and
 * with the arguments the script gives it, so a failure injected into `nginx -t` or `sha256sum`
 * hits the script as it would on a server. Paths a script makes relative (cd) are shown absolute.
 * Returns null for argv that is not one of these scripts.
 */
export function runScript(server: FakeServer, argv: string[], options: RunOptions): CommandResult | null {
  if (argv[0] !== 'sh' || argv[1] !== '-c') return null;
  const args = argv.slice(4);
  const { stdin: _stdin, ...noStdin } = options;
  const sub = (command: string[], withStdin = false) => server.inner(command, withStdin ? options : noStdin);
  switch (argv[2]) {
    case PROBE_SCRIPT:
      return probe(server, args, sub);
    case READ_ACCOUNT_SCRIPT: {
      const entry = sub(['getent', 'passwd', '--', args[0]!]);
      return entry.code === 0 ? ok(`${answer(entry)}\0${answer(sub(['id', '-Gn', '--', args[0]!]))}\0`) : ok('');
    }
    case INSTALL_CONFIG_SCRIPT:
      return installConfig(args, sub);
    case INSTALL_CONFIG_THEN_RELOAD_NGINX: {
      const installed = installConfig(args, sub);
      if (installed.code !== 0 || installed.stdout === 'unchanged\n') return installed;
      const reloaded = reloadNginx(server, sub);
      return { ...reloaded, stdout: `${installed.stdout}${reloaded.stdout}` };
    }
    case RELOAD_NGINX:
      return reloadNginx(server, sub);
    case RELOAD_PHP_FPM: {
      const [unit, pidFile, binary, config] = args as [string, string, string, string];
      if (server.fs.get('/run/systemd/system')?.type === 'dir') {
        const done = sub(['systemctl', 'reload-or-restart', unit]);
        return done.code === 0 ? ok('systemd\n') : done;
      }
      const pid = answer(sub(['cat', '--', pidFile]));
      if (/^[1-9]\d*$/.test(pid) && sub(['kill', '-0', pid]).code === 0) {
        const signalled = sub(['kill', '-USR2', pid]);
        return signalled.code === 0 ? ok(`signalled ${pid}\n`) : signalled;
      }
      const made = sub(['install', '-d', '-m', '0755', '/run/php']);
      if (made.code !== 0) return made;
      const started = sub([binary, '--fpm-config', config]);
      return started.code === 0 ? ok('started\n') : started;
    }
    case SITE_DIRECTORIES: {
      const [group, home, root, owner, privateRoot, acme, user, siteRoot, link, dir, file, mode] = args as [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
      ];
      const steps: string[][] = [];
      if (home) steps.push(['chgrp', '-h', '--', group, home], ['chmod', '0710', '--', home]);
      if (root) steps.push(['mkdir', '-m', '0750', '--', root], ['chown', '-h', `${owner}:${group}`, '--', root]);
      if (privateRoot) steps.push(['chgrp', '-h', '--', group, privateRoot]);
      if (acme) steps.push(['install', '-d', '-m', '0755', '-o', 'root', '-g', 'root', '--', acme]);
      const rooted = sequence(steps, sub);
      if (rooted.code !== 0 || !user) return rooted;
      // `runuser -u USER -- sh -c USER_PART …`: the rest runs as the site's user.
      const asUser: RunOptions = { ...options, asUser: user, umask: '022' };
      const { stdin: _content, ...asUserNoStdin } = asUser;
      const userSub: Sub = (command, withStdin = false) => server.inner(command, withStdin ? asUser : asUserNoStdin);
      if (server.fs.get(server.fs.resolve(siteRoot))?.type !== 'dir') return fail(`sh: cd: can't cd to ${siteRoot}`, 2);
      const userSteps: string[][] = [];
      if (mode === 'private') userSteps.push(['chmod', '0750', '--', siteRoot]);
      userSteps.push(['mkdir', '-p', '--', `${siteRoot}/releases/initial`, `${siteRoot}/shared`]);
      if (link === 'link')
        userSteps.push(
          ['ln', '-s', '-f', '-n', '--', 'releases/initial', `${siteRoot}/current.siteplane-new`],
          ['mv', '-f', '-T', '--', `${siteRoot}/current.siteplane-new`, `${siteRoot}/current`],
        );
      if (file) userSteps.push(['mkdir', '-p', '--', dir]);
      const made = sequence(userSteps, userSub);
      if (made.code !== 0 || !file) return made;
      // `cat > file`: what dd of=file does, as the user.
      return userSub(['dd', `of=${file}`, 'status=none'], true);
    }
    case POOL_DIRECTORIES: {
      const [privateDir, tmp, sessions] = args as [string, string, string];
      return sequence(
        [
          ['mkdir', '-p', '--', tmp, sessions],
          ['chmod', '0700', '--', privateDir],
          ['chmod', '0700', '--', tmp],
          ['chmod', '0700', '--', sessions],
        ],
        sub,
      );
    }
    case USER_FILE_SCRIPT:
      return userFile(server, args, sub);
    case USER_LINK_SCRIPT: {
      const [target, temporary, link] = args as [string, string, string];
      return sequence(
        [
          ['ln', '-s', '-f', '-n', '--', target, temporary],
          ['mv', '-f', '-T', '--', temporary, link],
        ],
        sub,
      );
    }
    default:
      return null;
  }
}

/** user-files.ts USER_FILE_SCRIPT: compare, then temporary file → mode → rename over the file. */
function userFile(server: FakeServer, args: string[], sub: Sub): CommandResult {
  const [f, mode, want] = args as [string, string, string];
  const fresh = `${f}.siteplane-new`;
  if (want && answer(sub(['sha256sum', '--', f])).split(' ')[0] === want) return ok('unchanged\n');
  const was = server.fs.get(f) ? 'updated' : 'created';
  const removed = sub(['rm', '-f', '--', fresh]);
  if (removed.code !== 0) return removed;
  // `cat > new`: what dd of=new does.
  const written = sequence(
    [
      ['dd', `of=${fresh}`, 'status=none'],
      ['chmod', mode, '--', fresh],
      ['mv', '-f', '-T', '--', fresh, f],
    ],
    (command) => sub(command, command[0] === 'dd'),
  );
  if (written.code !== 0) {
    sub(['rm', '-f', '--', fresh]);
    return written;
  }
  return ok(`${was}\n`);
}

type Sub = (command: string[], withStdin?: boolean) => CommandResult;

function reloadNginx(server: FakeServer, sub: Sub): CommandResult {
  if (server.fs.get('/run/systemd/system')?.type === 'dir') {
    const done = sub(['systemctl', 'reload-or-restart', 'nginx']);
    return done.code === 0 ? ok('systemd\n') : done;
  }
  // No /proc here (as on a kernel that does not list children): no old workers to wait for.
  if (sub(['nginx', '-s', 'reload']).code === 0) return ok('');
  const started = sub(['nginx']);
  return started.code === 0 ? ok('started\n') : started;
}

/** What $(…) keeps of a command's output: stdout without its trailing newlines. */
const answer = (result: CommandResult) => (result.code === 0 ? result.stdout.replace(/\n+$/, '') : '');

function sequence(steps: string[][], sub: Sub): CommandResult {
  for (const step of steps) {
    const result = sub(step);
    if (result.code !== 0) return result;
  }
  return ok();
}

function probe(server: FakeServer, args: string[], sub: Sub): CommandResult {
  const answers: string[] = [];
  for (let i = 0; i + 1 < args.length; i += 2) {
    const path = args[i + 1]!;
    switch (args[i]) {
      case 'kind': {
        // The shell's own tests ([ -L ], [ -d ]…): no command runs.
        const node = server.fs.get(path) ?? server.fs.get(server.fs.resolve(path));
        const kinds = { link: 'symbolic link', dir: 'directory', file: 'regular file' } as const;
        answers.push(node ? kinds[node.type] : '');
        break;
      }
      case 'mode':
        answers.push(answer(sub(['stat', '-c', '%a', '--', path])));
        break;
      case 'access':
        answers.push(answer(sub(['stat', '-c', '%a %G', '--', path])));
        break;
      case 'hash':
        answers.push(answer(sub(['sha256sum', '--', path])));
        break;
      case 'link':
        answers.push(answer(sub(['readlink', '--', path])));
        break;
      case 'pid': {
        const pid = answer(sub(['cat', '--', path]));
        answers.push(/^[1-9]\d*$/.test(pid) && sub(['kill', '-0', pid]).code === 0 ? pid : '');
        break;
      }
      case 'user':
        answers.push(answer(sub(['getent', 'passwd', '--', path])));
        break;
      case 'groups':
        answers.push(answer(sub(['id', '-Gn', '--', path])));
        break;
      case 'package':
        // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own ${field} format
        answers.push(answer(sub(['dpkg-query', '-W', '-f', '${db:Status-Abbrev}', '--', path])));
        break;
      default:
        return fail(`unknown probe ${args[i]}`, 2);
    }
  }
  return ok(answers.map((a) => `${a}\0`).join(''));
}

function installConfig(args: string[], sub: Sub): CommandResult {
  const [f, mode, owner, group, want, link, ...test] = args as [string, string, string, string, string, string, ...string[]];
  const fresh = `${f}.siteplane-new`;
  const old = `${f}.siteplane-previous`;
  const have = answer(sub(['sha256sum', '--', f])).split(' ')[0] ?? '';
  if (have === want && !link) return ok('unchanged\n');
  const undo = () => {
    if (link) sub(['rm', '-f', '--', link]);
    if (have === want) return;
    if (have) sub(['mv', '-f', '-T', '--', old, f]);
    else sub(['rm', '-f', '--', f]);
  };
  if (have !== want) {
    const created = sub(['install', '-m', mode, '-o', owner, '-g', group, '/dev/null', fresh]);
    if (created.code !== 0) return created;
    const written = sub(['dd', `of=${fresh}`, 'oflag=nofollow', 'status=none'], true);
    if (written.code !== 0) {
      sub(['rm', '-f', '--', fresh]);
      return written;
    }
    const steps = [...(have ? [['cp', '-p', '--', f, old]] : []), ['mv', '-f', '-T', '--', fresh, f]];
    const moved = sequence(steps, sub);
    if (moved.code !== 0) return moved;
  }
  if (link) {
    const linked = sub(['ln', '-s', '-f', '-n', '--', f, link]);
    if (linked.code !== 0) {
      undo();
      return linked;
    }
  }
  if (test.length > 0) {
    const tested = sub(test);
    if (tested.code !== 0) {
      undo();
      return { code: 3, stdout: `test-failed ${tested.code}\n`, stderr: `${tested.stderr}${tested.stdout}` };
    }
  }
  if (have === want) return ok('enabled\n');
  if (!have) return ok('created\n');
  sub(['rm', '-f', '--', old]);
  return ok('updated\n');
}

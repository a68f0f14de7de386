import type { CommandResult, Executor, RunOptions } from '../../../src/provisioning/executor.js';
import { dispatch } from './fake-commands.js';
import { FakeMysql, FakePostgres } from './fake-databases.js';
import { FakeFs } from './fake-fs.js';
import { type FakeRegistry, newRegistry } from './fake-node-commands.js';
import { type AptState, newAptState } from './fake-packages.js';
import { runScript } from './fake-scripts.js';

export interface Call {
  argv: string[];
  options: RunOptions;
}

export interface Pm2App {
  status: string;
  ecosystem: string;
}

/**
 * A Debian 12 server without systemd, in memory: files, users, packages, services, databases and
 * PM2, changed by the commands the steps run (see fake-commands.ts). Every call is recorded.
 * A command it does not know fails the test (code 127 and an entry in `unknown`).
 */
export class FakeServer {
  readonly fs = new FakeFs();
  readonly users = new Set(['root', 'www-data', 'postgres']);
  /** uid and groups of accounts that are not ordinary users made by useradd (uid 1001, own group). */
  readonly accounts = new Map<string, { uid: number; groups: string[] }>([
    ['root', { uid: 0, groups: ['root'] }],
    ['www-data', { uid: 33, groups: ['www-data'] }],
    ['postgres', { uid: 104, groups: ['postgres', 'ssl-cert'] }],
  ]);
  readonly apt: AptState = newAptState();
  readonly mysql = new FakeMysql();
  readonly postgres = new FakePostgres();
  /** user → PM2 process name → app */
  readonly pm2 = new Map<string, Map<string, Pm2App>>();
  readonly pm2Saved = new Map<string, string[]>();
  readonly programs = new Set<string>(['sh', 'curl']);
  readonly running = new Map<string, number>();
  readonly wordpressInstalled = new Set<string>();
  /** The data each WordPress installer run received (decoded from its script). */
  readonly wordpressRuns: Record<string, string>[] = [];
  readonly downloads = new Map<string, string>();
  /** debconf answers given with debconf-set-selections (question → value). */
  readonly debconf = new Map<string, string>();
  systemd = false;
  nodeVersion: string | null = null;
  /** `uname -m` */
  arch = 'x86_64';
  /** Packages the npm registry offers to curl (Node's binaries, npm). */
  readonly registry: FakeRegistry = newRegistry();
  /** Whether git reaches github.com (many servers reach only Debian's mirror and a registry). */
  reachesGithub = true;
  /** python3's version: Debian 12's (Debian 13 has 3.13, without distutils, which node-gyp before 10 imports). */
  python = '3.11';
  /** Whether node-gyp can download Node's headers from nodejs.org (when not pointed at local ones). */
  reachesNodejsOrg = true;
  /** Round trips: every command a step sent (a constant script is one). */
  readonly calls: Call[] = [];
  /** Every command the server ran: plain calls, and each command inside a step's script (fake-scripts.ts). */
  readonly executed: Call[] = [];
  readonly unknown: string[][] = [];
  /** Answers that replace the simulation for matching commands (failure injection). */
  readonly scripted: { match: (argv: string[]) => boolean; result: CommandResult; times: number }[] = [];
  /** When true, `nginx -t` fails if an enabled vhost contains this text. */
  nginxRejects: string | null = null;
  private nextPid = 1000;

  readonly exec: Executor = {
    kind: 'local',
    run: async (argv: readonly string[], options: RunOptions = {}) => this.run([...argv], options),
    close: async () => {},
  };

  script(match: (argv: string[]) => boolean, result: Partial<CommandResult>, times = 1): void {
    this.scripted.push({ match, result: { code: 0, stdout: '', stderr: '', ...result }, times });
  }

  run(argv: string[], options: RunOptions): CommandResult {
    for (const arg of argv) if (arg.includes('\0')) throw new Error('NUL in argv');
    this.calls.push({ argv, options });
    return runScript(this, argv, options) ?? this.inner(argv, options);
  }

  /** One command as the server runs it, on its own or from inside a script: not a round trip of its own. */
  inner(argv: string[], options: RunOptions): CommandResult {
    this.executed.push({ argv, options });
    const scripted = this.scripted.find((s) => s.times > 0 && s.match(argv));
    if (scripted) {
      scripted.times--;
      return scripted.result;
    }
    const result = dispatch(this, argv, options);
    if (result === null) {
      this.unknown.push(argv);
      return { code: 127, stdout: '', stderr: `fake server: unknown command ${argv.join(' ')}\n` };
    }
    return result;
  }

  startDaemon(name: string, pidFile: string): void {
    const pid = this.nextPid++;
    this.running.set(name, pid);
    this.fs.write(pidFile, `${pid}\n`);
  }

  isAlive(pid: string): boolean {
    return [...this.running.values()].includes(Number(pid));
  }

  /** A bare server with the user, nginx and PHP 8.2 already there (as after a first site). */
  addUser(user: string): void {
    this.users.add(user);
    this.fs.mkdirp(`/home/${user}`, { owner: user, group: user, mode: '755' });
  }

  /** An account created outside Siteplane (an admin's, a daemon's), with its home. */
  addAccount(user: string, uid: number, groups: string[]): void {
    this.addUser(user);
    this.accounts.set(user, { uid, groups: [user, ...groups] });
  }

  /** `getent passwd USER`'s line, or null. */
  passwdLine(user: string): string | null {
    if (!this.users.has(user)) return null;
    const uid = this.accounts.get(user)?.uid ?? 1001;
    return `${user}:x:${uid}:${uid}::/home/${user}:/bin/bash\n`;
  }

  /** `id -Gn USER`'s line, or null. */
  groupsLine(user: string): string | null {
    if (!this.users.has(user)) return null;
    return `${(this.accounts.get(user)?.groups ?? [user]).join(' ')}\n`;
  }

  /** Like PM2, any `pm2` command of a user starts their daemon (pid in ~/.pm2/pm2.pid) when it does not run. */
  startPm2Daemon(user: string): void {
    if (this.running.has(`pm2:${user}`)) return;
    this.fs.mkdirp(`/home/${user}/.pm2`, { owner: user, group: user });
    this.startDaemon(`pm2:${user}`, `/home/${user}/.pm2/pm2.pid`);
  }

  /** `pm2 kill`: the daemon and its processes stop, its pid file goes; the saved list stays. */
  stopPm2Daemon(user: string): void {
    this.running.delete(`pm2:${user}`);
    this.fs.remove(`/home/${user}/.pm2/pm2.pid`, false);
    this.pm2Of(user).clear();
  }

  pm2Of(user: string): Map<string, Pm2App> {
    let apps = this.pm2.get(user);
    if (!apps) {
      apps = new Map();
      this.pm2.set(user, apps);
    }
    return apps;
  }

  /** Everything a site may create or change, for before/after comparisons. */
  state(): unknown {
    return structuredClone({
      fs: this.fs.snapshot((p) => !p.startsWith('/run/')),
      users: [...this.users].sort(),
      packages: [...this.apt.installed].sort(),
      mysql: {
        databases: [...this.mysql.databases].sort(),
        accounts: [...this.mysql.accounts.entries()].sort(),
        grants: [...this.mysql.grants].sort(),
      },
      postgres: { roles: [...this.postgres.roles.entries()].sort(), databases: [...this.postgres.databases.entries()].sort() },
      pm2: [...this.pm2.entries()].map(([user, apps]) => [user, [...apps.entries()].sort()]),
      pm2Saved: [...this.pm2Saved.entries()].sort(),
      running: [...this.running.keys()].sort(),
      wordpress: [...this.wordpressInstalled].sort(),
      node: this.nodeVersion,
    });
  }
}

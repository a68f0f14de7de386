import type { RunOptions } from '../executor.js';
import type { StepContext } from '../step.js';
import { AS_ROOT, mustRun } from './commands.js';
import type { PathKind } from './remote-files.js';

/**
 * Several reads of the server's state in ONE round trip. A step that needs to know five things
 * before it changes anything asks for them together instead of paying a round trip for each (each
 * command is one SSH channel). The script is constant; every query is a pair of positional
 * arguments (what to read, of what); kinds come from the shell's own tests, without a process
 * each, which counts on a busy server. Answers end in NUL, which no answer can contain, so a link
 * target with a newline cannot pose as the next answer. Every answer is "absent" when empty, so a
 * dry-run executor (which answers nothing) shows what a bare server would get.
 */
export const PROBE_SCRIPT = `while [ "$#" -ge 2 ]; do
  r=
  case $1 in
    kind) if [ -L "$2" ]; then r='symbolic link'; elif [ -d "$2" ]; then r=directory
      elif [ -f "$2" ]; then r='regular file'; elif [ -e "$2" ]; then r=other; fi ;;
    mode) r=$(stat -c %a -- "$2" 2>/dev/null) ;;
    access) r=$(stat -c '%a %G' -- "$2" 2>/dev/null) ;;
    hash) r=$(sha256sum -- "$2" 2>/dev/null) ;;
    link) r=$(readlink -- "$2" 2>/dev/null) ;;
    pid) r=$(cat -- "$2" 2>/dev/null)
      case $r in ''|0*|*[!0-9]*) r= ;; *) kill -0 "$r" 2>/dev/null || r= ;; esac ;;
    user) r=$(getent passwd -- "$2" 2>/dev/null) ;;
    groups) r=$(id -Gn -- "$2" 2>/dev/null) ;;
    package) r=$(dpkg-query -W -f '\${db:Status-Abbrev}' -- "$2" 2>/dev/null) ;;
    *) echo "unknown probe $1" >&2; exit 2 ;;
  esac
  printf '%s\\0' "$r"
  shift 2
done`;

type ProbeOp = 'kind' | 'mode' | 'access' | 'hash' | 'link' | 'pid' | 'user' | 'groups' | 'package';

export interface Query<T> {
  op: ProbeOp;
  arg: string;
  parse(answer: string): T;
}

const query = <T>(op: ProbeOp, arg: string, parse: (answer: string) => T): Query<T> => ({ op, arg, parse });

/** What is at path (symlinks not followed), or null when nothing is. */
export const kindOf = (path: string) =>
  query('kind', path, (answer): PathKind | null => {
    if (answer === '') return null;
    if (answer === 'directory') return 'directory';
    if (answer === 'symbolic link') return 'symlink';
    return answer.startsWith('regular') ? 'file' : 'other';
  });

/** Octal permission bits (`755`), or null when nothing is there. */
export const modeOf = (path: string) => query('mode', path, (answer) => (/^[0-7]{3,4}$/.test(answer) ? answer : null));

/** Permission bits and group (`{ mode: '710', group: 'www-data' }`), or null when nothing is there. */
export const accessOf = (path: string) =>
  query('access', path, (answer) => {
    const match = /^([0-7]{3,4}) (\S+)$/.exec(answer);
    return match ? { mode: match[1]!, group: match[2]! } : null;
  });

/** sha256 of the file's content, or null when it cannot be read. */
export const hashOf = (path: string) => query('hash', path, (answer) => /^([0-9a-f]{64})\s/.exec(answer)?.[1] ?? null);

/** Where a symlink points, or null when path is not one. */
export const linkOf = (path: string) => query('link', path, (answer) => (answer === '' ? null : answer));

/** The pid in a daemon's pid file when that process is alive. */
export const livePidOf = (pidFile: string) => query('pid', pidFile, (answer) => (/^[1-9]\d*$/.test(answer) ? answer : null));

/** Whether the system user exists (`getent`, which also sees NSS users). */
export const userExists = (user: string) => query('user', user, (answer) => answer !== '');

/** The user's `getent passwd` line, '' when there is no such user. */
export const passwdEntryOf = (user: string) => query('user', user, (answer) => answer);

/** The names of the user's groups (`id -Gn`), '' when there is no such user. */
export const groupsOf = (user: string) => query('groups', user, (answer) => answer);

/** Whether dpkg reports the package installed ("ii"). */
export const packageInstalled = (name: string) => query('package', name, (answer) => answer.startsWith('ii'));

type Answers<Q extends readonly Query<unknown>[]> = { [K in keyof Q]: Q[K] extends Query<infer T> ? T : never };

/** Runs the queries in one command and returns their answers in order. */
export async function probe<const Q extends readonly Query<unknown>[]>(
  ctx: StepContext,
  queries: Q,
  options: RunOptions = AS_ROOT,
): Promise<Answers<Q>> {
  const argv = ['sh', '-c', PROBE_SCRIPT, 'sh', ...queries.flatMap((q) => [q.op, q.arg])];
  // Every read answers, found or not: a failing probe is a broken shell, not an absent thing.
  const answers = (await mustRun(ctx, argv, options, "read the server's state")).stdout.split('\0');
  return queries.map((q, i) => q.parse(answers[i] ?? '')) as Answers<Q>;
}

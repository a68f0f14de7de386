import type { CommandResult } from '../executor.js';
import type { StepContext } from '../step.js';
import { AS_ROOT, run, StepCommandFailed, StepError } from './commands.js';
import { type Ownership, sha256 } from './remote-files.js';
import { RELOAD_NGINX, reportNginxReload } from './services.js';

/**
 * Installs a configuration file the safe way (ARCHITECTURE §3): render → write to a temporary path
 * → back up the live file → atomic rename → test the whole configuration → on failure put the
 * previous file back (or remove the new one) and fail with the test's output. The caller reloads
 * the service only after this returns 'created' or 'updated', so a bad file never goes live.
 * The temporary and backup names do not match the services' include patterns (`*.conf`, sites-enabled).
 *
 * All of it is one constant script, so one round trip: the check (is the file what we would
 * write?) and the change happen together, and the restore runs on the server the moment the test
 * fails, not a round trip later. $1 the file, $2-$4 its mode, owner and group, $5 the sha256 of the
 * new content (on stdin), $6 a link that enables the file ("" for none), then the test's argv.
 * Prints `unchanged`, `created`, `updated` or `enabled`; a failed test prints `test-failed <code>`
 * after the restore, with the test's output on stderr. dd's nofollow: a link placed at the
 * temporary path is not written through.
 */
export const INSTALL_CONFIG_SCRIPT = `f=$1 mode=$2 owner=$3 group=$4 want=$5 link=$6
shift 6
new="$f.siteplane-new" old="$f.siteplane-previous" have=
if h=$(sha256sum -- "$f" 2>/dev/null); then have=\${h%% *}; fi
[ "$have" = "$want" ] && [ -z "$link" ] && { echo unchanged; exit 0; }
undo() {
  [ -z "$link" ] || rm -f -- "$link"
  [ "$have" = "$want" ] && return 0
  if [ -n "$have" ]; then mv -f -T -- "$old" "$f"; else rm -f -- "$f"; fi
}
if [ "$have" != "$want" ]; then
  install -m "$mode" -o "$owner" -g "$group" /dev/null "$new" || exit
  dd of="$new" oflag=nofollow status=none || { rm -f -- "$new"; exit 1; }
  if [ -n "$have" ]; then cp -p -- "$f" "$old" || exit; fi
  mv -f -T -- "$new" "$f" || exit
fi
if [ -n "$link" ]; then ln -s -f -n -- "$f" "$link" || { undo; exit 1; }; fi
if [ "$#" -gt 0 ]; then
  out=$("$@" 2>&1)
  code=$?
  if [ "$code" -ne 0 ]; then undo; printf '%s\\n' "$out" >&2; echo "test-failed $code"; exit 3; fi
fi
if [ "$have" = "$want" ]; then echo enabled
elif [ -n "$have" ]; then rm -f -- "$old"; echo updated
else echo created; fi`;

/** The same, then (only after a change that passed its test) nginx reloaded: one round trip for a vhost. */
export const INSTALL_CONFIG_THEN_RELOAD_NGINX = `${INSTALL_CONFIG_SCRIPT}\n${RELOAD_NGINX}`;

export interface ConfigFile {
  path: string;
  content: string;
  ownership: Ownership;
  /** The configuration test's argv (`nginx -t`), run as root with the file in place; exit 0 means valid. */
  test?: readonly string[];
  /** A symlink to the file that enables it (sites-enabled): made before the test, removed when it fails. */
  enableLink?: string;
  /** Reload nginx once the change passed its test, in the same round trip (services.ts: RELOAD_NGINX). */
  reloadNginx?: boolean;
}

export type ConfigChange = 'unchanged' | 'created' | 'updated';

/**
 * A failed `nginx -t` / `php-fpm -t`. Given the test's result, it keeps the exit code, so the
 * operation records it (with the redacted output) like a failed command's.
 */
export class ConfigTestFailed extends StepError {
  readonly output: string;
  readonly exitCode: number | null;

  constructor(
    readonly path: string,
    result: string | CommandResult,
  ) {
    const output = typeof result === 'string' ? result : `${result.stderr}\n${result.stdout}`;
    super(`the configuration test failed with ${path}; the previous configuration was restored: ${output.trim()}`);
    this.name = 'ConfigTestFailed';
    this.output = output;
    this.exitCode = typeof result === 'string' ? null : result.code;
  }
}

export async function installConfigFile(ctx: StepContext, file: ConfigFile): Promise<ConfigChange> {
  const { owner, group, mode } = file.ownership;
  const argv = [
    'sh',
    '-c',
    file.reloadNginx ? INSTALL_CONFIG_THEN_RELOAD_NGINX : INSTALL_CONFIG_SCRIPT,
    'sh',
    file.path,
    mode,
    owner,
    group,
    sha256(file.content),
    file.enableLink ?? '',
    ...(file.test ?? []),
  ];
  const result = await run(ctx, argv, { ...AS_ROOT, stdin: file.content });
  const failedTest = /^test-failed (\d+)$/m.exec(result.stdout);
  if (failedTest) throw new ConfigTestFailed(file.path, { code: Number(failedTest[1]), stdout: '', stderr: result.stderr });
  if (result.code !== 0) throw new StepCommandFailed(argv, result, `install ${file.path}`);
  const [said = '', ...rest] = result.stdout.split('\n');
  if (said === 'unchanged') return 'unchanged';
  if (file.reloadNginx) reportNginxReload(ctx, rest.join('\n'));
  // 'enabled': the file was right, its link was not. A dry run says nothing: as on a bare server.
  return said === 'updated' || said === 'enabled' ? 'updated' : 'created';
}

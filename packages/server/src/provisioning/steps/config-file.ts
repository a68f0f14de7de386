import type { CommandResult } from '../executor.js';
import type { StepContext } from '../step.js';
import { AS_ROOT, mustRun, StepError } from './commands.js';
import { fileHash, moveInto, type Ownership, removeFile, sha256, writeFile } from './remote-files.js';

/**
 * Installs a configuration file the safe way (ARCHITECTURE §3): render → write to a temporary path
 * → back up the live file → atomic rename → test the whole configuration → on failure put the
 * previous file back (or remove the new one) and fail with the test's output. The caller reloads
 * the service only after this returns 'created' or 'updated', so a bad file never goes live.
 * The temporary and backup names do not match the services' include patterns (`*.conf`, sites-enabled).
 */
export interface ConfigFile {
  path: string;
  content: string;
  ownership: Ownership;
  /** The configuration test (`nginx -t`, `php-fpm -t`); exit 0 means valid. */
  test?: () => Promise<CommandResult>;
  /** Runs after the file is in place and before the test (e.g. enable a vhost); undone on failure by `deactivate`. */
  activate?: () => Promise<void>;
  deactivate?: () => Promise<void>;
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
  const existing = await fileHash(ctx, file.path);
  if (existing === sha256(file.content)) return 'unchanged';
  const temporary = `${file.path}.siteplane-new`;
  const backup = `${file.path}.siteplane-previous`;
  await writeFile(ctx, temporary, file.content, file.ownership);
  if (existing !== null) await mustRun(ctx, ['cp', '-p', '--', file.path, backup], AS_ROOT, `back up ${file.path}`);
  await moveInto(ctx, temporary, file.path);
  if (file.activate) await file.activate();
  const result = file.test ? await file.test() : undefined;
  if (result && result.code !== 0) {
    if (file.deactivate) await file.deactivate();
    if (existing !== null) await moveInto(ctx, backup, file.path);
    else await removeFile(ctx, file.path);
    throw new ConfigTestFailed(file.path, result);
  }
  if (existing !== null) await removeFile(ctx, backup);
  return existing === null ? 'created' : 'updated';
}

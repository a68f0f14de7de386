/**
 * The one place where argv becomes a shell command line. Every argument is single-quoted, so no
 * value can expand, substitute or split. NUL cannot be represented and is refused.
 */
export function quoteArg(arg: string): string {
  if (arg.includes('\0')) throw new Error('argument contains NUL');
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

export function commandLine(argv: readonly string[]): string {
  if (argv.length === 0) throw new Error('empty command');
  return argv.map(quoteArg).join(' ');
}

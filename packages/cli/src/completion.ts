import type { Command } from 'commander';
import { UsageError } from './errors.js';

/** Every command path (`""`, `"sites"`, `"sites create"`) with the words that may follow it. */
function wordTable(program: Command): Map<string, string[]> {
  const table = new Map<string, string[]>();
  const walk = (command: Command, path: string[]) => {
    const words = [
      ...command.commands.map((c) => c.name()),
      ...command.options.flatMap((o) => [o.long, o.short].filter((x): x is string => Boolean(x))),
      ...(command.commands.length > 0 || path.length === 0 ? [] : ['--help']),
    ];
    table.set(path.join(' '), words);
    for (const sub of command.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  return table;
}

/** A shell `case` over the command paths, setting `cands` (the same syntax in bash and zsh). */
function caseOver(table: Map<string, string[]>): string {
  const arms = [...table].map(([path, words]) => `    '${path}') cands='${words.join(' ')}' ;;`);
  return `  case "$cmdpath" in\n${arms.join('\n')}\n    *) cands='' ;;\n  esac`;
}

/**
 * Both scripts walk the typed words: each that names a subcommand of the path so far extends it;
 * the rest (arguments, option values) are skipped. Names and flags only contain [a-z0-9-], so the
 * table needs no quoting beyond single quotes. (zsh's own `words` and `path` are left alone.)
 */
function bash(program: Command): string {
  return `# siteplane completion for bash: source <(siteplane completion bash)
_siteplane_candidates() {
${caseOver(wordTable(program))}
}
_siteplane() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmdpath='' cands='' i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=\${COMP_WORDS[i]}
    [[ $w == -* ]] && continue
    _siteplane_candidates
    case " $cands " in *" $w "*) cmdpath=\${cmdpath:+$cmdpath }$w ;; esac
  done
  _siteplane_candidates
  COMPREPLY=($(compgen -W "$cands" -- "$cur"))
}
complete -F _siteplane siteplane
`;
}

function zsh(program: Command): string {
  return `#compdef siteplane
# siteplane completion for zsh: source <(siteplane completion zsh), or save it as _siteplane in $fpath
_siteplane_candidates() {
${caseOver(wordTable(program))}
}
_siteplane() {
  local cmdpath='' cands='' w i
  for ((i = 2; i < CURRENT; i++)); do
    w=\${words[i]}
    [[ $w == -* ]] && continue
    _siteplane_candidates
    [[ " $cands " == *" $w "* ]] && cmdpath=\${cmdpath:+$cmdpath }$w
  done
  _siteplane_candidates
  compadd -- \${=cands}
}
compdef _siteplane siteplane
`;
}

export function completionCommand(program: Command): void {
  program
    .command('completion <shell>')
    .description('Print a completion script for bash or zsh: source <(siteplane completion bash)')
    .action((shell: string) => {
      if (shell === 'bash') process.stdout.write(bash(program));
      else if (shell === 'zsh') process.stdout.write(zsh(program));
      else throw new UsageError(`No completion for ${shell}: bash or zsh`);
    });
}

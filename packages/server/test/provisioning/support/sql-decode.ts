/**
 * Reference parsers for the SQL the steps send: split a script into statements the way the
 * server's lexer would (quotes respected), and give each statement's string literals and quoted
 * identifiers decoded, with a "shape" in which they are replaced by ? and @. Written from the
 * manuals' lexical rules, independently of the quoting code under test.
 */
export interface ParsedStatement {
  shape: string;
  strings: string[];
  identifiers: string[];
}

type Dialect = 'mysql' | 'postgresql';

const MYSQL_ESCAPES: Record<string, string> = { '0': '\0', n: '\n', r: '\r', Z: '\x1a', t: '\t', b: '\b' };

export function parseScript(script: string, dialect: Dialect): ParsedStatement[] {
  const statements: ParsedStatement[] = [];
  let shape = '';
  let strings: string[] = [];
  let identifiers: string[] = [];
  let i = 0;
  const identQuote = dialect === 'mysql' ? '`' : '"';
  while (i < script.length) {
    const c = script[i]!;
    if (c === "'") {
      let value = '';
      i++;
      for (;;) {
        if (i >= script.length) throw new Error(`unterminated string in ${JSON.stringify(script)}`);
        const d = script[i]!;
        if (d === '\\' && dialect === 'mysql') {
          const next = script[i + 1] ?? '';
          value += MYSQL_ESCAPES[next] ?? next;
          i += 2;
        } else if (d === "'" && script[i + 1] === "'") {
          value += "'";
          i += 2;
        } else if (d === "'") {
          i++;
          break;
        } else {
          value += d;
          i++;
        }
      }
      strings.push(value);
      shape += '?';
    } else if (c === identQuote) {
      let value = '';
      i++;
      for (;;) {
        if (i >= script.length) throw new Error('unterminated identifier');
        const d = script[i]!;
        if (d === identQuote && script[i + 1] === identQuote) {
          value += identQuote;
          i += 2;
        } else if (d === identQuote) {
          i++;
          break;
        } else {
          value += d;
          i++;
        }
      }
      identifiers.push(value);
      shape += '@';
    } else if (c === ';') {
      statements.push({ shape: shape.replace(/\s+/g, ' ').trim(), strings, identifiers });
      shape = '';
      strings = [];
      identifiers = [];
      i++;
    } else {
      shape += c;
      i++;
    }
  }
  if (shape.trim() !== '') throw new Error(`statement without terminating semicolon: ${shape}`);
  return statements;
}

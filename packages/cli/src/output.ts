import { styleText } from 'node:util';

/**
 * How the command answers: JSON (as scripts read it) with `--json` or when standard output is not
 * a terminal; tables and sentences for a person at a terminal. Colours only on a terminal and never
 * when NO_COLOR is set (no-color.org).
 */
let forceJson = false;

export const setJsonOutput = (on: boolean): void => {
  forceJson = on;
};

export const humanOutput = (): boolean => !forceJson && process.stdout.isTTY === true;

type Style = Parameters<typeof styleText>[0];

const coloursOn = (stream: NodeJS.WriteStream): boolean => stream.isTTY === true && !process.env.NO_COLOR;

/** `text` in `style` when that stream shows colours. */
export const paint = (style: Style, text: string, stream: NodeJS.WriteStream = process.stdout): string =>
  coloursOn(stream) ? styleText(style, text) : text;

/** JSON of the answer; nothing for an empty one (a 204 of a delete), rather than the word `undefined`. */
export const printJson = (value: unknown): void => {
  if (value !== undefined) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

/** The answer as JSON, or through `human` for a person (when given). */
export function print<T>(value: T, human?: (value: T) => string): void {
  if (human && humanOutput()) {
    const text = human(value);
    if (text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    return;
  }
  printJson(value);
}

/** Key/value lines of one record, labels aligned. */
export function details(rows: [string, unknown][]): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows
    .map(
      ([label, value]) =>
        `${paint('bold', label.padEnd(width))}  ${value === null || value === undefined || value === '' ? paint('dim', '-') : String(value)}`,
    )
    .join('\n');
}

/** A status word coloured by what it means. */
export function statusText(status: unknown): string {
  const s = String(status ?? '');
  if (/^(installed|succeeded|active|verified|ok|ready|live)$/.test(s)) return paint('green', s);
  if (/fail|error|cancel|unreachable/.test(s)) return paint('red', s);
  if (/^(pending|installing|running|queued|deleting|issuing|unverified)$/.test(s)) return paint('yellow', s);
  return s;
}

import { paint } from './output.js';

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

// Escape sequences take no room on the screen; widths are counted without them.
const ANSI = /\u001b\[[0-9;]*m/g;
const visibleLength = (text: string): number => text.replace(ANSI, '').length;

const cell = (value: unknown): string => {
  if (value === null || value === undefined || value === '') return paint('dim', '-');
  if (Array.isArray(value)) return value.join(', ') || paint('dim', '-');
  return String(value).replace(/\s+/g, ' ');
};

/** Rows under bold headers, columns padded to their widest cell; `empty` when there are no rows. */
export function table<T>(columns: Column<T>[], rows: T[], empty = 'Nothing yet.'): string {
  if (rows.length === 0) return paint('dim', empty);
  const cells = rows.map((row) => columns.map((c) => cell(c.value(row))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => visibleLength(r[i] ?? ''))));
  const line = (parts: string[]) =>
    parts
      .map((p, i) => (i === parts.length - 1 ? p : p + ' '.repeat((widths[i] ?? 0) - visibleLength(p))))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => paint('bold', c.header))), ...cells.map(line)].join('\n');
}

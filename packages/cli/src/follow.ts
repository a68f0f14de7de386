import type { SiteplaneClient } from '@siteplane/sdk';
import { client } from './config.js';
import { humanOutput, paint } from './output.js';

interface Step {
  index: number;
  name: string;
  status: string;
  exit_code: number | null;
  started_at: string;
  finished_at: string | null;
}
interface Line {
  seq: number;
  at: string;
  line: string;
}
interface Status {
  status: string;
  error: unknown;
  started_at?: string | null;
  finished_at?: string | null;
}

const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);

/** What a person or a script sees while an operation runs. */
interface View {
  step(step: Step): void;
  log(line: Line): void;
  end(status: Status): void;
}

/** For scripts, as before: every log line as it comes, then `operation <status>[: <error JSON>]`. */
const scriptView = (): View => ({
  step() {},
  log: (l) => process.stdout.write(`${l.line}\n`),
  end: (s) => process.stdout.write(`operation ${s.status}${s.error ? `: ${JSON.stringify(s.error)}` : ''}\n`),
});

const seconds = (from: string, to: string | null | undefined): string =>
  to ? `${((Date.parse(to) - Date.parse(from)) / 1000).toFixed(1)}s` : '';

/**
 * For a person: one progress line per step (`▸` while it runs, replaced by `✓` or `✗` when it
 * ends), and for a failed step the log lines written while it ran (matched by time, since a step
 * may be reported only once it has finished).
 */
function personView(): View {
  const lines: Line[] = [];
  const shown = new Map<number, string>();
  let open: number | null = null; // the step whose "running" line is the last line on screen
  const label = (s: Step) => `[${s.index + 1}] ${s.name}`;
  return {
    step(s) {
      if (shown.get(s.index) === s.status) return;
      shown.set(s.index, s.status);
      const replace = open === s.index ? '\r\u001b[K' : open !== null ? '\n' : '';
      open = null;
      if (s.status === 'running') {
        process.stdout.write(`${replace}${paint('yellow', '▸')} ${label(s)} …`);
        open = s.index;
        return;
      }
      const ok = s.status === 'succeeded';
      const mark = ok ? paint('green', '✓') : paint('red', '✗');
      const exit = !ok && s.exit_code !== null ? ` exit ${s.exit_code}` : '';
      process.stdout.write(
        `${replace}${mark} ${label(s)} ${paint('dim', `${s.status}${exit} ${seconds(s.started_at, s.finished_at)}`.trim())}\n`,
      );
      if (s.status === 'failed') {
        const until = s.finished_at ?? '\uffff';
        for (const l of lines.filter((x) => x.at >= s.started_at && x.at <= until)) process.stdout.write(`    ${l.line}\n`);
      }
    },
    log: (l) => void lines.push(l),
    end(s) {
      if (open !== null) process.stdout.write('\n');
      open = null;
      const took = s.started_at ? ` in ${seconds(s.started_at, s.finished_at)}` : '';
      if (s.status === 'succeeded') process.stdout.write(`${paint('green', 'Done')}: operation succeeded${took}\n`);
      else {
        const error = s.error as { step?: string; message?: string } | null;
        const why = error?.message ? `: ${error.message}` : '';
        process.stdout.write(`${paint('red', `Operation ${s.status}`)}${error?.step ? ` at "${error.step}"` : ''}${why}\n`);
      }
    },
  };
}

/**
 * Follows an operation to its end, live over server-sent events; when the stream cannot be opened
 * or breaks off, goes on by polling from the last line seen (none lost, none twice). A failed or
 * cancelled operation sets a non-zero exit code.
 */
export async function follow(uuid: string, api: SiteplaneClient = client()): Promise<void> {
  const view = humanOutput() ? personView() : scriptView();
  let after = 0;
  let final: Status | null = null;
  try {
    for await (const e of api.operationEvents(uuid, after)) {
      if (e.event === 'step') view.step(e.data as unknown as Step);
      else if (e.event === 'log') {
        view.log(e.data as unknown as Line);
        after = (e.data as unknown as Line).seq;
      } else if (e.event === 'status') final = e.data as unknown as Status;
      else if (e.event === 'end') break;
    }
  } catch {
    // Polled below from `after`.
  }
  if (!final || !FINISHED.has(final.status)) final = await poll(api, uuid, after, view);
  view.end(final);
  if (final.status !== 'succeeded') process.exitCode = 1;
}

async function poll(api: SiteplaneClient, uuid: string, from: number, view: View): Promise<Status> {
  let after = from;
  for (;;) {
    const op = (await api.getOperation(uuid, after)) as unknown as Status & { steps: Step[]; logs: Line[] };
    for (const l of op.logs) {
      view.log(l);
      after = l.seq;
    }
    // A step's lines are all in before it is shown finished, so its failure can list them.
    for (const s of op.steps) view.step(s);
    if (FINISHED.has(op.status) && op.logs.length === 0) return op;
    if (!FINISHED.has(op.status)) await new Promise((r) => setTimeout(r, 1000));
  }
}

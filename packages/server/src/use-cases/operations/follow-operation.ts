import type { Actor } from '../../domain/auth/actor.js';
import { notFound } from '../../domain/errors.js';
import { type ChangeNotifier, operationTopic } from '../../storage/change-notifier.js';
import { ChangeWaiter } from '../change-waiter.js';
import type { UseCaseDeps } from '../deps.js';
import { operationLogsAfter, operationSteps, type StepState, visibleOperation } from './operation-reads.js';

/**
 * An operation as it happens (GET /api/v1/operations/<uuid>/events): its steps, log lines and
 * status, read from the database whenever the operation's topic is notified (and on a timer, so a
 * notification lost between processes only delays). Every event's id is the sequence number of the
 * last log line sent, so a client that reconnects with it (`Last-Event-ID`) gets the lines after it
 * — none missing, none twice — and the steps' and status' current state again (those are states,
 * not lines). Ends with `end` once the operation is finished and all its lines are sent.
 */
export type OperationEvent =
  | { event: 'step'; id: number; data: StepState }
  | { event: 'log'; id: number; data: { seq: number; at: string; line: string } }
  | { event: 'status'; id: number; data: StatusState }
  | { event: 'end'; id: number; data: { status: string } };

interface StatusState {
  status: string;
  error: unknown;
  started_at: string | null;
  finished_at: string | null;
}

const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);
/** Lines read per round; a longer backlog is sent in several rounds without waiting. */
const BATCH = 500;

/** 404 (as for any record of another tenant) before a stream is opened. */
export async function checkOperationVisible(deps: UseCaseDeps, actor: Actor, uuid: string): Promise<void> {
  const op = await visibleOperation(deps, actor, uuid);
  if (!op) throw notFound('Operation');
}

export async function* followOperation(
  deps: UseCaseDeps & { changes: ChangeNotifier },
  actor: Actor,
  uuid: string,
  afterSeq: number,
  signal: AbortSignal,
  pollMs = 1_000,
): AsyncGenerator<OperationEvent> {
  let lastSeq = afterSeq;
  const sentSteps = new Map<number, string>();
  let sentStatus = '';
  // Subscribed before the first read, so a change committed during a read is not missed.
  const waiter = new ChangeWaiter();
  const unsubscribe = deps.changes.subscribe(operationTopic(uuid), waiter.notify);
  try {
    while (!signal.aborted) {
      waiter.reading();
      const op = await visibleOperation(deps, actor, uuid);
      if (!op) return; // deleted with its site meanwhile
      const [steps, logs] = await Promise.all([operationSteps(deps, uuid), operationLogsAfter(deps, uuid, lastSeq, BATCH)]);
      // Steps and lines in the order they happened (a step's start before its lines, its end
      // after them), the lines always in their own sequence, so the ids never go back.
      const changedSteps: { at: string; state: StepState }[] = [];
      for (const state of steps) {
        const key = JSON.stringify(state);
        if (sentSteps.get(state.index) === key) continue;
        sentSteps.set(state.index, key);
        changedSteps.push({ at: state.finished_at ?? state.started_at, state });
      }
      changedSteps.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
      let next = 0;
      // Times are in milliseconds: a step's start goes before a line of the same millisecond, its end
      // after one (a failed step's last lines and its end are often written within one).
      const before = (step: { at: string; state: StepState }, at: string) =>
        step.state.status === 'running' ? step.at <= at : step.at < at;
      for (const l of logs) {
        for (; next < changedSteps.length && before(changedSteps[next]!, l.at); next++)
          yield { event: 'step', id: lastSeq, data: changedSteps[next]!.state };
        lastSeq = l.seq;
        yield { event: 'log', id: lastSeq, data: { seq: l.seq, at: l.at, line: l.line } };
      }
      for (const step of changedSteps.slice(next)) yield { event: 'step', id: lastSeq, data: step.state };
      const status: StatusState = {
        status: op.status,
        error: op.error ? JSON.parse(op.error) : null,
        started_at: op.started_at,
        finished_at: op.finished_at,
      };
      const statusKey = JSON.stringify(status);
      if (statusKey !== sentStatus) {
        sentStatus = statusKey;
        yield { event: 'status', id: lastSeq, data: status };
      }
      if (logs.length === BATCH) continue;
      if (FINISHED.has(op.status)) {
        yield { event: 'end', id: lastSeq, data: { status: op.status } };
        return;
      }
      if (!waiter.changed) await waiter.wait(pollMs, signal);
    }
  } finally {
    unsubscribe();
  }
}

import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * Copies the WAL back into the database file from a thread of its own, so the request thread never
 * does it. SQLite's automatic checkpoint runs inside whichever COMMIT crosses the threshold (1,000
 * pages by default): with creates dirtying a dozen pages each, every few dozen creates one request
 * paid for copying and syncing thousands of pages. A PASSIVE checkpoint takes no writer lock, so
 * the service goes on writing while it runs; the main connection keeps a high automatic threshold
 * only as a backstop should this thread stop.
 */
export interface Checkpointer {
  stop(): Promise<void>;
}

// Runs in the worker: its own connection to the same file, a checkpoint every `intervalMs`.
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file);
db.pragma('busy_timeout = 1000');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
}, workerData.intervalMs);
parentPort.on('message', () => { clearInterval(timer); db.close(); process.exit(0); });
`;

export function startCheckpointer(file: string, intervalMs = 1_000): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, driver, intervalMs } });
  worker.unref();
  // A failed thread only means the backstop (automatic checkpoints) takes over.
  worker.on('error', () => {});
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    stop: async () => {
      // Referenced again while it stops, or the process could end before the thread closed its connection.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}

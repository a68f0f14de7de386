import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { LOOPBACK_LISTEN } from '../../src/provisioning/templates/loopback-listen.js';

/** Runs the launcher's snippet, then `listen(...)` as an app would, in a real Node; prints the address bound. */
function boundBy(listenCall: string, port: number): string {
  const script = `${LOOPBACK_LISTEN}
const server = require('node:http').createServer();
${listenCall};
server.on('listening', () => { console.log(server.address().address); server.close(); });`;
  const run = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, PORT: String(port) }, encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.trim();
}

describe('the launcher binds the site port to 127.0.0.1 (loopback-listen.ts)', () => {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  it.each([
    ['listen(PORT)', `server.listen(${port})`],
    ['listen("PORT")', `server.listen('${port}')`],
    ['listen(PORT, "::")', `server.listen(${port}, '::')`],
    ['listen(PORT, "0.0.0.0", cb)', `server.listen(${port}, '0.0.0.0', () => {})`],
    ['listen(PORT, backlog)', `server.listen(${port}, 511)`],
    ['listen(PORT, cb)', `server.listen(${port}, () => {})`],
    ['listen({port})', `server.listen({ port: ${port} })`],
    ['listen({port, host: "::"})', `server.listen({ port: ${port}, host: '::' })`],
  ])('%s → 127.0.0.1', (_name, call) => {
    expect(boundBy(call, port)).toBe('127.0.0.1');
  });

  it('leaves another port, and an explicit address, as the app asks', () => {
    expect(boundBy(`server.listen(${port + 1})`, port)).not.toBe('127.0.0.1');
    expect(boundBy(`server.listen(${port}, '127.0.0.2')`, port)).toBe('127.0.0.2');
  });
});

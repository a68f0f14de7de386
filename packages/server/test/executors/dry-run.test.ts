import { describe, expect, it } from 'vitest';
import { DryRunExecutor } from '../../src/provisioning/executors/dry-run.js';

// Pure: the dry-run executor records and answers, running nothing.
describe('DryRunExecutor', () => {
  it('records each command as a quoted line with its options, stdin only by size', async () => {
    const lines: string[] = [];
    const exec = new DryRunExecutor({ onCommand: (line) => lines.push(line) });
    const result = await exec.run(['mysql', '--defaults-file=/root/.my.cnf'], {
      stdin: "CREATE USER 'u' IDENTIFIED BY 'pässword';",
      sudo: true,
    });
    await exec.run(['touch', "it's here; rm -rf /"]);
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(lines).toEqual([
      'mysql --defaults-file=/root/.my.cnf {"sudo":true,"stdin":"<redacted 42 bytes>"}',
      `touch 'it'\\''s here; rm -rf /'`,
    ]);
    expect(lines.join('\n')).not.toContain('pässword');
  });

  it('answers canned results for matching commands, first match first', async () => {
    const exec = new DryRunExecutor({
      onCommand: () => undefined,
      answers: [{ match: ['nginx', '-t'], result: { code: 1, stderr: 'bad config' } }],
    })
      .answer(/^php-fpm/, { stdout: 'ok' })
      .answer((argv) => argv[0] === 'nginx', { stdout: 'any nginx' });
    expect(await exec.run(['nginx', '-t'])).toEqual({ code: 1, stdout: '', stderr: 'bad config' });
    expect(await exec.run(['nginx', '-s', 'reload'])).toEqual({ code: 0, stdout: 'any nginx', stderr: '' });
    expect(await exec.run(['php-fpm8.2', '-t'])).toEqual({ code: 0, stdout: 'ok', stderr: '' });
    expect(await exec.run(['true'])).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('marks detached runs and drops polling options from the record', async () => {
    const lines: string[] = [];
    await new DryRunExecutor({ onCommand: (line) => lines.push(line) }).runDetached(['apt-get', 'install', '-y', 'nginx'], {
      sudo: true,
      pollMs: 100,
    });
    expect(lines).toEqual(['apt-get install -y nginx {"sudo":true} (detached)']);
  });
});

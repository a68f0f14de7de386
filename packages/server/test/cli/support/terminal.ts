/**
 * Runs a command in a real terminal and reads the screen, as a person would see it: a detached
 * tmux session on a private socket (its own server, stopped by `close`), or — where tmux is
 * missing — util-linux `script`, whose transcript is reduced to the final lines by applying the
 * carriage returns and line erases the program wrote.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Screen {
  /** What the terminal shows (and scrolled past), without colours. */
  text: string;
  /** The same with the escape sequences of colours and styles. */
  styled: string;
  code: number;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const hasTmux = spawnSync('tmux', ['-V']).status === 0;

export class Terminal {
  private readonly dir = mkdtempSync(join(tmpdir(), 'siteplane-tty-'));
  private readonly socket = `siteplane-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  private runs = 0;
  private serverStarted = false;

  constructor(private readonly cwd: string) {}

  /** `argv` in a 160×50 terminal with exactly `env` (plus PATH, HOME and TERM); resolves when it exits. */
  async run(argv: string[], env: Record<string, string>, typed?: { after: string; line: string }): Promise<Screen> {
    const id = ++this.runs;
    const script = join(this.dir, `run-${id}.sh`);
    const exports = Object.entries({ PATH: process.env.PATH ?? '', HOME: this.dir, TERM: 'xterm-256color', ...env })
      .map(([k, v]) => `export ${k}=${quote(v)}`)
      .join('\n');
    writeFileSync(script, `cd ${quote(this.cwd)}\n${exports}\n${argv.map(quote).join(' ')}\necho "[exit $?]"\n`);
    return hasTmux ? this.inTmux(id, script, typed) : this.inScript(script, typed);
  }

  /** `typed`: a line typed once `after` is on the screen (a prompt). */
  private async inTmux(id: number, script: string, typed?: { after: string; line: string }): Promise<Screen> {
    const session = `run${id}`;
    const tmux = (...args: string[]) =>
      execFileSync('tmux', ['-L', this.socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
    // tmux stops its server when the last session ends; a new session asked for in that instant
    // fails with "server exited unexpectedly". A session that lives until close() keeps it up.
    if (!this.serverStarted) {
      tmux('new-session', '-d', '-s', 'keepalive', 'sleep 3600');
      this.serverStarted = true;
    }
    tmux(
      'new-session',
      '-d',
      '-s',
      session,
      '-x',
      '160',
      '-y',
      '50',
      `env -i bash --noprofile --norc ${quote(script)}; sleep 600`,
    );
    tmux('set-option', '-t', session, 'history-limit', '5000');
    const until = Date.now() + 90_000;
    let pending = typed;
    for (;;) {
      const text = tmux('capture-pane', '-p', '-J', '-S', '-', '-t', session);
      if (pending && text.includes(pending.after)) {
        tmux('send-keys', '-t', session, '-l', pending.line);
        tmux('send-keys', '-t', session, 'Enter');
        pending = undefined;
      }
      const exit = /\[exit (\d+)\]/.exec(text);
      if (exit) {
        const styled = tmux('capture-pane', '-p', '-e', '-J', '-S', '-', '-t', session);
        tmux('kill-session', '-t', session);
        return { text: text.trimEnd(), styled, code: Number(exit[1]) };
      }
      if (Date.now() > until) throw new Error(`no exit within 90 s; screen:\n${text}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private async inScript(script: string, typed?: { line: string }): Promise<Screen> {
    const res = spawnSync('script', ['-qfec', `env -i bash --noprofile --norc ${quote(script)}`, '/dev/null'], {
      encoding: 'utf8',
      input: typed ? `${typed.line}\n` : '',
      timeout: 90_000,
      env: { ...process.env, TERM: 'xterm-256color' },
    });
    const raw = res.stdout.replace(/\r\n/g, '\n');
    const lines = raw.split('\n').map((line) => line.split(/\r|\u001b\[K/).pop() ?? '');
    const styled = lines.join('\n');
    const text = styled.replace(/\u001b\[[0-9;]*m/g, '');
    const exit = /\[exit (\d+)\]/.exec(text);
    return { text: text.trimEnd(), styled, code: exit ? Number(exit[1]) : -1 };
  }

  close(): void {
    if (hasTmux) spawnSync('tmux', ['-L', this.socket, 'kill-server']);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

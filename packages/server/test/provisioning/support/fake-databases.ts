import type { CommandResult } from '../../../src/provisioning/executor.js';
import { parseScript } from './sql-decode.js';

/** The MySQL/MariaDB and PostgreSQL engines of the fake server, driven by the SQL the steps send. */
export class FakeMysql {
  installed = false;
  running = false;
  readonly databases = new Set<string>();
  /** `user@host` → { password, plugin } */
  readonly accounts = new Map<string, { password: string; plugin: string | null }>();
  /** `user@host` → database pattern as stored (`shop\_db`), or `*` for server-wide. */
  readonly grants = new Set<string>();
  readonly statements: string[] = [];

  run(stdin: string): CommandResult {
    if (!this.running)
      return { code: 1, stdout: '', stderr: "ERROR 2002 (HY000): Can't connect to local server through socket\n" };
    const out: string[] = [];
    for (const st of parseScript(stdin, 'mysql')) {
      const [s0 = '', s1 = '', s2 = ''] = st.strings;
      const ident = st.identifiers[0] ?? '';
      this.statements.push(st.shape);
      const shape = st.shape;
      if (shape === 'SET SESSION sql_mode = ?' || shape === 'SET SESSION sql_log_off = 1') continue;
      if (shape === 'SELECT 1') out.push('1');
      else if (shape === 'SELECT ?, SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?') {
        if (this.databases.has(s1)) out.push(`database\t${s1}`);
      } else if (shape === 'SELECT ?, Host FROM mysql.user WHERE User = ?') {
        for (const key of this.accounts.keys()) if (key.startsWith(`${s1}@`)) out.push(`user\t${key.slice(s1.length + 1)}`);
      } else if (/^SELECT \?, GRANTEE FROM information_schema\.(SCHEMA|USER)_PRIVILEGES WHERE/.test(shape)) {
        const scoped = shape.includes('SCHEMA_PRIVILEGES');
        const pattern = scoped ? s1 : '*';
        for (const grantee of st.strings.slice(scoped ? 3 : 2)) {
          const m = /^'(.*)'@'(.*)'$/.exec(grantee);
          if (m && this.grants.has(`${m[1]}@${m[2]}|${pattern}`)) out.push(`grant\t${grantee}`);
        }
      } else if (/^CREATE DATABASE IF NOT EXISTS @ CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci$/.test(shape)) {
        this.databases.add(ident);
      } else if (/^CREATE USER IF NOT EXISTS \?@\? IDENTIFIED (WITH (\w+) )?BY \?$/.test(shape)) {
        const plugin = /WITH (\w+)/.exec(shape)?.[1] ?? null;
        if (!this.accounts.has(`${s0}@${s1}`)) this.accounts.set(`${s0}@${s1}`, { password: s2, plugin });
      } else if (shape === 'GRANT ALL PRIVILEGES ON @.* TO ?@?') {
        this.grants.add(`${s0}@${s1}|${ident}`);
      } else if (shape === 'GRANT ALL PRIVILEGES ON *.* TO ?@? WITH GRANT OPTION') {
        this.grants.add(`${s0}@${s1}|*`);
      } else if (shape === 'REVOKE ALL PRIVILEGES, GRANT OPTION FROM ?@?') {
        for (const g of [...this.grants]) if (g.startsWith(`${s0}@${s1}|`)) this.grants.delete(g);
      } else if (shape === 'DROP DATABASE IF EXISTS @') {
        this.databases.delete(ident);
      } else if (/^DROP USER IF EXISTS \?@\?(, \?@\?)*$/.test(shape)) {
        for (let i = 0; i < st.strings.length; i += 2) {
          const key = `${st.strings[i]}@${st.strings[i + 1]}`;
          this.accounts.delete(key);
          for (const g of [...this.grants]) if (g.startsWith(`${key}|`)) this.grants.delete(g);
        }
      } else throw new Error(`fake mysql does not know: ${shape}`);
    }
    return { code: 0, stdout: out.map((line) => `${line}\n`).join(''), stderr: '' };
  }
}

export class FakePostgres {
  installed = false;
  running = false;
  readonly roles = new Map<string, string>();
  readonly databases = new Map<string, { owner: string; publicConnect: boolean }>();
  readonly statements: string[] = [];

  run(stdin: string): CommandResult {
    if (!this.running) return { code: 2, stdout: '', stderr: 'psql: error: connection to server on socket failed\n' };
    const out: string[] = [];
    for (const st of parseScript(stdin, 'postgresql')) {
      const [s0 = '', s1 = ''] = st.strings;
      const [i0 = '', i1 = ''] = st.identifiers;
      this.statements.push(st.shape);
      const shape = st.shape;
      if (/^SET (standard_conforming_strings = on|log_statement = \?|log_min_error_statement = \?)$/.test(shape)) continue;
      if (shape === 'SELECT 1') out.push('1');
      else if (shape === 'SELECT ?, rolname FROM pg_roles WHERE rolname = ?') {
        if (this.roles.has(s1)) out.push(`role|${s1}`);
      } else if (shape === 'SELECT ?, datname FROM pg_database WHERE datname = ?') {
        if (this.databases.has(s1)) out.push(`database|${s1}`);
      } else if (shape === 'CREATE ROLE @ LOGIN PASSWORD ?') {
        if (this.roles.has(i0)) return { code: 3, stdout: '', stderr: `ERROR:  role "${i0}" already exists\n` };
        this.roles.set(i0, s0);
      } else if (shape === 'CREATE DATABASE @ OWNER @') {
        if (this.databases.has(i0)) return { code: 3, stdout: '', stderr: `ERROR:  database "${i0}" already exists\n` };
        this.databases.set(i0, { owner: i1, publicConnect: true });
      } else if (shape === 'REVOKE ALL ON DATABASE @ FROM PUBLIC') {
        const db = this.databases.get(i0);
        if (db) db.publicConnect = false;
      } else if (shape.startsWith('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ?')) {
        void s0;
      } else if (shape === 'DROP DATABASE IF EXISTS @') this.databases.delete(i0);
      else if (shape === 'DROP ROLE IF EXISTS @') {
        if ([...this.databases.values()].some((db) => db.owner === i0)) {
          return { code: 3, stdout: '', stderr: `ERROR:  role "${i0}" cannot be dropped because some objects depend on it\n` };
        }
        this.roles.delete(i0);
      } else throw new Error(`fake postgres does not know: ${shape}`);
    }
    return { code: 0, stdout: out.map((line) => `${line}\n`).join(''), stderr: '' };
  }
}

import { describe, expect, it } from 'vitest';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import type { ProvisionedSite } from '../../src/provisioning/step.js';
import { StepError } from '../../src/provisioning/steps/commands.js';
import { makeContext, runSteps } from './support/context.js';
import { FakeServer } from './support/fake-server.js';
import { HOSTILE_VALUES } from './support/hostile.js';
import { siteOf } from './support/sites.js';

/**
 * ARCHITECTURE §3: nothing from a request reaches a shell unquoted. Values either are validated
 * (names that become paths or identifiers) or travel only inside stdin — quoted SQL, a PHP literal
 * or base64 — and arrive unchanged.
 */
const withPassword = (site: ProvisionedSite, password: string): ProvisionedSite => ({
  ...site,
  database: site.database ? { ...site.database, password } : null,
});

function argvMentions(server: FakeServer, value: string): string[] {
  return server.calls
    .filter((c) => c.argv.some((arg) => arg.includes(value)) || Object.values(c.options.env ?? {}).some((v) => v.includes(value)))
    .map((c) => c.argv.join(' '));
}

describe.each(HOSTILE_VALUES)('the hostile password %j', (password) => {
  it('reaches MySQL only as a quoted literal on stdin, unchanged', async () => {
    const server = new FakeServer();
    const site = withPassword(siteOf('laravel'), password);
    await runSteps(makeContext(server.exec, site), recipeFor('laravel').create(site));
    expect(server.mysql.accounts.get('laravel_user@localhost')?.password).toBe(password);
    expect(server.mysql.accounts.get('laravel_user@127.0.0.1')?.password).toBe(password);
    expect(argvMentions(server, password)).toEqual([]);
    // Only the expected statements ran: the value did not add one.
    expect(server.mysql.statements.filter((s) => s.startsWith('DROP'))).toEqual([]);
  });

  it('reaches PostgreSQL only as a quoted literal on stdin, unchanged', async () => {
    const server = new FakeServer();
    const site = withPassword(siteOf('adonis'), password);
    await runSteps(makeContext(server.exec, site), recipeFor('adonis').create(site));
    expect(server.postgres.roles.get('adonis_user')).toBe(password);
    expect(argvMentions(server, password)).toEqual([]);
  });

  it('reaches wp-config.php and the WordPress installer without touching argv', async () => {
    const server = new FakeServer();
    const site = { ...withPassword(siteOf('wordpress'), password), secrets: { wpAdminPassword: password } };
    await runSteps(makeContext(server.exec, site), recipeFor('wordpress').create(site));
    expect(server.wordpressRuns[0]?.adminPassword).toBe(password);
    expect(server.mysql.accounts.get('wp_user@localhost')?.password).toBe(password);
    expect(argvMentions(server, password)).toEqual([]);
    const config = server.fs.read('/home/alice/wordpress.example.com/releases/initial/wp-config.php') ?? '';
    expect(config).toContain(`define('DB_PASSWORD', '${password.replace(/[\\']/g, (c) => `\\${c}`)}');`);
  });
});

describe('values that become names are validated before any command runs', () => {
  const cases: [string, Partial<ProvisionedSite>][] = [
    ['a domain with a shell substitution', { domain: '$(reboot).example.com' }],
    ['a domain with a path', { domain: '../../etc.example.com' }],
    ['a domain with a look-alike dot', { domain: 'example。com' }],
    ['a user name with a semicolon', { user: 'alice;id' }],
    ['a user name with a space', { user: 'alice bob' }],
    ['a web directory escaping the site', { options: { webDirectory: '../../etc' } }],
    ['a web directory with a newline', { options: { webDirectory: 'web\nroot /' } }],
  ];
  it.each(cases)('%s stops the step with a StepError', async (_label, override) => {
    const server = new FakeServer();
    const site = siteOf('static-html', override);
    const ctx = makeContext(server.exec, site);
    const steps = recipeFor('static-html').create(site);
    const error = await runSteps(ctx, steps).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StepError);
    for (const call of server.calls) {
      // `sh -c <script>`: the script is a constant of the code (values follow it as "$1"…), so
      // it may hold newlines and $(…) of its own; it must not hold the hostile value.
      const script = call.argv[0] === 'sh' && call.argv[1] === '-c' ? call.argv[2] : undefined;
      for (const value of Object.values({ ...override, ...(override.options ?? {}) }))
        if (typeof value === 'string') expect(script?.includes(value) ?? false).toBe(false);
      for (const arg of call.argv) {
        if (arg === script) continue;
        expect(arg.includes('\n') || arg.includes('$(') || arg.includes('..')).toBe(false);
      }
    }
  });

  it('a database name outside [A-Za-z0-9_$] never reaches SQL', async () => {
    const server = new FakeServer();
    const site = siteOf('laravel');
    const bad = { ...site, database: { ...site.database!, name: 'x`; DROP DATABASE mysql; --' } };
    await expect(runSteps(makeContext(server.exec, bad), recipeFor('laravel').create(bad))).rejects.toThrow(
      /must be 1-64 letters/,
    );
    expect(server.mysql.statements.some((s) => s.includes('DROP'))).toBe(false);
  });
});

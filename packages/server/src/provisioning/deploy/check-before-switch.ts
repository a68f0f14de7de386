import type { StepContext } from '../step.js';
import { run } from '../steps/commands.js';
import { NGINX_USER } from '../steps/site-layout.js';
import { asOwner } from '../steps/user-files.js';
import { vhostBackend } from '../steps/vhost-backend.js';
import { checkHealthPath } from './health-check.js';
import type { ReleasePaths } from './release-paths.js';

/**
 * Static and PHP releases asked before `current` points at them, so that a release whose health
 * path fails never serves a visitor (issue 11 item 8). Nothing listens for a release that is not
 * live, so the request nginx would make is made here: ASK_RELEASE, as nginx's user (www-data: it
 * reads what nginx reads, and may connect to the user's FPM socket — the site user may not), looks
 * the path up in the release's served directory with the vhost's rules (templates/nginx-vhost.ts:
 * `try_files $uri $uri/ …`, `index`, `disable_symlinks if_not_owner`), and for PHP sends it to the site's PHP-FPM pool over FastCGI
 * with the parameters nginx's fastcgi_params gives, the script under the release instead of
 * `current`. Perl (perl-base, which every Debian system has) speaks FastCGI in a few lines.
 * The check through nginx after the switch stays: it also sees what only the live site shows.
 */

/**
 * ASK_RELEASE: $1 static|php, $2 the release's served directory, $3 the path (decoded, no query),
 * $4 the query, $5 seconds, $6 the FPM socket, $7 the host, $8 on|off (TLS). Prints the status
 * (000: no answer) and a word on how it was found; exit 0 for 2xx/3xx, 1 otherwise.
 */
export const ASK_RELEASE = String.raw`use strict; use warnings; use IO::Socket::UNIX; use Socket;
my ($mode, $root, $path, $query, $secs, $sock, $host, $tls) = @ARGV;
sub done { my ($code, $how) = @_; print "$code $how\n"; exit($code =~ /^[23]/ ? 0 : 1); }
# As the vhost's disable_symlinks if_not_owner: below the root, a link leads only to its owner's files.
sub owned { my $p = $root; for my $c (grep { length } split m{/}, shift) { $p .= "/$c"; next unless -l $p; my $t = (stat $p)[4]; return 0 unless defined $t && $t == (lstat $p)[4]; } 1 }
sub file_at { my $rel = shift; owned($rel) && -f "$root$rel" }
sub dir_at { my $rel = shift; owned($rel) && -d "$root$rel" }
my $script;
if ($mode eq 'php' && $path =~ /\.php$/) {
  done('404', 'no such script') unless file_at($path);
  $script = $path;
} elsif (file_at($path)) {
  done('200', 'file');
} elsif (dir_at($path)) {
  (my $dir = $path) =~ s{/?$}{/};
  if ($mode eq 'php' && file_at($dir . 'index.php')) { $script = $dir . 'index.php'; }
  elsif (file_at($dir . 'index.html') || file_at($dir . 'index.htm')) { done('200', 'index'); }
  else { done('403', 'directory without an index'); }
} elsif ($mode ne 'php' && file_at("$path.html")) {
  done('200', 'file');
}
done('404', 'no such file') if $mode ne 'php';
$script //= '/index.php';
done('404', 'no front controller') unless file_at($script);
$SIG{ALRM} = sub { done('000', 'no answer in time') };
alarm $secs;
my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => $sock) or done('000', "no PHP-FPM at $sock");
binmode $s;
sub rec { my ($type, $c) = @_; my $pad = (8 - length($c) % 8) % 8; pack('CCnnCC', 1, $type, 1, length $c, $pad, 0) . $c . ("\0" x $pad) }
sub len { my $l = length shift; $l < 128 ? pack('C', $l) : pack('N', $l | 0x80000000) }
my $uri = $path . ($query eq '' ? '' : "?$query");
my %p = (GATEWAY_INTERFACE => 'CGI/1.1', SERVER_SOFTWARE => 'nginx', SERVER_PROTOCOL => 'HTTP/1.1',
  REQUEST_METHOD => 'GET', REQUEST_SCHEME => $tls eq 'on' ? 'https' : 'http', SERVER_PORT => $tls eq 'on' ? '443' : '80',
  SERVER_NAME => $host, HTTP_HOST => $host, SERVER_ADDR => '127.0.0.1', REMOTE_ADDR => '127.0.0.1', REMOTE_PORT => '0',
  REQUEST_URI => $uri, DOCUMENT_URI => $script, SCRIPT_NAME => $script, QUERY_STRING => $query,
  DOCUMENT_ROOT => $root, SCRIPT_FILENAME => "$root$script", REDIRECT_STATUS => '200', HTTP_USER_AGENT => 'Siteplane-health-check');
$p{HTTPS} = 'on' if $tls eq 'on';
my $params = join '', map { len($_) . len($p{$_}) . $_ . $p{$_} } sort keys %p;
print $s rec(1, pack('nCx5', 1, 0)) . rec(4, $params) . rec(4, '') . rec(5, '');
my ($out, $buf) = ('', '');
sub take { my $n = shift; my $got = ''; while (length $got < $n) { my $r = read($s, $buf, $n - length $got); done('000', 'PHP-FPM closed the connection') unless $r; $got .= $buf; } $got }
while (1) {
  my ($v, $type, $id, $clen, $plen) = unpack('CCnnC', take(8));
  my $c = $clen ? take($clen) : ''; take($plen) if $plen;
  if ($type == 6) { $out .= $c; } elsif ($type == 3) { last; }
}
my ($head) = split /\r?\n\r?\n/, $out, 2;
$head //= '';
my ($status) = $head =~ /^Status:\s*(\d{3})/mi;
$status //= $head =~ /^Location:/mi ? '302' : '200';
done($status, 'PHP-FPM');`;

export interface BeforeSwitch {
  /** False when the lookup or the pool answered other than 2xx/3xx, or the pool did not answer (000). */
  ok: boolean;
  /** What the log says. */
  said: string;
}

/**
 * Asks the release (not yet live) for the health path. A check that cannot be made (no perl, a
 * path this lookup cannot place) is not a failure: the check through nginx after the switch decides.
 */
export async function checkBeforeSwitch(
  ctx: StepContext,
  paths: ReleasePaths,
  health: { path: string; timeoutSeconds: number },
): Promise<BeforeSwitch> {
  const request = releaseRequest(health.path);
  const backend = vhostBackend(ctx.site);
  if (request === null || backend.kind === 'proxy') return { ok: true, said: `${health.path} is asked once live only` };
  const root = releaseRoot(paths, backend.root);
  const seconds = Math.max(1, Math.ceil(health.timeoutSeconds));
  const result = await run(
    ctx,
    [
      'perl',
      '-e',
      ASK_RELEASE,
      '--',
      backend.kind,
      root,
      request.path,
      request.query,
      String(seconds),
      backend.kind === 'php' ? backend.socket : '',
      paths.layout.domain,
      ctx.site.ssl.enabled ? 'on' : 'off',
    ],
    { ...asOwner(NGINX_USER), timeoutMs: (seconds + 15) * 1000 },
  );
  const answer = /^(\d{3}) (.+)$/.exec(result.stdout.trim());
  if (!answer || result.code > 1) {
    return { ok: true, said: `${paths.name} could not be asked before the switch (exit ${result.code}); it is asked once live` };
  }
  const [, status, how] = answer;
  return { ok: result.code === 0, said: `${health.path} answered ${status} in ${paths.name} before the switch (${how})` };
}

/** The health path as nginx's $uri (decoded, no query) and its query; null when it cannot be placed. */
export function releaseRequest(healthPath: string): { path: string; query: string } | null {
  const [raw = '', ...rest] = checkHealthPath(healthPath).split('?');
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    return null;
  }
  // nginx would normalise these; a lookup in the release must not leave it.
  if (path.includes('\0') || path.split('/').some((segment) => segment === '..' || segment === '.')) return null;
  return { path, query: rest.join('?') };
}

/** The vhost's root (under `current`) moved to the release: what nginx serves once it is live. */
export function releaseRoot(paths: ReleasePaths, liveRoot: string): string {
  const current = paths.layout.current;
  if (liveRoot !== current && !liveRoot.startsWith(`${current}/`)) {
    throw new Error(`the served directory ${liveRoot} is not under ${current}`);
  }
  return `${paths.dir}${liveRoot.slice(current.length)}`;
}

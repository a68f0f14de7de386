/**
 * A PHP script, run with php-cli as the site user, that performs WordPress's installation
 * (what wp-admin/install.php does on its form's POST) by calling wp_install(). The setup data
 * travels base64-encoded JSON inside the script, which goes on stdin: no value can end the
 * string it sits in, and none appears in argv or in an HTTP request. Exits 0 when WordPress is
 * installed afterwards (also when it already was), and prints what it did.
 */
export interface WpInstallInput {
  root: string;
  siteUrl: string;
  host: string;
  title: string;
  adminUser: string;
  adminEmail: string;
  adminPassword: string;
}

export function renderWpInstallScript(input: WpInstallInput): string {
  const data = Buffer.from(JSON.stringify(input), 'utf8').toString('base64');
  return `<?php
$data = json_decode(base64_decode('${data}'), true);
$_SERVER['HTTP_HOST'] = $data['host'];
$_SERVER['SERVER_NAME'] = $data['host'];
$_SERVER['REQUEST_URI'] = '/';
define('WP_INSTALLING', true);
require $data['root'] . '/wp-load.php';
// No mail server is assumed: skip the "new site" notification (a pluggable function).
function wp_new_blog_notification($blog_title, $blog_url, $user_id, $password) {}
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
if (is_blog_installed()) {
    echo "already installed\\n";
    exit(0);
}
// install.php passes the password slashed, as WordPress treats request data.
$result = wp_install($data['title'], $data['adminUser'], $data['adminEmail'], true, '', wp_slash($data['adminPassword']));
if (is_wp_error($result) || !is_blog_installed()) {
    fwrite(STDERR, "wp_install failed\\n");
    exit(1);
}
update_option('siteurl', $data['siteUrl']);
update_option('home', $data['siteUrl']);
echo "installed\\n";
`;
}

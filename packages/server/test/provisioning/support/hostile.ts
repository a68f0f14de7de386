/**
 * Values an attacker (or an unlucky user) might choose for a password or a title: SQL and shell
 * metacharacters, command substitution, quotes of every kind, backslashes, line breaks, and
 * Unicode look-alikes of quotes and backslashes (which some charset conversions turn into the
 * real thing).
 */
export const HOSTILE_VALUES: readonly string[] = [
  "'; DROP DATABASE mysql; --",
  "x' OR '1'='1",
  '"; DROP TABLE users; --',
  '$(touch /tmp/pwned)',
  '`id`',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text is the point
  '${HOME}',
  "\\'; SELECT 1; --",
  'back\\slash\\',
  'line\nbreak\r\nand\ttab',
  'semi;colon && rm -rf / | cat #',
  'ｓｅｌｅｃｔ＇＂＼ fullwidth',
  'ʼ modifier apostrophe ‘ ’ “ ” ′ ″',
  '¥ yen ₩ won',
  '\\N and \\0 and \\Z',
  "$$ dollar quoting $tag$ ; '$$",
  ':var :\'var\' :"var" \\! psql meta',
  '😀 emoji and 中文',
];

/**
 * RFC 8288 `Link` header parsing, enough for paging: GitHub, Gitea/Forgejo and GitLab all announce
 * the next page as `<https://…?page=2>; rel="next"`. Providers say to follow these links rather
 * than build page URLs, so the client does.
 */
export function linkRel(header: string | null | undefined, rel: string): string | null {
  if (!header) return null;
  const pattern = /<([^>]*)>((?:\s*;\s*[^;,]*)*)/g;
  for (const match of header.matchAll(pattern)) {
    const params = match[2] ?? '';
    const relParam = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(params);
    const rels = (relParam?.[1] ?? relParam?.[2] ?? '').toLowerCase().split(/\s+/);
    if (rels.includes(rel.toLowerCase())) return match[1] ?? null;
  }
  return null;
}

/** Just enough XML for the Route 53 stand-in: elements and text in, escaped elements out. */

export interface XmlNode {
  name: string;
  children: XmlNode[];
  text: string;
}

export function parseXml(xml: string): XmlNode {
  const root: XmlNode = { name: '#root', children: [], text: '' };
  const stack = [root];
  const body = xml.replace(/<\?[\s\S]*?\?>/g, '').replace(/<!--[\s\S]*?-->/g, '');
  for (const token of body.matchAll(/<(\/?)([A-Za-z_][\w.:-]*)[^>]*?(\/?)>|([^<]+)/g)) {
    const top = stack[stack.length - 1] as XmlNode;
    const [, closing, name, selfClosing, text] = token;
    if (text !== undefined) {
      top.text += decode(text);
    } else if (closing) {
      if (top.name !== name) throw new Error(`malformed XML: </${name}> closes <${top.name}>`);
      stack.pop();
    } else {
      const node: XmlNode = { name: name ?? '', children: [], text: '' };
      top.children.push(node);
      if (!selfClosing) stack.push(node);
    }
  }
  if (stack.length !== 1 || root.children.length !== 1) throw new Error('malformed XML document');
  return root.children[0] as XmlNode;
}

export const child = (node: XmlNode | undefined, name: string): XmlNode | undefined =>
  node?.children.find((c) => c.name === name);
export const children = (node: XmlNode | undefined, name: string): XmlNode[] =>
  node?.children.filter((c) => c.name === name) ?? [];
export const text = (node: XmlNode | undefined, name: string): string | undefined => child(node, name)?.text.trim();

export function escapeXml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c);
}

/** `<Name>…</Name>`; content given as strings is escaped, as arrays of elements it is not. */
export function el(name: string, content: string | number | boolean | string[]): string {
  const inner = Array.isArray(content) ? content.join('') : escapeXml(String(content));
  return `<${name}>${inner}</${name}>`;
}

function decode(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, entity: string) => {
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (entity.startsWith('#x') || entity.startsWith('#X')) return String.fromCodePoint(Number.parseInt(entity.slice(2), 16));
    if (entity.startsWith('#')) return String.fromCodePoint(Number(entity.slice(1)));
    return named[entity.toLowerCase()] ?? '';
  });
}

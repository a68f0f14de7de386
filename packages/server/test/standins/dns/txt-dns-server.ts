/**
 * A tiny authoritative DNS server on 127.0.0.1 (UDP, random port) answering TXT queries from memory,
 * for waitForTxt. Only what RFC 1035 needs for that: the header, one question, TXT answers as
 * length-prefixed strings, NXDOMAIN for names it does not know.
 */
import { createSocket } from 'node:dgram';

export interface TxtDnsServer {
  /** `127.0.0.1:<port>`, as DNS_RESOLVERS takes it. */
  address: string;
  /** Replaces the TXT values of a name; an empty list removes the name. */
  setTxt(name: string, values: string[]): void;
  close(): Promise<void>;
}

const TYPE_TXT = 16;
const CLASS_IN = 1;
const RCODE_NXDOMAIN = 3;
const RCODE_FORMERR = 1;

export async function startTxtDnsServer(): Promise<TxtDnsServer> {
  const names = new Map<string, string[]>();
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    const answer = respond(query, names);
    if (answer) socket.send(answer, peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    setTxt: (name, values) => {
      const key = name.toLowerCase().replace(/\.$/, '');
      if (values.length === 0) names.delete(key);
      else names.set(key, [...values]);
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

function respond(query: Buffer, names: ReadonlyMap<string, string[]>): Buffer | undefined {
  if (query.length < 12) return undefined;
  const question = readQuestion(query);
  const flags = 0x8000 | 0x0400 | (query.readUInt16BE(2) & 0x0100); // QR, AA, RD copied
  if (!question) return header(query.readUInt16BE(0), flags | RCODE_FORMERR, 0, 0);

  const values = names.get(question.name.toLowerCase());
  const answers = values && question.type === TYPE_TXT && question.class === CLASS_IN ? values.map(txtAnswer) : [];
  const rcode = values ? 0 : RCODE_NXDOMAIN;
  return Buffer.concat([header(query.readUInt16BE(0), flags | rcode, 1, answers.length), question.bytes, ...answers]);
}

function header(id: number, flags: number, questions: number, answers: number): Buffer {
  const out = Buffer.alloc(12);
  out.writeUInt16BE(id, 0);
  out.writeUInt16BE(flags, 2);
  out.writeUInt16BE(questions, 4);
  out.writeUInt16BE(answers, 6);
  return out; // no authority or additional records (a resolver's EDNS OPT is not echoed)
}

/** The first question: labels up to the root, then type and class; its bytes are echoed back. */
function readQuestion(query: Buffer): { name: string; type: number; class: number; bytes: Buffer } | undefined {
  if (query.readUInt16BE(4) < 1) return undefined;
  const labels: string[] = [];
  let offset = 12;
  for (;;) {
    const length = query[offset];
    if (length === undefined || length > 63) return undefined; // compression is not used in questions
    offset += 1;
    if (length === 0) break;
    labels.push(query.toString('latin1', offset, offset + length));
    offset += length;
  }
  if (offset + 4 > query.length) return undefined;
  return {
    name: labels.join('.'),
    type: query.readUInt16BE(offset),
    class: query.readUInt16BE(offset + 2),
    bytes: query.subarray(12, offset + 4),
  };
}

/** Answer with a pointer to the question's name (offset 12), TTL 0, the value in ≤ 255-byte strings. */
function txtAnswer(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  const strings: Buffer[] = [];
  for (let i = 0; i === 0 || i < bytes.length; i += 255) {
    const part = bytes.subarray(i, i + 255);
    strings.push(Buffer.from([part.length]), part);
  }
  const rdata = Buffer.concat(strings);
  const fixed = Buffer.alloc(12);
  fixed.writeUInt16BE(0xc00c, 0);
  fixed.writeUInt16BE(TYPE_TXT, 2);
  fixed.writeUInt16BE(CLASS_IN, 4);
  fixed.writeUInt32BE(0, 6);
  fixed.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([fixed, rdata]);
}

/**
 * What an authentic hook asks for, read from its headers and JSON body by one provider's reader.
 * Readers are pure: they see no database and no secret.
 */
export type HookProvider = 'github' | 'gitlab' | 'bitbucket' | 'gitea';

/** A branch that moved to a commit. */
export interface PushedBranch {
  branch: string;
  commit: string;
  message: string | null;
  author: string | null;
}

export type SkipReason = 'not_push' | 'branch_deleted' | 'not_branch';

export type PushReading =
  | { kind: 'ping'; event: string }
  /** Every branch the push moved (Bitbucket may report several in one delivery; the others one). */
  | { kind: 'push'; event: string; branches: PushedBranch[] }
  | { kind: 'skip'; event: string | null; reason: SkipReason; branch: string | null }
  | { kind: 'malformed'; event: string | null; detail: string };

export type Headers = Record<string, string | string[] | undefined>;

/** One value of a header (names in lowercase, as Node gives them); the first when repeated. */
export function header(headers: Headers, name: string): string | null {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? null : first;
}

/** The result of checking a request's signature or token against the site's secret. */
export type SignatureCheck = 'ok' | 'missing' | 'bad';

export interface HookReader {
  provider: HookProvider;
  /** The header that carries the provider's signature or token, for messages. */
  signatureHeader: string;
  verify(headers: Headers, body: Buffer, secret: string): SignatureCheck;
  /** The provider's id of this delivery, the same when it redelivers; null when it sends none. */
  deliveryId(headers: Headers): string | null;
  /** The event's name as the provider's header gives it. */
  event(headers: Headers): string | null;
  read(headers: Headers, payload: unknown): PushReading;
}

const ZERO_SHA = /^0+$/;
const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
/** Delivery ids are UUIDs or similar tokens; anything longer or odd is not kept. */
const DELIVERY_ID = /^[A-Za-z0-9{}._:-]{1,128}$/;

export function deliveryIdFrom(value: string | null): string | null {
  return value !== null && DELIVERY_ID.test(value) ? value : null;
}

export const isZeroSha = (value: unknown): boolean => typeof value === 'string' && ZERO_SHA.test(value);
export const isSha = (value: unknown): value is string => typeof value === 'string' && SHA.test(value);

/** The branch of a full ref (`refs/heads/main` → `main`), or null for tags and other refs. */
export function branchOfRef(ref: unknown): string | null {
  if (typeof ref !== 'string' || !ref.startsWith('refs/heads/')) return null;
  const name = ref.slice('refs/heads/'.length);
  return isBranchName(name) ? name : null;
}

/** What git accepts in a branch name, as far as a deploy needs to know: no spaces, control characters, `~^:?*[\`. */
export function isBranchName(name: string): boolean {
  return name.length > 0 && name.length <= 255 && !/[\s\x00-\x1f\x7f~^:?*[\\]/.test(name) && !name.startsWith('-');
}

/** A short text of the payload (commit message, author), or null; never more than a few KiB. */
export function shortText(value: unknown, max = 4096): string | null {
  if (typeof value !== 'string' || value.length === 0) return null;
  const clean = value.replace(/\x00/g, '');
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

export function obj(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

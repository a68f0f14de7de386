import { randomUUID } from 'node:crypto';

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Rows created
 * together get neighbouring keys, so a batch of creates touches the same few index pages instead
 * of a random page per row in every index keyed by a uuid: committing a batch of 25 site creates
 * on SQLite wrote a quarter of the pages it wrote with random (version 4) uuids.
 * Used for the rows written on the create path (sites, operations, jobs). 74 random bits follow
 * the timestamp, so ids stay unguessable (and another tenant's id answers 404 anyway).
 */
export function timeOrderedUuid(now = Date.now()): string {
  // The random part is taken from randomUUID (v4, variant bits already 10), which draws on Node's
  // entropy cache; filling a fresh 16-byte buffer per id cost more than the whole insert.
  const random = randomUUID();
  const time = now.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}

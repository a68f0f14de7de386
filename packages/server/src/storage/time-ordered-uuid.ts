import { randomUUID } from 'node:crypto';

/** The millisecond of the last id made here, and the counter within it (RFC 9562 §6.2, method 1). */
let lastMs = -1;
let counter = 0;
const COUNTER_MAX = 0xfff;
/** A `now` this little behind the last id's continues its count: its own overflow, a clock slewed back. */
const CONTINUE_WITHIN_MS = 1000;

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, a 12-bit counter, then random bits.
 * Rows created together get neighbouring keys, so a batch of creates touches the same few index
 * pages instead of a random page per row in every index keyed by a uuid: committing a batch of 25
 * site creates on SQLite wrote a quarter of the pages it wrote with random (version 4) uuids.
 * Lists page on (created_at, uuid), and created_at has millisecond precision: the counter keeps ids
 * made in one millisecond in the order they were made, so "the last 100 deliveries" or a list of
 * sites created together are in order (with random bits there, 105 hooks received within a few
 * milliseconds were kept and listed in a random order among each millisecond's). The counter
 * starts at a random value below 2,048 each new millisecond and, should it run out, the id takes
 * the next millisecond (the RFC's advice); a `now` up to a second behind the last id's (after that
 * overflow, a clock slewed back, a caller's date taken a moment earlier) continues after it. 62
 * random bits follow, so ids stay unguessable (and another tenant's id answers 404 anyway).
 */
export function timeOrderedUuid(now = Date.now()): string {
  // The random part is taken from randomUUID (v4, variant bits already 10), which draws on Node's
  // entropy cache; filling a fresh 16-byte buffer per id cost more than the whole insert.
  const random = randomUUID();
  let ms = now;
  if (ms > lastMs || ms <= lastMs - CONTINUE_WITHIN_MS) counter = startCounter(random);
  else if (counter < COUNTER_MAX) {
    ms = lastMs;
    counter += 1;
  } else {
    ms = lastMs + 1;
    counter = startCounter(random);
  }
  lastMs = ms;
  const time = ms.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${counter.toString(16).padStart(3, '0')}${random.slice(18)}`;
}

/** A random start below 0x800 (the v4 id's first random hex digits), leaving room to count up. */
function startCounter(random: string): number {
  return Number.parseInt(random.slice(15, 18), 16) & 0x7ff;
}

/** Time as a port, so renewals, leases and idempotency windows can be tested with a controlled clock. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

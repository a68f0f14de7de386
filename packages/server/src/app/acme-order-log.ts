/**
 * The outcomes of the last few ACME orders this process placed, for the health check: when every
 * one of the last `size` orders failed because the CA could not be reached, certificate work is
 * degraded (the CA is down, or egress to it is blocked), not merely one domain misconfigured.
 */
export class AcmeOrderLog {
  private readonly last: string[] = [];

  constructor(private readonly size = 3) {}

  record(outcome: string): void {
    this.last.push(outcome);
    if (this.last.length > this.size) this.last.shift();
  }

  get degraded(): boolean {
    return this.last.length === this.size && this.last.every((outcome) => outcome === 'ca_unreachable');
  }
}

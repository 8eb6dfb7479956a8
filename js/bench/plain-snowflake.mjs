// A plain JavaScript Snowflake generator, the way JS projects usually write
// one (BigInt shifts, Date.now(), spin when a millisecond's sequence is used
// up): the peer for mintid's Snowflake in bench/ids.mjs.
export class PlainSnowflake {
  constructor({ worker, epoch = 1735689600000n, workerBits = 10n, sequenceBits = 12n }) {
    this.worker = BigInt(worker);
    this.epoch = epoch;
    this.workerShift = sequenceBits;
    this.timeShift = workerBits + sequenceBits;
    this.maxSequence = (1n << sequenceBits) - 1n;
    this.lastMs = -1;
    this.sequence = 0n;
  }

  nextId() {
    let now = Date.now();
    if (now === this.lastMs) {
      this.sequence = (this.sequence + 1n) & this.maxSequence;
      if (this.sequence === 0n) {
        while (now <= this.lastMs) now = Date.now();
      }
    } else {
      this.sequence = 0n;
    }
    this.lastMs = now;
    return ((BigInt(now) - this.epoch) << this.timeShift) | (this.worker << this.workerShift) | this.sequence;
  }
}

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * A lowercase ULID from a time and a source of randomness in [0, 1). Pure, so a workflow can mint
 * an id from its own deterministic clock and random stream: the same id again on every replay.
 */
export function ulidFrom(timeMs: number, random: () => number): string {
  let time = '';
  let t = Math.floor(timeMs);
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  let rest = '';
  for (let i = 0; i < 16; i++) rest += CROCKFORD[Math.floor(random() * 32) % 32];
  return time + rest;
}

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

/**
 * A ULID derived from another and a salt: `base`'s time, and a body hashed from both (cyrb128
 * into sfc32). The same inputs give the same id on every run and every retry, so a parent can
 * name the operations of its steps from its own operation id and each step's subject.
 */
export function derivedUlid(base: string, salt: string): string {
  const text = `${base}/${salt}`;
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  let [a, b, c, d] = [(h1 ^ h2 ^ h3 ^ h4) >>> 0, (h2 ^ h1) >>> 0, (h3 ^ h1) >>> 0, (h4 ^ h1) >>> 0];
  const random = () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  return base.slice(0, 10) + ulidFrom(0, random).slice(10);
}

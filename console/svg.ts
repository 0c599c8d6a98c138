import type { CapacityBucket } from '../domain/capacity';

// What the console's drawings (capacity over time, the pool drain's timeline) share: colours that
// read on a light and a dark page (each also said in words beside it), and times in UTC.

/** Each capacity bucket's colour (the fleet overview's bars use the same). */
export const BUCKET_COLOURS: Record<CapacityBucket, string> = {
  schedulable: '#15803d',
  cordoned: '#b45309',
  unhealthy: '#c2410c',
  maintenance: '#1d4ed8',
  unreachable: '#b91c1c',
};

/** `14:05` of an ISO time, in UTC. */
export const utcTime = (iso: string) => iso.slice(11, 16);

/** `Dec 4` of an ISO time, in UTC. */
export const utcDay = (iso: string) =>
  new Date(iso).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

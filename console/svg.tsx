import type { CapacityBucket } from '../domain/capacity';
import type { PoolDrainSpanState } from '../domain/pool-drain-timeline';

// What the console's drawings (capacity over time, the pool drain's timeline) share: colours that
// read on a light and a dark page (each also said in words beside it), and times in UTC.

/**
 * The buckets in the order every drawing and table of capacity shows them (a stacked bar from the
 * bottom or the left): what can take work first, then what cannot.
 */
export const BUCKET_ORDER: readonly CapacityBucket[] = [
  'schedulable',
  'cordoned',
  'unhealthy',
  'maintenance',
  'unreachable',
];

/** Each capacity bucket's colour (the fleet overview's bars use the same). */
export const BUCKET_COLOURS: Record<CapacityBucket, string> = {
  schedulable: '#15803d',
  cordoned: '#b45309',
  // Purple, not another orange beside cordoned's amber: the two lie side by side in every bar.
  unhealthy: '#7e22ce',
  maintenance: '#1d4ed8',
  unreachable: '#b91c1c',
};

/** Each state of a pool drain's node over time. */
export const SPAN_COLOURS: Record<PoolDrainSpanState, string> = {
  waiting: '#9ca3af',
  draining: '#2563eb',
  'waiting-for-budget': '#b45309',
  'forced-release': '#7c3aed',
  drained: '#15803d',
  failed: '#b91c1c',
};

/** `14:05:09` of an ISO time, in UTC. */
export const utcClock = (iso: string) => iso.slice(11, 19);

/** `14:05` of an ISO time, in UTC. */
export const utcTime = (iso: string) => iso.slice(11, 16);

/** `Dec 4` of an ISO time, in UTC. */
export const utcDay = (iso: string) =>
  new Date(iso).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** A drawing's legend, in a row from `left`: each colour, with its words beside it. */
export function Legend(props: { left: number; items: { colour: string; words: string }[] }) {
  // Each item as wide as its words (about 6.5 units a character at the drawings' font size).
  const lefts = props.items.map((_, i) =>
    props.items.slice(0, i).reduce((x, item) => x + 16 + item.words.length * 6.5 + 18, props.left),
  );
  return (
    <g class="chart-legend">
      {props.items.map((item, i) => (
        <g>
          <rect x={lefts[i]} y={6} width={12} height={12} fill={item.colour} />
          <text x={lefts[i]! + 16} y={16} fill="currentColor">
            {item.words}
          </text>
        </g>
      ))}
    </g>
  );
}

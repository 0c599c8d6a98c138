import type { CapacityBucket } from '../domain/capacity';
import type { Capacity, PoolWithCapacity } from './context';
import { BUCKET_COLOURS, BUCKET_ORDER as STACK } from './svg';

/**
 * Capacity per pool: one stacked bar a pool, with its counts as a table (the text alternative).
 * Each bucket's colour (the pool's capacity chart's) is a presentation attribute of the SVG (no
 * inline style), and each is said in words beside it: the legend, each segment's title, and the
 * table's numbers.
 */
export function CapacityBars(props: { pools: PoolWithCapacity[] }) {
  if (props.pools.length === 0) return <p class="muted">No pools visible to this key.</p>;
  return (
    <>
      <Legend />
      <div class="table-box">
        <table class="capacity">
          <thead>
            <tr>
              <th scope="col">Pool</th>
              <th scope="col">Nodes per bucket</th>
              <th scope="col">Total</th>
              {STACK.map((bucket) => (
                <th scope="col">{bucket}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.pools.map(({ pool, capacity }) => (
              <tr>
                <th scope="row">
                  <a href={`/console/pools/${pool.id}`}>{pool.id}</a>
                </th>
                <td class="capacity-bar">
                  {capacity ? (
                    <Bar poolId={pool.id} total={capacity.total} buckets={capacity.buckets} />
                  ) : (
                    <span class="muted">capacity could not be read</span>
                  )}
                </td>
                <td>{capacity?.total ?? '?'}</td>
                {STACK.map((bucket) => (
                  <td>{capacity?.buckets[bucket] ?? '?'}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** One pool's bar, 100 wide in its own units: each bucket's share of the pool's nodes. */
function Bar(props: { poolId: string; total: number; buckets: Capacity['buckets'] }) {
  const { total } = props;
  const buckets = (bucket: CapacityBucket) => props.buckets[bucket] ?? 0;
  const words = STACK.map((bucket) => `${buckets(bucket)} ${bucket}`).join(', ');
  let x = 0;
  return (
    <svg
      role="img"
      class="capacity-bar"
      viewBox="0 0 100 10"
      preserveAspectRatio="none"
      width="100%"
      height="14"
    >
      <title>{`${props.poolId}: ${total} nodes — ${words}`}</title>
      {total === 0 ? (
        <rect x="0" y="0" width="100" height="10" fill="none" stroke="#9ca3af" stroke-dasharray="2 2" />
      ) : (
        STACK.filter((bucket) => buckets(bucket) > 0).map((bucket) => {
          const width = (buckets(bucket) / total) * 100;
          const segment = (
            <rect x={x.toFixed(3)} y="0" width={width.toFixed(3)} height="10" fill={BUCKET_COLOURS[bucket]}>
              <title>{`${buckets(bucket)} ${bucket}`}</title>
            </rect>
          );
          x += width;
          return segment;
        })
      )}
    </svg>
  );
}

/** Each bucket's colour with its name. */
function Legend() {
  return (
    <ul class="legend" aria-label="Capacity buckets">
      {STACK.map((bucket) => (
        <li>
          <svg width="12" height="12" viewBox="0 0 12 12" aria-hidden="true">
            <rect width="12" height="12" fill={BUCKET_COLOURS[bucket]} />
          </svg>
          {bucket}
        </li>
      ))}
    </ul>
  );
}

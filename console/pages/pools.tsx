import type { Schemas } from '@drydock/client';
import { Layout, Table } from '../layout';
import { LiveRegion } from '../live';
import type { PoolWithCapacity } from '../context';
import type { Flash, Session } from '../sessions';
import { When } from '../time';

type Pool = Schemas['Pool'];

export interface PoolsView {
  session: Session;
  flash?: Flash;
  pools: PoolWithCapacity[];
  /** The pools with a pool drain open now, by pool id: its operation. */
  draining: Map<string, Schemas['Operation']>;
}

/** Every pool the key sees (`GET /v1/pools`): what it is, whose, who else may use it, its size. */
export function PoolsPage(view: PoolsView) {
  return (
    <Layout title="Pools" session={view.session} flash={view.flash} watch={{}}>
      <h1>Pools</h1>
      <LiveRegion id="pools">
        <Table
          columns={['Pool', 'Kind', 'Site', 'Owner', 'Granted to', 'Nodes', 'Schedulable', 'Pool drain']}
          items={view.pools}
          row={({ pool, capacity }) => [
            <a href={`/console/pools/${pool.id}`}>{pool.id}</a>,
            pool.kind,
            pool.siteId,
            ownerOf(pool),
            pool.grants.join(', ') || 'nobody',
            capacity ? <a href={fleetOfPool(pool.id)}>{capacity.total}</a> : '?',
            capacity?.buckets.schedulable ?? '?',
            <Draining operation={view.draining.get(pool.id)} />,
          ]}
          empty="No pools visible to this key."
        />
      </LiveRegion>
    </Layout>
  );
}

/** Who a pool belongs to, in words. */
export function ownerOf(pool: Pool): string {
  return pool.tenantId ? `tenant ${pool.tenantId}` : 'operators (no tenant)';
}

/** The node list filtered to one pool's nodes. */
export function fleetOfPool(poolId: string): string {
  return `/console/nodes?${new URLSearchParams({ poolId })}`;
}

/** A pool's open pool drain, linked to the pool page that shows its progress. */
function Draining(props: { operation: Schemas['Operation'] | undefined }) {
  const op = props.operation;
  if (!op) return <span class="muted">—</span>;
  return (
    <a href={`/console/pools/${op.poolId}`}>
      running since <When at={op.createdAt} />
    </a>
  );
}

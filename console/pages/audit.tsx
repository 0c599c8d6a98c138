import type { Schemas } from '@drydock/client';
import { Layout, Table } from '../layout';
import type { Flash, Session } from '../sessions';
import { When } from '../time';

type AuditEntry = Schemas['AuditEntry'];

/** The `GET /v1/audit` filters the audit page offers, as its own query carries them. */
export const AUDIT_FILTERS = ['actor', 'type', 'since'] as const;
export type AuditFilters = Partial<Record<(typeof AUDIT_FILTERS)[number], string>>;

export interface AuditView {
  session: Session;
  flash?: Flash;
  filters: AuditFilters;
  /** The page of entries, or the API's refusal (a bad filter, or a caller that is no operator). */
  audit: { items: AuditEntry[]; nextCursor: string | null } | { problem: string };
}

/** Who did what, when and why: the audit, newest first, filtered and paged as the API pages it. */
export function AuditPage(view: AuditView) {
  const { audit, filters } = view;
  const filtered = Object.keys(filters).length > 0;
  return (
    <Layout title="Audit" session={view.session} flash={view.flash}>
      <h1>Audit</h1>
      <Filters filters={filters} />
      {'problem' in audit ? (
        <p class="flash error" role="alert">
          {audit.problem}
        </p>
      ) : (
        <>
          <Table
            columns={['When', 'Actor', 'What', 'On', 'Reason', 'Tenant', 'Data']}
            items={audit.items}
            row={(e) => [
              <When at={e.createdAt} />,
              e.actor,
              <>
                <code>{e.type}</code>
                {e.description && <div class="hint">{e.description}</div>}
              </>,
              <On entry={e} />,
              e.reason ?? '—',
              e.tenantId ?? '—',
              Object.keys(e.data).length > 0 ? <code>{JSON.stringify(e.data)}</code> : '—',
            ]}
            empty={
              filtered
                ? 'No entries match these filters: widen them (an earlier since, a shorter type prefix, another actor).'
                : 'No entries yet: every change to a node, pool, key or operation will be listed here.'
            }
          />
          {audit.nextCursor && (
            <p>
              <a href={`/console/audit?${new URLSearchParams({ ...filters, cursor: audit.nextCursor })}`}>
                Older entries
              </a>
            </p>
          )}
        </>
      )}
    </Layout>
  );
}

function Filters(props: { filters: AuditFilters }) {
  const { filters } = props;
  return (
    <form method="get" action="/console/audit" class="filters">
      <label>
        actor
        <input name="actor" value={filters.actor ?? ''} placeholder="alice@example.com or key:ops" />
      </label>
      <label>
        type
        <input name="type" value={filters.type ?? ''} placeholder="node.drain" />
      </label>
      <label>
        since
        <input name="since" value={filters.since ?? ''} placeholder="24h or 2026-12-05T03:00:00Z" />
      </label>
      <button type="submit">Filter</button>
    </form>
  );
}

/** What an entry acted on: its node (hostname, linked), its operation, its pool. */
function On(props: { entry: AuditEntry }) {
  const { nodeId, hostname, operationId, poolId } = props.entry;
  const parts = [
    nodeId && <a href={`/console/nodes/${nodeId}`}>{hostname ?? nodeId}</a>,
    operationId && (
      <a href={`/console/operations/${operationId}`}>
        <code>{operationId}</code>
      </a>
    ),
    !nodeId && poolId && <a href={`/console/pools/${poolId}`}>pool {poolId}</a>,
  ].filter(Boolean);
  return parts.length > 0 ? (
    <>
      {parts.map((p) => (
        <div>{p}</div>
      ))}
    </>
  ) : (
    <>—</>
  );
}

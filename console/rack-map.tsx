import type { Schemas } from '@drydock/client';
import { NODE_STATES, type NodeState } from '../domain/node-state';
import { STATE_GLYPHS } from './node-states';

type Summary = Schemas['NodeSummary'];
type Stub = Summary['groups'][number]['nodes'][number];

/** The label the rack map groups by unless the page's `groupBy` names another. */
export const DEFAULT_GROUP_BY = 'rack';

/**
 * The rack map: one group per value of the label `groupBy`, one tile per node coloured by its
 * state with the state's glyph, each tile a link to the node whose accessible name is its
 * hostname and state (and a title for the pointer). Each group says its counts in words.
 */
export function RackMap(props: { summary: Summary }) {
  const { groupBy, groups, labelKeys, total } = props.summary;
  return (
    <>
      <form method="get" action="/console" class="filters">
        <label>
          group by label
          <select name="groupBy">
            {[...new Set([groupBy, ...labelKeys])].map((key) => (
              <option value={key} selected={key === groupBy}>
                {key}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Group</button>
      </form>
      <TileLegend />
      {total === 0 && <p class="muted">No nodes yet: a machine joins with a join token.</p>}
      {total > 0 && groups.every((group) => group.value === null) && (
        <p class="muted">
          No node carries the label <code>{groupBy}</code>: choose another label above, or label the nodes (
          <code>drydock nodes label</code>).
        </p>
      )}
      {groups.map((group) => (
        <section
          class="rack"
          aria-label={group.value === null ? `(no ${groupBy})` : `${groupBy} ${group.value}`}
        >
          <h3>{group.value === null ? `(no ${groupBy})` : `${groupBy} ${group.value}`}</h3>
          <p class="muted">{summary(group.nodes)}</p>
          <ul class="tiles">
            {group.nodes.map((node) => (
              <li>
                <Tile node={node} />
              </li>
            ))}
          </ul>
        </section>
      ))}
    </>
  );
}

function Tile(props: { node: Stub }) {
  const { node } = props;
  return (
    <a
      class={`tile state-${node.state}`}
      href={`/console/nodes/${node.id}`}
      aria-label={`${node.hostname}: ${node.state}`}
      title={`${node.hostname} — ${node.state}${node.poolId ? ` (${node.poolId})` : ''}`}
    >
      <span aria-hidden="true">{STATE_GLYPHS[node.state]}</span>
    </a>
  );
}

/** "8 nodes: 4 schedulable, 4 lost", states in the map's order. */
function summary(nodes: Stub[]): string {
  const counts = new Map<NodeState, number>();
  for (const node of nodes) counts.set(node.state, (counts.get(node.state) ?? 0) + 1);
  const parts = NODE_STATES.filter((state) => counts.has(state)).map(
    (state) => `${counts.get(state)} ${state}`,
  );
  return `${nodes.length} node${nodes.length === 1 ? '' : 's'}: ${parts.join(', ')}`;
}

function TileLegend() {
  return (
    <ul class="legend" aria-label="Tile states">
      {NODE_STATES.map((state) => (
        <li>
          <span class={`tile state-${state}`} aria-hidden="true">
            {STATE_GLYPHS[state]}
          </span>
          {state}
        </li>
      ))}
    </ul>
  );
}

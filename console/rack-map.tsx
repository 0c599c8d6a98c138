import type { Schemas } from '@drydock/client';
import { compare } from './node-sort';
import { TILE_STATES, tileState, type TileState } from './node-states';

type Node = Schemas['Node'];

/** The label the rack map groups by unless the page's `groupBy` names another. */
export const DEFAULT_GROUP_BY = 'rack';

export interface RackGroup {
  /** The label's value; null for the nodes without the label. */
  value: string | null;
  nodes: Node[];
}

/** The nodes grouped by their value of label `key`, values in order, the nodes without it last. */
export function rackGroups(nodes: Node[], key: string): RackGroup[] {
  const groups = new Map<string | null, Node[]>();
  for (const node of nodes) {
    const value = node.labels.find((label) => label.key === key)?.value ?? null;
    const group = groups.get(value);
    if (group) group.push(node);
    else groups.set(value, [node]);
  }
  return [...groups.entries()]
    .map(([value, members]) => ({
      value,
      nodes: members.sort((a, b) => compare(a.hostname, b.hostname)),
    }))
    .sort((a, b) => (a.value === null ? 1 : b.value === null ? -1 : compare(a.value, b.value)));
}

/**
 * The rack map: one group per value of the label `groupBy`, one tile per node coloured by its
 * state with the state's glyph, each tile a link to the node whose accessible name is its
 * hostname and state (and a title for the pointer). Each group says its counts in words.
 */
export function RackMap(props: { nodes: Node[]; groupBy: string; labelKeys: string[] }) {
  const { groupBy } = props;
  const groups = rackGroups(props.nodes, groupBy);
  return (
    <>
      <form method="get" action="/console" class="filters">
        <label>
          group by label
          <select name="groupBy">
            {[...new Set([groupBy, ...props.labelKeys])].map((key) => (
              <option value={key} selected={key === groupBy}>
                {key}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Group</button>
      </form>
      <TileLegend />
      {props.nodes.length === 0 && <p class="muted">No nodes yet: a machine joins with a join token.</p>}
      {props.nodes.length > 0 && groups.every((group) => group.value === null) && (
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

function Tile(props: { node: Node }) {
  const { node } = props;
  const state = tileState(node);
  return (
    <a
      class={`tile state-${state}`}
      href={`/console/nodes/${node.id}`}
      aria-label={`${node.hostname}: ${state}`}
      title={`${node.hostname} — ${state}${node.poolId ? ` (${node.poolId})` : ''}`}
    >
      <span aria-hidden="true">{TILE_STATES[state]}</span>
    </a>
  );
}

/** "8 nodes: 4 schedulable, 4 lost", states in the map's order. */
function summary(nodes: Node[]): string {
  const counts = new Map<TileState, number>();
  for (const node of nodes) {
    const state = tileState(node);
    counts.set(state, (counts.get(state) ?? 0) + 1);
  }
  const parts = (Object.keys(TILE_STATES) as TileState[])
    .filter((state) => counts.has(state))
    .map((state) => `${counts.get(state)} ${state}`);
  return `${nodes.length} node${nodes.length === 1 ? '' : 's'}: ${parts.join(', ')}`;
}

function TileLegend() {
  return (
    <ul class="legend" aria-label="Tile states">
      {(Object.keys(TILE_STATES) as TileState[]).map((state) => (
        <li>
          <span class={`tile state-${state}`} aria-hidden="true">
            {TILE_STATES[state]}
          </span>
          {state}
        </li>
      ))}
    </ul>
  );
}

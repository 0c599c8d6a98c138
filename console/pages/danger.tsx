import type { Schemas } from '@drydock/client';
import { canMove, provisionRules } from '../../domain/provision';
import { Csrf, Layout, Table } from '../layout';
import type { Flash, Session } from '../sessions';
import { mayUse } from '../permissions';

type Node = Schemas['Node'];
export type Preview = Schemas['DecommissionPreview'];

/** Whether the key may see the danger zone of this node at all: operator keys, nodes that take controls. */
export function dangerZoneShown(node: Node, session: Session): boolean {
  return mayUse(node, session, 'operator');
}

/**
 * Why a DELETE would be refused now, in words; null when the API would accept it. Mirrors the
 * API's rule (a node in some states never, an adopted one only once cordoned, none while it holds
 * live allocations) so the page offers no button that can only fail.
 */
export function deletionBlocked(node: Node, liveAllocations: number): string | null {
  const rule = provisionRules(node.provisionState).delete;
  if (rule === 'no') return `a node in ${node.provisionState} cannot be deleted`;
  if (rule === 'cordoned' && !node.cordoned)
    return 'cordon first: an adopted node is deleted only once cordoned';
  if (liveAllocations > 0) {
    return `it still holds ${liveAllocations} live allocation${liveAllocations === 1 ? '' : 's'}: drain it first`;
  }
  return null;
}

/**
 * Whether purge is offered: not on a node that is decommissioning (its decommission is what
 * removes it; the API would start a purge racing it) or decommissioned.
 */
export function purgeOffered(node: Node): boolean {
  return node.provisionState !== 'decommissioning' && node.provisionState !== 'decommissioned';
}

/** The operator-only section at the bottom of the node page: decommission, purge, delete. */
export function DangerZone(props: { node: Node; session: Session; liveAllocations: number }) {
  const { node, session } = props;
  if (!dangerZoneShown(node, session)) return null;
  const base = `/console/nodes/${node.id}`;
  const deletion = deletionBlocked(node, props.liveAllocations);
  return (
    <section class="danger" aria-labelledby="danger-zone">
      <h2 id="danger-zone">Danger zone</h2>
      <div class="danger-item">
        <div>
          <strong>Decommission</strong>
          <p class="muted">
            For hardware that leaves the fleet for good: the preview lists what blocks it and what it will
            clean up; nothing changes until you confirm.
          </p>
        </div>
        {canMove(node.provisionState, 'decommission') ? (
          <a class="button" href={`${base}/decommission`}>
            Preview decommission
          </a>
        ) : (
          <span class="muted">not while the node is {node.provisionState}</span>
        )}
      </div>
      <div class="danger-item">
        <div>
          <strong>Purge</strong>
          <p class="muted">The agent removes Drydock from the machine. Cannot be undone.</p>
        </div>
        {purgeOffered(node) ? (
          <a class="button" href={`${base}/purge`}>
            Purge…
          </a>
        ) : (
          <span class="muted" data-purge-blocked="">
            Not while the node is {node.provisionState}: its decommission removes it.
          </span>
        )}
      </div>
      <div class="danger-item">
        <div>
          <strong>Delete</strong>
          <p class="muted">A tombstone: the node leaves the lists, its history stays.</p>
        </div>
        {deletion ? (
          <span class="muted" data-delete-blocked="">
            Not now: {deletion}.
          </span>
        ) : (
          <a class="button" href={`${base}/delete`}>
            Delete…
          </a>
        )}
      </div>
    </section>
  );
}

/** Where a blocker is shown: the node page's section that lists it (an artifact has none). */
function blockerLink(node: Node, blocker: Preview['blockers'][number]): string | undefined {
  const base = `/console/nodes/${node.id}`;
  switch (blocker.kind) {
    case 'allocation':
      return `${base}#section-allocations`;
    case 'operation':
      return `${base}#section-operations`;
    case 'liveness':
    case 'state':
      return `${base}#live-axes`;
    default:
      return undefined;
  }
}

/**
 * The decommission preview: blockers (each linked), what execute cleans up and what stays, and
 * when nothing blocks it the execute form: type the hostname, carrying the preview's generation
 * and digest.
 */
export function DecommissionPage(props: {
  session: Session;
  flash?: Flash;
  node: Node;
  preview: Preview;
  /** The Idempotency-Key this form's execute carries: a second submit of the same form is a replay. */
  idempotencyKey: string;
  /** What the person typed in a refused submit (a mistyped hostname), kept for the next one. */
  typed?: { operator: string; reason: string };
}) {
  const { node, preview, session } = props;
  const base = `/console/nodes/${node.id}`;
  return (
    <Layout title={`Decommission ${preview.hostname}`} session={session} flash={props.flash}>
      <h1>Decommission {preview.hostname}</h1>
      <p>
        <a href={base}>Back to {preview.hostname}</a>
      </p>
      <p class="muted">
        Preview at node version {preview.nodeGeneration}, dependencies <code>{preview.dependencyDigest}</code>
        .
      </p>
      <h2>Blockers</h2>
      <Table
        columns={['Kind', 'What', 'Why']}
        items={preview.blockers}
        row={(blocker) => {
          const href = blockerLink(node, blocker);
          return [
            blocker.kind,
            href ? (
              <a href={href}>
                <code>{blocker.id}</code>
              </a>
            ) : (
              <code>{blocker.id}</code>
            ),
            blocker.message,
          ];
        }}
        empty="Nothing blocks the decommission."
      />
      <h2>Cleaned up</h2>
      <Counts items={preview.cleanup} />
      <h2>Kept as history</h2>
      <Counts items={preview.retained} />
      {preview.ready ? (
        <form method="post" action={`${base}/decommission`} class="confirm">
          <Csrf session={session} />
          <input type="hidden" name="nodeGeneration" value={String(preview.nodeGeneration)} />
          <input type="hidden" name="dependencyDigest" value={preview.dependencyDigest} />
          <input type="hidden" name="idempotencyKey" value={props.idempotencyKey} />
          <p>
            There is no undo: a decommissioned node never takes work again, and a machine that comes back must
            join as a new node.
          </p>
          <TypeHostname hostname={preview.hostname} name="confirm" />
          <label>
            Change owner
            <input
              name="operator"
              value={props.typed?.operator || `key:${session.caller.name}`}
              required
              maxlength={128}
            />
          </label>
          <label>
            Reason
            <input
              name="reason"
              value={props.typed?.reason}
              required
              maxlength={256}
              placeholder="e.g. end of life"
            />
          </label>
          <button type="submit" class="danger">
            Decommission {preview.hostname}
          </button>
        </form>
      ) : (
        <p class="problem">Resolve the blockers above, then preview again.</p>
      )}
    </Layout>
  );
}

function Counts(props: { items: { kind: string; count: number }[] }) {
  return (
    <ul class="counts">
      {props.items.map((item) => (
        <li>
          {item.kind}: <strong>{item.count}</strong>
        </li>
      ))}
    </ul>
  );
}

/** The field a risky form asks the node's hostname in, typed again by hand (never filled in). */
export function TypeHostname(props: { hostname: string; name: string }) {
  return (
    <label>
      <span>
        Type the hostname <code>{props.hostname}</code> to confirm
      </span>
      <input name={props.name} required autocomplete="off" maxlength={256} />
    </label>
  );
}

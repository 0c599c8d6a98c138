import type { Schemas } from '@drydock/client';
import type { Child } from 'hono/jsx';
import { NODE_UNREACHABLE } from '../../domain/liveness';
import { isDraining, QUARANTINED } from '../../domain/node';
import { TAINT_PREFIX } from '../../domain/taints';
import { canMove } from '../../domain/provision';
import {
  AccessBadge,
  Badge,
  ConditionBadge,
  CordonBadge,
  DrainingBadge,
  LivenessBadge,
  MaintenanceBadge,
  StatusBadge,
} from '../badge';
import { Csrf, Layout, Table } from '../layout';
import { NodeCommandsSection, type NodeActions, type NodeCommands } from './commands';
import { DangerZone, dangerZoneShown } from './danger';
import { AllocationTable } from './node-actions';
import { MaintenanceTimeline, stepsOfMaintenance } from './maintenance-timeline';
import { Schedulers } from './node-schedulers';
import { NodeSshSection, type NodeSshCertificates } from './node-ssh';
import { LiveRegion } from '../live';
import { Progress } from '../progress';
import type { Flash, Session } from '../sessions';
import { When } from '../time';
import { mayUse, refusalOf } from '../permissions';

type Node = Schemas['Node'];

export interface NodeView {
  session: Session;
  flash?: Flash;
  node: Node;
  allocations: Schemas['Allocation'][];
  /**
   * Its operations, newest first: the open ones as `GET /v1/operations/{id}` reads them (with
   * their progress), and its latest finished ones as they ended.
   */
  operations: Schemas['Operation'][];
  /** More of its operations ended before those listed. */
  moreOperations?: boolean;
  /** Its latest `allocation.force-released` events: each names the operation that released it. */
  forceReleased?: Schemas['Event'][];
  /** Its latest maintenance, running or ended, with its progress; undefined when it never had one. */
  maintenance?: Schemas['Operation'];
  commands: NodeCommands;
  actions: NodeActions;
  sshCertificates: NodeSshCertificates;
  events: { items: Schemas['Event'][]; nextCursor: string | null; type?: string };
  /** Opens a workflow in the Temporal UI; undefined when no UI is configured. */
  workflowUrl?: (workflowId: string) => string;
}

/**
 * A node's page: a header (its name, its state as badges, the one or two actions its state
 * suggests and the menu of every other), then its sections, each reached from the section nav:
 * overview, operations, events, labels and taints, commands, danger zone.
 */
export function NodePage(view: NodeView) {
  const { node, session } = view;
  const open = view.operations.some(isOpen);
  return (
    <Layout title={node.hostname} session={session} flash={view.flash} watch={{ nodeId: node.id }}>
      <div class="node-head">
        <h1>
          {node.hostname} <span class="muted">{node.displayName ?? ''}</span>
        </h1>
        {/* Its forms carry the node's version: live, so a change sent after an update is not stale. */}
        <LiveRegion id="controls">
          <Badges node={node} />
          <Actions node={node} session={session} operations={view.operations} />
        </LiveRegion>
      </div>
      <LiveRegion id="summary">
        <p class="muted node-ids">
          <code>{node.id}</code> · pool{' '}
          {node.poolId ? <a href={`/console/pools/${node.poolId}`}>{node.poolId}</a> : '—'} · tenant{' '}
          {node.tenantId ?? '—'} · site {node.siteId ?? '—'} · version {node.version}
        </p>
      </LiveRegion>
      <SectionNav danger={dangerZoneShown(node, session)} />
      <section id="overview" aria-labelledby="overview-heading" class="node-section">
        <h2 id="overview-heading">Overview</h2>
        <LiveRegion id="axes">
          <Forgotten node={node} />
          <Quarantine node={node} />
          <Axes node={node} />
        </LiveRegion>
        <h3>Conditions</h3>
        <LiveRegion id="conditions">
          <Conditions node={node} session={session} />
        </LiveRegion>
        <h3 id="section-allocations">Live allocations</h3>
        <LiveRegion id="allocations">
          <AllocationTable allocations={view.allocations} />
        </LiveRegion>
        <h3>Schedulers</h3>
        <LiveRegion id="schedulers">
          <Schedulers schedulers={node.schedulers} allocations={view.allocations} />
        </LiveRegion>
      </section>
      <section id="operations" aria-labelledby="section-operations" class="node-section">
        <h2 id="section-operations">Operations</h2>
        <LiveRegion id="operations" busy={open}>
          <Operations
            operations={view.operations}
            forceReleased={view.forceReleased ?? []}
            more={view.moreOperations ?? false}
            workflowUrl={view.workflowUrl}
          />
        </LiveRegion>
        <h3 id="section-maintenance">Maintenance</h3>
        <LiveRegion id="maintenance" busy={isOpen(view.maintenance)}>
          <Maintenance operation={view.maintenance} />
        </LiveRegion>
      </section>
      <section id="events" aria-labelledby="events-heading" class="node-section">
        <h2 id="events-heading">Events, newest first</h2>
        <LiveRegion id="events">
          <Events node={node} events={view.events} />
        </LiveRegion>
      </section>
      <section id="labels" aria-labelledby="labels-heading" class="node-section">
        <h2 id="labels-heading">Labels and taints</h2>
        <h3>Labels</h3>
        <LiveRegion id="labels">
          <Labels node={node} session={session} />
        </LiveRegion>
        <h3>Taints</h3>
        <LiveRegion id="taints">
          <Taints node={node} session={session} />
        </LiveRegion>
      </section>
      <section id="commands" aria-labelledby="section-commands" class="node-section">
        <h2 id="section-commands">Commands and their output</h2>
        <LiveRegion id="commands">
          <NodeCommandsSection
            node={node}
            session={session}
            actions={view.actions}
            commands={view.commands}
          />
        </LiveRegion>
        <h3 id="section-ssh">Break-glass SSH certificates</h3>
        <LiveRegion id="ssh">
          <NodeSshSection node={node} session={session} certificates={view.sshCertificates} />
        </LiveRegion>
      </section>
      <LiveRegion id="danger">
        <DangerZone node={node} session={session} liveAllocations={view.allocations.length} />
      </LiveRegion>
    </Layout>
  );
}

/** The page's sections, one link each: the headings below are where they land. */
function SectionNav(props: { danger: boolean }) {
  const sections: [string, string][] = [
    ['overview', 'Overview'],
    ['operations', 'Operations'],
    ['events', 'Events'],
    ['labels', 'Labels and taints'],
    ['commands', 'Commands'],
    ...(props.danger ? [['danger-zone', 'Danger zone'] as [string, string]] : []),
  ];
  return (
    <nav class="sections" aria-label="Sections of this page">
      <ul>
        {sections.map(([id, name]) => (
          <li>
            <a href={`#${id}`}>{name}</a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/**
 * A node the control plane forgot (purged: the agent wiped the machine; or deleted: a tombstone):
 * what its agent last said is history, not its state now.
 */
function Forgotten(props: { node: Node }) {
  const { node } = props;
  if (!node.deletedAt) return null;
  return (
    <div class="flash" role="status" data-forgotten={forgottenAs(node)}>
      <p>
        <strong>
          {forgottenAs(node) === 'purged' ? 'Purged' : 'Deleted'} <When at={node.deletedAt} />
        </strong>
        {forgottenAs(node) === 'purged'
          ? ': its agent removed Drydock from the machine and the control plane forgot the node. '
          : ': a tombstone; the control plane forgot the node. '}
        No agent calls in under this identity any more, so its connectivity and liveness are no longer known;
        its history (operations, events, allocations) stays below. A machine comes back only by joining as a
        new node.
      </p>
    </div>
  );
}

/** How a forgotten node went: purged (its purge forgot it), or deleted; null while it is known. */
function forgottenAs(node: Node): 'purged' | 'deleted' | null {
  if (!node.deletedAt) return null;
  return node.provisionState === 'purging' ? 'purged' : 'deleted';
}

/** A node whose identity two machines used: what happened and what to do, above everything else. */
function Quarantine(props: { node: Node }) {
  if (!props.node.noScheduleReasons.includes(QUARANTINED)) return null;
  return (
    <div class="flash error" role="alert" data-quarantined>
      <p>
        <strong>Quarantined: this node's identity was in use on two machines at once</strong> (a copied disk,
        image or identity file). Its credentials were revoked; neither machine can call in with it.
      </p>
      <ol>
        <li>
          Find the copy: the <code>security.node.duplicate-session</code> events below name both agent runs,
          and each machine's <code>drydock-agent</code> log names its own. Remove the copy's data directory.
        </li>
        <li>
          Join the real machine again as a new node: <code>drydock-agent join --reset --yes --token …</code>
        </li>
        <li>Delete this node once the new one is in service (Danger zone below).</li>
      </ol>
    </div>
  );
}

/** The node's state at a glance, under its name: liveness, and what keeps work off it. */
function Badges(props: { node: Node }) {
  const { node } = props;
  const forgotten = forgottenAs(node);
  if (forgotten) {
    return (
      <p class="badges" data-badges="">
        <Badge tone="idle" data="forgotten">
          {forgotten}
        </Badge>
      </p>
    );
  }
  return (
    <p class="badges" data-badges="">
      <LivenessBadge liveness={node.liveness} />
      {LEAVING.has(node.provisionState) && (
        <Badge tone="busy" data="provision">
          {node.provisionState}
        </Badge>
      )}
      {node.provisionState === 'pending' && (
        <Badge tone="idle" data="provision">
          pending approval
        </Badge>
      )}
      {node.access === 'blocked' && <AccessBadge access={node.access} />}
      {node.noScheduleReasons.includes(QUARANTINED) && (
        <Badge tone="bad" data="quarantined">
          quarantined
        </Badge>
      )}
      {node.cordoned && <CordonBadge cordoned />}
      {isDraining(node) && <DrainingBadge />}
      {node.maintenance && <MaintenanceBadge maintenance />}
    </p>
  );
}

function Axes(props: { node: Node }) {
  const { node } = props;
  const forgotten = forgottenAs(node);
  const axes: [string, Child][] = [
    ['state', forgotten ? `${node.provisionState} (${forgotten})` : node.provisionState],
    ['access', <AccessBadge access={node.access} />],
    ['cordon', <CordonBadge cordoned={node.cordoned} />],
    ['maintenance', <MaintenanceBadge maintenance={node.maintenance} />],
    ['NoSchedule', node.noScheduleReasons.join(', ') || 'none'],
    ['connectivity', forgotten ? 'not known (forgotten)' : node.connectivity],
    ['liveness', forgotten ? 'not known (forgotten)' : <LivenessBadge liveness={node.liveness} />],
    ['last seen', node.lastSeenAt ? <When at={node.lastSeenAt} /> : 'never (no heartbeat yet)'],
    [
      'booted',
      node.bootId ? (
        <>
          {node.bootedAt ? <When at={node.bootedAt} /> : 'at a time not said'} (boot {node.bootId})
        </>
      ) : (
        'not said yet'
      ),
    ],
  ];
  return (
    <div class="axes">
      {axes.map(([name, value]) => (
        <div class="axis" data-axis={name}>
          <span class="name">{name}</span>
          <span class="value">{value}</span>
        </div>
      ))}
    </div>
  );
}

/** The labels with their source; operator labels may be set and removed, the others are read-only. */
function Labels(props: { node: Node; session: Session }) {
  const { node, session } = props;
  const can = allowed(node, session);
  return (
    <>
      <Table
        columns={['Key', 'Value', 'Source', '']}
        items={node.labels}
        row={(label) => [
          <code>{label.key}</code>,
          label.value,
          label.source,
          can.update && label.source === 'operator' && (
            <ControlForm node={node} session={session} control="unlabel" button="Remove" reason={false}>
              <input type="hidden" name="key" value={label.key} />
            </ControlForm>
          ),
        ]}
        empty="No labels."
      />
      {can.update && (
        <div class="controls">
          <ControlForm node={node} session={session} control="label" button="Set label">
            <input name="key" placeholder="key" required maxlength={128} />
            <input name="value" placeholder="value" maxlength={256} />
          </ControlForm>
        </div>
      )}
    </>
  );
}

/**
 * The node's conditions; a true one (but the liveness sweep's `NodeUnreachable`, which a heartbeat
 * clears) may be cleared by hand, with a reason.
 */
function Conditions(props: { node: Node; session: Session }) {
  const { node, session } = props;
  const can = allowed(node, session);
  return (
    <Table
      columns={['Type', 'Status', 'Reason', 'Since', 'Source', '']}
      items={node.conditions}
      row={(condition) => [
        condition.type,
        <ConditionBadge status={condition.status} />,
        condition.reason ?? '—',
        <When at={condition.since} />,
        condition.source ?? 'agent',
        can.remediate && condition.status && condition.type !== NODE_UNREACHABLE && (
          <ControlForm node={node} session={session} control="clear-condition" button="Clear" reason={false}>
            <input type="hidden" name="condition" value={condition.type} />
            <input name="reason" placeholder="reason (required)" required maxlength={256} />
          </ControlForm>
        ),
      ]}
      empty="No conditions reported."
    />
  );
}

/** NoSchedule reasons that are taints (`taint:<key>`), as the API reports them. */
function Taints(props: { node: Node; session: Session }) {
  const { node, session } = props;
  const can = allowed(node, session);
  const taints = node.noScheduleReasons
    .filter((r) => r.startsWith(TAINT_PREFIX))
    .map((r) => r.slice(TAINT_PREFIX.length));
  return (
    <>
      {taints.length === 0 ? (
        <p class="muted">No taints.</p>
      ) : (
        <ul>
          {taints.map((taint) => (
            <li>
              <code>{taint}</code>{' '}
              {can.update && (
                <ControlForm node={node} session={session} control="untaint" button="Remove" reason={false}>
                  <input type="hidden" name="key" value={taint} />
                </ControlForm>
              )}
            </li>
          ))}
        </ul>
      )}
      {can.update && (
        <div class="controls">
          <ControlForm node={node} session={session} control="taint" button="Add taint">
            <input name="key" placeholder="taint key, e.g. rma-pending" required maxlength={128} />
          </ControlForm>
        </div>
      )}
    </>
  );
}

type ActionName = Schemas['Caller']['actions'][number];

/** Which controls this key may use on this node as it is now; none for a deleted or retired node. */
function allowed(node: Node, session: Session) {
  const may = (action: ActionName) => mayUse(node, session, action);
  return {
    refusal: refusalOf(node),
    cordon: may('compute:nodes:cordon'),
    drain: may('compute:nodes:drain'),
    block: may('compute:nodes:block'),
    update: may('compute:nodes:update'),
    provision: may('compute:nodes:provision'),
    revokeIdentity: may('compute:nodes:revoke-identity'),
    remediate: may('compute:nodes:remediate'),
    command: may('compute:nodes:command'),
  };
}

/** A POST form of one control: the CSRF token, the node version it was read at, an optional reason. */
function ControlForm(props: {
  node: Node;
  session: Session;
  control: string;
  button: string;
  reason?: boolean;
  children?: Child;
}) {
  return (
    <form method="post" action={`/console/nodes/${props.node.id}/${props.control}`} class="inline">
      <Csrf session={props.session} />
      <input type="hidden" name="version" value={String(props.node.version)} />
      {props.children}
      {props.reason !== false && <input name="reason" placeholder="reason (optional)" maxlength={256} />}
      <button type="submit">{props.button}</button>
    </form>
  );
}

/** Provision states of a node on its way out: no work-related control is offered any more. */
const LEAVING: ReadonlySet<string> = new Set(['purging', 'decommissioning', 'decommissioned']);

/** One entry of the Actions menu: a link to the control's page. */
interface Offer {
  control: string;
  label: string;
  /** What it does, in a few words. */
  hint: string;
}

/**
 * The controls this key may use on this node as it is now, each a link to its page (which says
 * what it does and asks for its reason). A node on its way out (purging, decommissioning) is
 * offered no cordon, drain, block, adoption, remediation or reboot.
 */
function offersOf(node: Node, session: Session): Offer[] {
  const can = allowed(node, session);
  if (can.refusal) return [];
  const leaving = LEAVING.has(node.provisionState);
  const offers: (Offer | false)[] = [
    mayUse(node, session, 'operator') &&
      node.provisionState === 'pending' && {
        control: 'approve',
        label: 'Approve…',
        hint: 'into the pool it asked for, or another',
      },
    mayUse(node, session, 'operator') &&
      node.provisionState === 'pending' && {
        control: 'reject',
        label: 'Reject…',
        hint: 'turn the machine away',
      },
    can.cordon &&
      !leaving &&
      (node.cordoned
        ? {
            control: 'uncordon',
            label: 'Uncordon…',
            hint: isDraining(node) ? 'back in placement; cancels its drain' : 'back in placement',
          }
        : { control: 'cordon', label: 'Cordon…', hint: 'no new work' }),
    can.drain &&
      !leaving &&
      !isDraining(node) && {
        control: 'drain',
        label: 'Drain…',
        hint: 'its work ends, or is released at a deadline',
      },
    can.block &&
      (node.access === 'blocked'
        ? { control: 'unblock', label: 'Unblock…', hint: 'let its agent back in' }
        : !leaving && { control: 'block', label: 'Block…', hint: 'cut its agent off' }),
    can.update &&
      node.maintenance && {
        control: 'clear-maintenance',
        label: 'Clear maintenance…',
        hint: 'out of maintenance',
      },
    can.provision &&
      (node.provisionState === 'adopting' || canMove(node.provisionState, 'readopt')) && {
        control: 'adopt',
        label: 'Adopt again…',
        hint: 'acceptance runs again',
      },
    can.remediate &&
      !leaving && { control: 'remediate', label: 'Remediate…', hint: "a condition's ladder of actions" },
    can.command &&
      node.provisionState === 'adopted' &&
      node.access !== 'blocked' && {
        control: 'reboot',
        label: 'Reboot…',
        hint: 'verified: a new boot, probes healthy',
      },
    can.revokeIdentity && {
      control: 'revoke-identity',
      label: 'Revoke identity…',
      hint: 'the machine must join again',
    },
  ];
  return offers.filter((offer): offer is Offer => offer !== false);
}

/**
 * The one or two controls the node's state calls for, first among its offers: a pending node's
 * approval, a blocked node's unblock, clearing maintenance, an uncordon, a remediation of a true
 * condition that none runs for.
 */
function suggestedOf(node: Node, offers: Offer[], operations: Schemas['Operation'][]): Offer[] {
  const offered = (control: string) => offers.find((offer) => offer.control === control);
  const remediating = operations.some((op) => op.kind === 'remediation' && isOpen(op));
  const faulty = node.conditions.some((c) => c.status && c.type !== NODE_UNREACHABLE);
  const wanted: (Offer | undefined | false)[] = [
    node.provisionState === 'pending' && offered('approve'),
    node.provisionState === 'pending' && offered('reject'),
    offered('unblock'),
    offered('clear-maintenance'),
    offered('uncordon'),
    faulty && !remediating && offered('remediate'),
  ];
  return wanted.filter((offer): offer is Offer => !!offer).slice(0, 2);
}

/** The header's actions: the suggested ones as buttons, every other in the Actions menu. */
function Actions(props: { node: Node; session: Session; operations: Schemas['Operation'][] }) {
  const { node, session } = props;
  const can = allowed(node, session);
  if (can.refusal) return <p class="muted">No controls: {can.refusal}.</p>;
  const offers = offersOf(node, session);
  const suggested = suggestedOf(node, offers, props.operations);
  const base = `/console/nodes/${node.id}`;
  return (
    <div class="node-actions">
      {suggested.map((offer) =>
        // Uncordon is undone as easily as done: one click, but not while it would cancel a drain.
        offer.control === 'uncordon' && !isDraining(node) ? (
          <ControlForm node={node} session={session} control="uncordon" button="Uncordon" reason={false} />
        ) : (
          <a class="button primary" href={`${base}/${offer.control}`} data-suggested={offer.control}>
            {offer.label}
          </a>
        ),
      )}
      <details class="menu">
        <summary>Actions</summary>
        <ul>
          {offers.map((offer) => (
            <li>
              <a href={`${base}/${offer.control}`} data-offer={offer.control}>
                {offer.label}
              </a>{' '}
              <span class="muted">{offer.hint}</span>
            </li>
          ))}
          {can.update && (
            <li>
              <a href="#labels">Labels and taints</a> <span class="muted">set and remove them below</span>
            </li>
          )}
          {can.command && (
            <li>
              <a href="#commands">Run a command</a> <span class="muted">its actions, below</span>
            </li>
          )}
          {dangerZoneShown(node, session) && (
            <li>
              <a href="#danger-zone">Decommission, purge, delete</a>{' '}
              <span class="muted">the danger zone</span>
            </li>
          )}
        </ul>
      </details>
    </div>
  );
}

/**
 * The node's operations, newest first, as a timeline: each with its status, who asked and why,
 * when it began and ended, its progress or how it ended (its error, who cancelled it, a
 * remediation's attempts), the allocations it released by force, and a link to its page (where a
 * running one is cancelled).
 */
function Operations(props: {
  operations: Schemas['Operation'][];
  forceReleased: Schemas['Event'][];
  more: boolean;
  workflowUrl?: (id: string) => string;
}) {
  const { workflowUrl } = props;
  if (props.operations.length === 0) return <p class="muted">No operations on this node yet.</p>;
  return (
    <>
      <ol class="op-timeline">
        {props.operations.map((op) => {
          const forced = props.forceReleased.filter((event) => event.operationId === op.id);
          return (
            <li class={`op-entry ${op.status}`} data-operation={op.id} data-status={op.status}>
              <p class="op-head">
                <strong>{op.kind}</strong> <StatusBadge status={op.status} />{' '}
                <a href={`/console/operations/${op.id}`}>
                  <code>{op.id}</code>
                </a>
                {isOpen(op) && <span class="muted"> · cancel it on its page</span>}
              </p>
              <p class="muted op-meta">
                asked by {op.actor} <When at={op.createdAt} />
                {op.reason ? ` · “${op.reason}”` : ''}
                {op.parentOperationId && (
                  <>
                    {' '}
                    · part of{' '}
                    <a href={`/console/operations/${op.parentOperationId}`}>
                      <code>{op.parentOperationId}</code>
                    </a>
                  </>
                )}
                {op.completedAt && (
                  <>
                    {' '}
                    · ended <When at={op.completedAt} />
                  </>
                )}
              </p>
              <Progress operation={op} />
              <Outcome operation={op} />
              {forced.length > 0 && (
                <div class="op-forced" data-force-released={String(forced.length)}>
                  <p>
                    Released by force: {forced.length} allocation{forced.length === 1 ? '' : 's'}
                  </p>
                  <ul>
                    {forced.map((event) => (
                      <li>
                        <code>{String(event.data.allocationId ?? '?')}</code> of {event.tenantId ?? '—'}{' '}
                        <When at={event.createdAt} /> by {event.actor}
                      </li>
                    ))}
                  </ul>
                </div>
              )}
              <p class="muted op-workflow">
                workflow{' '}
                {workflowUrl ? (
                  <a href={workflowUrl(op.workflowId)}>{op.workflowId}</a>
                ) : (
                  <code>{op.workflowId}</code>
                )}
              </p>
            </li>
          );
        })}
      </ol>
      {props.more && (
        <p class="muted">
          Its latest operations, newest first; older ones are in the{' '}
          <a href="/console/operations">operations list</a>.
        </p>
      )}
    </>
  );
}

interface Attempt {
  attempt: number;
  action: string;
  outcome: string | null;
  refuseReason?: string | null;
}

/** How a finished operation ended, beyond its progress: its error, its cancellation, its attempts. */
function Outcome(props: { operation: Schemas['Operation'] }) {
  const op = props.operation;
  if (isOpen(op)) return null;
  const error = op.error as { code?: unknown; reason?: unknown; message?: unknown; step?: unknown } | null;
  const recorded = (op.status === 'succeeded' ? op.result : op.error) as { attempts?: Attempt[] } | null;
  const attempts = op.kind === 'remediation' ? (recorded?.attempts ?? []) : [];
  const why = error ? String(error.reason ?? error.message ?? '') : '';
  return (
    <>
      {op.status === 'failed' && why && (
        <p class="op-result problem" data-result="failed">
          Failed{error?.step ? ` at ${String(error.step)}` : ''}: {why}
          {error?.code ? ` (${String(error.code)})` : ''}
        </p>
      )}
      {op.cancellation && (
        <p class="op-result" data-result="cancelled">
          Cancelled by {op.cancellation.by} <When at={op.cancellation.at} />
          {op.cancellation.reason ? `: “${op.cancellation.reason}”` : ''}
        </p>
      )}
      {attempts.length > 0 && (
        <ul class="op-attempts">
          {attempts.map((a) => (
            <li>
              attempt {a.attempt} {a.action}: {a.outcome ?? 'unfinished'}
              {a.refuseReason ? ` (${a.refuseReason})` : ''}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function Events(props: { node: Node; events: NodeView['events'] }) {
  const { node, events } = props;
  const base = `/console/nodes/${node.id}`;
  return (
    <>
      <form method="get" action={base} class="filters">
        <label>
          type prefix
          <input name="type" value={events.type ?? ''} placeholder="node." size={20} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <Table
        columns={['When', 'Type', 'Actor', 'Reason', 'Operation']}
        items={events.items}
        row={(event) => [
          <When at={event.createdAt} />,
          event.type,
          event.actor,
          event.reason ?? '—',
          event.operationId ? (
            <a href={`/console/operations/${event.operationId}`}>
              <code>{event.operationId}</code>
            </a>
          ) : (
            '—'
          ),
        ]}
        empty="No events."
      />
      {events.nextCursor && (
        <p>
          <a
            href={`${base}?${new URLSearchParams({ ...(events.type ? { type: events.type } : {}), cursor: events.nextCursor })}`}
          >
            Older events
          </a>
        </p>
      )}
    </>
  );
}

const isOpen = (op: Schemas['Operation'] | undefined) => op?.status === 'pending' || op?.status === 'running';

/** The node's latest maintenance: what it is at in words, and its steps as a timeline. */
function Maintenance(props: { operation?: Schemas['Operation'] }) {
  const op = props.operation;
  if (!op) return <p class="muted">No maintenance yet.</p>;
  return (
    <>
      <p>
        <a href={`/console/operations/${op.id}`}>
          <code>{op.id}</code>
        </a>{' '}
        <StatusBadge status={op.status} /> · asked by {op.actor} · <When at={op.createdAt} />
        {op.reason ? ` · ${op.reason}` : ''}
      </p>
      <Progress operation={op} />
      <MaintenanceTimeline rows={[{ steps: stepsOfMaintenance(op) }]} />
    </>
  );
}
